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

// Creates `directory` (and its parents) if missing and accepts it for this process's outputs
// unless another user could read or redirect them there: it (symlinks followed: a user may point
// it anywhere) must belong to this user or root and not be writable by every user without the
// sticky bit (/tmp has it); `directory` itself may be a symlink only when this user or root made
// it (one planted by another user is refused whatever it points to). Errors name the directory and
// what is wrong (e.g. the owner's uid).
Status UsableOutputDirectory(const std::string& directory);

// UsableOutputDirectory(parent), then creates `parent`/`name` (mode 0755) or accepts it if it
// exists as a real directory (not a symlink) owned by this user: one planted by someone else is
// refused. `name` is a single path component.
Status CreateOwnDirectory(const std::string& parent, const std::string& name);

}  // namespace sparkprof
