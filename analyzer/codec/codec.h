// Event-log codecs: which compression a file uses (by magic bytes first, extension second)
// and a streaming decoder for each. Spark's framings are not the standard ones for lz4 and
// snappy; see ../shared/reference/spark-facts.md section 5.3.
#pragma once

#include <cstdint>
#include <memory>
#include <string_view>

#include "common/input_stream.h"

namespace sparkprof::codec {

enum class Format {
  kPlain,          // JSON lines as written (no compression)
  kLz4Block,       // lz4-java LZ4BlockOutputStream ("LZ4Block" magic), XXH32 checksums
  kSnappyJava,     // snappy-java SnappyOutputStream (82 'SNAPPY' 00 header), big-endian chunk sizes
  kZstd,           // concatenated zstd frames (28 B5 2F FD)
  kLzf,            // compress-lzf chunks ('Z' 'V' type)
  kGzip,           // gzip members (1F 8B), possibly concatenated
  kZip,            // a zip archive (PK\3\4): not a codec, the source layer opens it
  kUnknownBinary,  // bytes that are neither JSON text nor a known magic
};

const char* FormatName(
    Format format);  // "plain", "lz4", "snappy", "zstd", "lzf", "gzip", "zip", "binary"

// The extension a log written in `format` carries (Spark's codec names; ".gz" as Databricks'
// delivery writes it): ".lz4", ".snappy", ".zstd", ".lzf", ".gz", ".zip"; "" for plain and binary.
const char* FormatExtension(Format format);

// How many leading bytes DetectFormat wants to see (fewer is fine for short files).
inline constexpr size_t kSniffBytes = 16;

// Decides from the first bytes; the file name (".lz4", ".zstd", ".inprogress", ...) only
// breaks ties, e.g. an empty file. Magic bytes win over a misleading extension.
Format DetectFormat(std::string_view head, std::string_view file_name);

struct DecoderLimits {
  // A block/chunk header that declares more than this is rejected as corrupt (decompression
  // bomb protection); Spark writes 32 KiB blocks. For zstd it bounds the
  // window a frame may ask for (rounded down to a power of two, at most 128 MiB).
  uint64_t max_block_bytes = 128ull << 20;  // Databricks writes zstd frames with 128 MiB windows
  // Total decompressed bytes served before the decoder stops with TooLarge.
  uint64_t max_output_bytes = UINT64_MAX;
};

// Wraps `compressed` in a decoder for `format`. kPlain returns `compressed` unchanged.
// kZip / kUnknownBinary are not codecs: returns Unsupported.
// Decoders never abort: corrupt input becomes an error Status from Read() whose message names
// the codec, the problem and the compressed byte offset; bytes served before it are valid.
// A stream that ends mid-block (an .inprogress log) is reported as "truncated" the same way.
Result<std::unique_ptr<InputStream>> MakeDecoder(Format format,
                                                 std::unique_ptr<InputStream> compressed,
                                                 const DecoderLimits& limits = {});

// Sniffs the first bytes of `raw`, then returns the decoded stream and the detected format.
// kZip and kUnknownBinary give Unsupported naming `file_name` (call DetectFormat first when a zip
// should be opened as an archive instead). Errors reading the first bytes are returned as they are.
struct DecodedStream {
  Format format;
  std::unique_ptr<InputStream> stream;
};
Result<DecodedStream> OpenDecoded(std::unique_ptr<InputStream> raw, std::string_view file_name,
                                  const DecoderLimits& limits = {});

}  // namespace sparkprof::codec
