#include "analyzer/codec/encode.h"

#include "analyzer/codec/gzip_writer.h"
#include "analyzer/codec/lz4_block_writer.h"
#include "analyzer/codec/lzf_writer.h"
#include "analyzer/codec/snappy_java_writer.h"
#include "analyzer/codec/zstd_writer.h"

namespace sparkprof::codec {

Result<std::string> Encode(Format format, std::string_view data) {
  switch (format) {
    case Format::kPlain:
      return std::string(data);
    case Format::kLz4Block:
      return EncodeLz4Block(data);
    case Format::kSnappyJava:
      return EncodeSnappyJava(data);
    case Format::kZstd:
      return EncodeZstd(data);
    case Format::kLzf:
      return EncodeLzf(data);
    case Format::kGzip:
      return EncodeGzip(data);
    case Format::kZip:
    case Format::kUnknownBinary:
      break;
  }
  return Unsupported(std::string("no encoder for format ") + FormatName(format));
}

}  // namespace sparkprof::codec
