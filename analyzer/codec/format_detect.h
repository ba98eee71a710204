// DetectFormat lives here (declared in codec.h); these are its parts, exposed for tests.
#pragma once

#include <optional>
#include <string_view>

#include "analyzer/codec/codec.h"

namespace sparkprof::codec {

// The codec named by a file's extension, after Spark's codecName(): strip ".compact", then
// ".inprogress", take the text after the last '.'. nullopt when the extension names none.
std::optional<Format> FormatFromFileName(std::string_view file_name);

// The format whose magic bytes `head` starts with, or nullopt.
std::optional<Format> FormatFromMagic(std::string_view head);

// True when `head` could be a prefix of `format`'s magic bytes (a file cut off early).
bool IsMagicPrefix(std::string_view head, Format format);

}  // namespace sparkprof::codec
