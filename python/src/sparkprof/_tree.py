"""Where the engine's discovery lists folders and opens files: a local path, any fsspec URL,
or one file object. The native side (python/native/python_tree.h) calls ``list`` and ``open``;
it reads the opened objects with ``readinto`` straight into its own buffers.
"""

from __future__ import annotations

import io
import os
import stat
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import IO, Any, Protocol

# (name, path, kind, size_bytes, local_path, version); kind is "file", "directory" or "other";
# version tells two states of one file apart (modification time, ETag) for the collectors; the
# engine reads the first five.
TreeEntry = tuple[str, str, str, int, str, str]
# What a tree's open returns: anything with readinto (preferred: no copy) or read.
BinaryStream = IO[bytes] | io.RawIOBase | io.BufferedIOBase


class Tree(Protocol):
    def list(self, path: str) -> Iterable[TreeEntry]: ...

    def open(self, path: str) -> BinaryStream: ...


@dataclass(frozen=True)
class Root:
    """The starting point of a discovery, as the native ``discover`` takes it."""

    tree: Tree
    path: str
    name: str
    display_name: str
    kind: str
    size_bytes: int
    local_path: str


class LocalTree:
    """Files on this machine, named exactly as the native CLI names them."""

    def list(self, path: str) -> Iterator[TreeEntry]:
        with os.scandir(path) as entries:
            for entry in entries:
                child = os.path.join(path, entry.name)
                try:
                    status = os.stat(child)  # follows symbolic links, like the CLI
                except OSError:
                    yield (entry.name, child, "other", 0, child, "")
                    continue
                version = str(status.st_mtime_ns)
                if stat.S_ISDIR(status.st_mode):
                    yield (entry.name, child, "directory", 0, child, version)
                elif stat.S_ISREG(status.st_mode):
                    yield (entry.name, child, "file", status.st_size, child, version)
                else:
                    yield (entry.name, child, "other", 0, child, version)

    def open(self, path: str) -> BinaryStream:
        return open(path, "rb", buffering=0)  # readinto lands in the engine's buffer directly


def local_root(path: str) -> Root:
    status = os.stat(path)  # FileNotFoundError names the path
    name = os.path.basename(path)
    if stat.S_ISDIR(status.st_mode):
        if name in ("", ".", ".."):
            name = os.path.basename(os.path.realpath(path))
        return Root(LocalTree(), path, name, path, "directory", 0, path)
    if not stat.S_ISREG(status.st_mode):
        raise ValueError(f"{path} is neither a regular file nor a directory")
    return Root(LocalTree(), path, name, path, "file", status.st_size, path)


class FsspecTree:
    """Any fsspec filesystem (s3, gs, abfs, hdfs, http, memory, zip::, ...)."""

    def __init__(self, fs: Any) -> None:
        self.fs = fs

    def list(self, path: str) -> Iterator[TreeEntry]:
        for info in self.fs.ls(path, detail=True):
            child = str(info["name"]).rstrip("/")
            name = child.rsplit("/", 1)[-1]
            kind = info.get("type")
            if kind not in ("file", "directory"):
                kind = "other"
            yield (name, child, kind, int(info.get("size") or 0), "", _version(info))

    def open(self, path: str) -> BinaryStream:
        stream: BinaryStream = self.fs.open(path, "rb")
        return stream


def _version(info: dict[str, Any]) -> str:
    """What changes when an object is rewritten: its ETag (object stores), else its time."""
    for key in ("ETag", "etag", "md5Hash", "mtime", "LastModified", "last_modified", "updated"):
        value = info.get(key)
        if value:
            return str(value)
    return ""


def fsspec_root(url: str, storage_options: dict[str, Any]) -> Root:
    import fsspec

    fs, path = fsspec.core.url_to_fs(url, **storage_options)
    fs.invalidate_cache()  # fsspec reuses filesystems with their listings: read them afresh
    info = fs.info(path)  # FileNotFoundError when nothing is there
    name = path.rstrip("/").rsplit("/", 1)[-1]
    kind = "directory" if info.get("type") == "directory" else "file"
    return Root(FsspecTree(fs), path, name, url, kind, int(info.get("size") or 0), "")


class _SharedStream:
    """One caller-owned stream handed to the engine more than once.

    Discovery reads a file's first bytes to tell a zip from an event log and then reopens it to
    read the events; a stream that cannot seek (a socket, an HTTP body) replays the few bytes
    already read instead. Closing a handle never closes the caller's stream.
    """

    _HEAD_KEPT_BYTES = 64 * 1024

    def __init__(self, stream: BinaryStream) -> None:
        self._stream = stream
        self._head = bytearray()  # the bytes read through the first handle, while few
        self._consumed = 0  # bytes read from the stream in total
        self._opens = 0
        self._start: int | None = None
        try:
            if stream.seekable():
                self._start = stream.tell()
        except (OSError, AttributeError, ValueError):
            self._start = None

    def open(self) -> BinaryStream:
        self._opens += 1
        if self._opens == 1:
            return _Handle(self, replay=b"")
        if self._consumed == len(self._head):
            # Everything read so far was kept: the new handle replays it, then goes on.
            return _Handle(self, replay=bytes(self._head))
        if self._start is not None:
            self._stream.seek(self._start)
            self._consumed = 0
            self._head.clear()
            return _Handle(self, replay=b"")
        raise io.UnsupportedOperation(
            "the stream was read past its first bytes and cannot seek back; "
            "pass a path, a URL or a seekable file"
        )

    def read_into(self, buffer: memoryview) -> int:
        got = _readinto(self._stream, buffer)
        if self._consumed == len(self._head) and len(self._head) + got <= self._HEAD_KEPT_BYTES:
            self._head += buffer[:got]
        self._consumed += got
        return got


class _Handle(io.RawIOBase):
    def __init__(self, shared: _SharedStream, replay: bytes) -> None:
        super().__init__()
        self._shared = shared
        self._replay = memoryview(replay)

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        target = memoryview(buffer).cast("B")
        if len(self._replay):
            count = min(len(self._replay), len(target))
            target[:count] = self._replay[:count]
            self._replay = self._replay[count:]
            return count
        return self._shared.read_into(target)


def _readinto(stream: BinaryStream, buffer: memoryview) -> int:
    readinto = getattr(stream, "readinto", None)
    if readinto is not None:
        got = readinto(buffer)
        if got is None:
            raise BlockingIOError("the stream is non-blocking and had no data")
        return int(got)
    data = stream.read(len(buffer))
    buffer[: len(data)] = data
    return len(data)


class StreamTree:
    """One open binary file object (or a byte-chunk iterator) as a one-file tree."""

    def __init__(self, stream: BinaryStream) -> None:
        self._shared = _SharedStream(stream)

    def list(self, path: str) -> Iterator[TreeEntry]:
        return iter(())

    def open(self, path: str) -> BinaryStream:
        return self._shared.open()


class ChunkStream(io.RawIOBase):
    """A readable binary stream over an iterable of byte chunks (bytes, bytearray, memoryview):
    the way to feed bytes that arrive in pieces (an HTTP body, a queue) to ``sparkprof.analyze``.
    Holds one chunk at a time."""

    def __init__(self, chunks: Iterable[bytes]) -> None:
        super().__init__()
        self._chunks = iter(chunks)
        self._current = memoryview(b"")

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        target = memoryview(buffer).cast("B")
        while not len(self._current):
            chunk = next(self._chunks, None)
            if chunk is None:
                return 0
            self._current = memoryview(chunk).cast("B")
        count = min(len(self._current), len(target))
        target[:count] = self._current[:count]
        self._current = self._current[count:]
        return count


def stream_root(stream: BinaryStream, display_name: str) -> Root:
    size_bytes = 0
    try:
        size_bytes = os.fstat(stream.fileno()).st_size
    except (OSError, AttributeError, ValueError, io.UnsupportedOperation):
        size = getattr(stream, "size", None)  # fsspec files know theirs
        if isinstance(size, int):
            size_bytes = size
    name = display_name.rstrip("/").rsplit("/", 1)[-1]
    return Root(StreamTree(stream), display_name, name, display_name, "file", size_bytes, "")
