"""Writing output files in directories other users can write to (a shared /tmp): a reader never
sees half a file, and nothing planted there (a symlink, a file of the same name) redirects the
write. The engine's rule (common/atomic_file.h), in Python: a temporary file created exclusively
under an unpredictable name next to the target (``O_CREAT | O_EXCL | O_NOFOLLOW``), renamed over
the target; ``rename`` replaces a symlink at the target itself, never the file it points to."""

from __future__ import annotations

import os
import stat
import tempfile
from pathlib import Path
from typing import IO

_MODE = 0o644


def _exclusive_temporary(path: Path) -> tuple[int, str]:
    try:
        # mkstemp opens with O_CREAT | O_EXCL | O_NOFOLLOW (mode 0600) under a random name.
        return tempfile.mkstemp(prefix=f"{path.name}.tmp.", dir=path.parent)
    except OSError as error:
        raise OSError(
            error.errno,
            f"cannot write {path}: cannot create a temporary file next to it: {error.strerror}",
        ) from error


def write_file_atomically(path: str | os.PathLike[str], text: str) -> None:
    """Writes ``text`` (UTF-8) to a new exclusive temporary next to ``path`` and renames it over
    ``path`` (mode 0644). Any failure removes the temporary and raises OSError naming ``path``."""
    target = Path(path)
    fd, temporary = _exclusive_temporary(target)
    try:
        os.fchmod(fd, _MODE)
        with os.fdopen(fd, "wb", closefd=True) as file:
            fd = -1
            file.write(text.encode("utf-8"))
        os.replace(temporary, target)
    except OSError as error:
        if fd >= 0:
            os.close(fd)
        Path(temporary).unlink(missing_ok=True)
        raise OSError(error.errno, f"cannot write {target}: {error.strerror or error}") from error


def open_replacing(path: str | os.PathLike[str]) -> IO[str]:
    """A new file at ``path`` for writing in pieces (a log grown line by line): created
    exclusively as a temporary and renamed over ``path`` at once, so it is visible while it is
    written and a symlink planted at ``path`` is replaced, never followed."""
    target = Path(path)
    fd, temporary = _exclusive_temporary(target)
    try:
        os.fchmod(fd, _MODE)
        os.replace(temporary, target)
    except OSError as error:
        os.close(fd)
        Path(temporary).unlink(missing_ok=True)
        raise OSError(error.errno, f"cannot write {target}: {error.strerror or error}") from error
    return os.fdopen(fd, "w", encoding="utf-8")


def usable_output_directory(path: str | os.PathLike[str]) -> Path:
    """Creates ``path`` (and its parents) if missing and accepts it for outputs unless another
    user could read or replace them there: it must belong to this user or root and not be
    writable by every user without the sticky bit (/tmp has it). OSError names what is wrong."""
    folder = Path(path)
    folder.mkdir(parents=True, exist_ok=True)
    info = folder.stat()  # symlinks followed: a user may point it anywhere of theirs
    if not stat.S_ISDIR(info.st_mode):
        raise NotADirectoryError(f"{folder} is not a directory")
    if info.st_uid not in (os.geteuid(), 0):
        raise PermissionError(
            f"{folder} belongs to another user (uid {info.st_uid}): outputs are not written "
            "where another user could read or replace them"
        )
    if info.st_mode & stat.S_IWOTH and not info.st_mode & stat.S_ISVTX:
        raise PermissionError(
            f"{folder} is writable by every user without the sticky bit: outputs are not "
            "written where another user could read or replace them"
        )
    return folder
