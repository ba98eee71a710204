// Writing output files in directories other users can write to (/tmp): a reader never sees half a
// file, and nothing planted there (a symlink, a file of the same name) can redirect the write.
#pragma once

#include <string>
#include <string_view>

#include "common/status.h"

namespace sparkprof {

// Writes `contents` to a new temporary file in `path`'s directory, created exclusively under an
// unpredictable name (mkostemp: O_CREAT|O_EXCL, so a symlink is never followed), then renames it
// over `path` (rename replaces a symlink at `path` itself, never its target). Mode 0644. Any
// failure (open, short write, close, rename) removes the temporary and is returned.
Status WriteFileAtomically(const std::string& path, std::string_view contents);

// Opens `path` for writing from its start (created 0644 or truncated) without following a
// symlink at `path` (O_NOFOLLOW): for files written in pieces. Returns the descriptor (-1 and
// `error` set on failure).
int OpenForWritingNoFollow(const std::string& path, std::string* error);

}  // namespace sparkprof
