#include "analyzer/codec/format_detect.h"

#include <array>
#include <cctype>
#include <string>

#include "analyzer/codec/lz4_block_format.h"
#include "analyzer/codec/snappy_java_format.h"

namespace sparkprof::codec {
namespace {

struct Magic {
  Format format;
  std::string_view bytes;
};

// Magic numbers as they appear on disk. LZF's third byte (chunk type) and zstd skippable frames
// (50..5F 2A 4D 18) are checked separately because they are ranges.
constexpr std::array<Magic, 6> kMagics{{
    {Format::kLz4Block, lz4_block::kMagic},
    {Format::kSnappyJava, snappy_java::kMagic},
    {Format::kZstd, {"\x28\xB5\x2F\xFD", 4}},
    {Format::kGzip, {"\x1F\x8B", 2}},
    {Format::kZip, {"PK\x03\x04", 4}},
    {Format::kZip, {"PK\x05\x06", 4}},  // an empty archive
}};

bool StartsWith(std::string_view text, std::string_view prefix) {
  return text.substr(0, prefix.size()) == prefix;
}

bool IsZstdSkippableFrame(std::string_view head) {
  return head.size() >= 4 && (static_cast<unsigned char>(head[0]) & 0xF0) == 0x50 &&
         head.substr(1, 3) == std::string_view("\x2A\x4D\x18", 3);
}

bool IsLzfChunk(std::string_view head) {
  return head.size() >= 3 && head[0] == 'Z' && head[1] == 'V' && (head[2] == 0 || head[2] == 1);
}

bool IsTextByte(unsigned char byte) {
  return byte >= 0x20 || byte == '\t' || byte == '\n' || byte == '\r' || byte == '\f';
}

// Event logs are UTF-8 JSON lines; a text file that is not JSON still goes to the JSON reader,
// which reports its lines as bad, a better message than "unknown binary".
bool LooksLikeText(std::string_view head) {
  if (StartsWith(head, "\xEF\xBB\xBF")) head.remove_prefix(3);  // UTF-8 byte order mark
  for (char c : head) {
    if (!IsTextByte(static_cast<unsigned char>(c))) return false;
  }
  return true;
}

std::string_view StripSuffix(std::string_view name, std::string_view suffix) {
  if (name.size() >= suffix.size() && name.substr(name.size() - suffix.size()) == suffix) {
    name.remove_suffix(suffix.size());
  }
  return name;
}

}  // namespace

const char* FormatName(Format format) {
  switch (format) {
    case Format::kPlain:
      return "plain";
    case Format::kLz4Block:
      return "lz4";
    case Format::kSnappyJava:
      return "snappy";
    case Format::kZstd:
      return "zstd";
    case Format::kLzf:
      return "lzf";
    case Format::kGzip:
      return "gzip";
    case Format::kZip:
      return "zip";
    case Format::kUnknownBinary:
      return "binary";
  }
  return "binary";
}

const char* FormatExtension(Format format) {
  switch (format) {
    case Format::kLz4Block:
      return ".lz4";
    case Format::kSnappyJava:
      return ".snappy";
    case Format::kZstd:
      return ".zstd";
    case Format::kLzf:
      return ".lzf";
    case Format::kGzip:
      return ".gz";
    case Format::kZip:
      return ".zip";
    case Format::kPlain:
    case Format::kUnknownBinary:
      break;
  }
  return "";
}

std::optional<Format> FormatFromFileName(std::string_view file_name) {
  size_t slash = file_name.find_last_of("/!");
  if (slash != std::string_view::npos) file_name.remove_prefix(slash + 1);
  file_name = StripSuffix(StripSuffix(file_name, ".compact"), ".inprogress");
  size_t dot = file_name.rfind('.');
  if (dot == std::string_view::npos) return std::nullopt;
  std::string extension(file_name.substr(dot + 1));
  for (char& c : extension) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (extension == "lz4") return Format::kLz4Block;
  if (extension == "snappy") return Format::kSnappyJava;
  if (extension == "zstd" || extension == "zst") return Format::kZstd;
  if (extension == "lzf") return Format::kLzf;
  if (extension == "gz" || extension == "gzip") return Format::kGzip;
  if (extension == "zip") return Format::kZip;
  if (extension == "json") return Format::kPlain;
  return std::nullopt;
}

std::optional<Format> FormatFromMagic(std::string_view head) {
  for (const Magic& magic : kMagics) {
    if (StartsWith(head, magic.bytes)) return magic.format;
  }
  if (IsZstdSkippableFrame(head)) return Format::kZstd;
  if (IsLzfChunk(head)) return Format::kLzf;
  return std::nullopt;
}

bool IsMagicPrefix(std::string_view head, Format format) {
  if (head.empty()) return true;
  for (const Magic& magic : kMagics) {
    if (magic.format == format && head.size() < magic.bytes.size() &&
        StartsWith(magic.bytes, head)) {
      return true;
    }
  }
  if (format == Format::kLzf) return head.size() < 3 && StartsWith("ZV", head);
  return false;
}

Format DetectFormat(std::string_view head, std::string_view file_name) {
  if (std::optional<Format> by_magic = FormatFromMagic(head)) return *by_magic;
  std::optional<Format> by_name = FormatFromFileName(file_name);
  // A file too short to hold its magic (empty, or cut off) is what its name says.
  if (by_name && *by_name != Format::kPlain && IsMagicPrefix(head, *by_name)) return *by_name;
  if (LooksLikeText(head)) return Format::kPlain;
  return Format::kUnknownBinary;
}

}  // namespace sparkprof::codec
