#include "analyzer/codec/codec.h"

#include <string>

#include "analyzer/codec/gzip_stream.h"
#include "analyzer/codec/lz4_block_stream.h"
#include "analyzer/codec/lzf_stream.h"
#include "analyzer/codec/snappy_java_stream.h"
#include "analyzer/codec/zstd_stream.h"

namespace sparkprof::codec {

Result<std::unique_ptr<InputStream>> MakeDecoder(Format format,
                                                 std::unique_ptr<InputStream> compressed,
                                                 const DecoderLimits& limits) {
  if (compressed == nullptr) return InvalidArgument("MakeDecoder: no input stream");
  switch (format) {
    case Format::kPlain:
      return compressed;
    case Format::kLz4Block:
      return MakeLz4BlockDecoder(std::move(compressed), limits);
    case Format::kSnappyJava:
      return MakeSnappyJavaDecoder(std::move(compressed), limits);
    case Format::kZstd:
      return MakeZstdDecoder(std::move(compressed), limits);
    case Format::kLzf:
      return MakeLzfDecoder(std::move(compressed), limits);
    case Format::kGzip:
      return MakeGzipDecoder(std::move(compressed), limits);
    case Format::kZip:
      return Unsupported("a zip archive is not a compression codec; open it as an archive");
    case Format::kUnknownBinary:
      break;
  }
  return Unsupported(
      "binary data in no known event-log format (not JSON text, lz4, snappy, "
      "zstd, lzf, gzip or zip)");
}

Result<DecodedStream> OpenDecoded(std::unique_ptr<InputStream> raw, std::string_view file_name,
                                  const DecoderLimits& limits) {
  if (raw == nullptr) return InvalidArgument("OpenDecoded: no input stream");
  SPARKPROF_ASSIGN_OR_RETURN(std::string head, ReadHead(*raw, kSniffBytes));
  Format format = DetectFormat(head, file_name);
  auto decoder =
      MakeDecoder(format, MakePrefixedInputStream(std::move(head), std::move(raw)), limits);
  if (!decoder.ok()) {
    return Status(decoder.status().code(),
                  std::string(file_name) + ": " + decoder.status().message());
  }
  return DecodedStream{format, std::move(decoder).value()};
}

}  // namespace sparkprof::codec
