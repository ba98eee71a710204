// A pull-based byte stream: files, zip entries and decompressors all look like this, so the
// event-log reader can stack them (file -> zstd -> line splitter) without knowing which is which.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "common/status.h"

namespace sparkprof {

class InputStream {
 public:
  virtual ~InputStream() = default;

  // Reads up to `size` bytes into `buffer`. Returns 0 only at the clean end of the stream.
  // A corrupt or truncated input returns an error Status whose message names the byte offset
  // (in this stream's own input) where the problem was found; the bytes returned before that
  // error are valid. After an error, further calls keep returning an error.
  virtual Result<size_t> Read(char* buffer, size_t size) = 0;

  // Bytes consumed from the underlying (compressed) input so far; used in error messages.
  virtual uint64_t input_offset() const = 0;
};

// Reads a regular file from disk. Opening fails with NotFound / IoError naming the path, and
// with InvalidArgument for anything else (FIFO, socket, device: they can block forever or never
// end). Reads never block: a file without data (/proc/kmsg) gives IoError, not a hang.
Result<std::unique_ptr<InputStream>> OpenFileInputStream(const std::string& path);

// Serves bytes from memory (owned copy). Used by tests, fuzzers and zip entries held in memory.
std::unique_ptr<InputStream> MakeMemoryInputStream(std::string bytes);

// The first `size` bytes of `stream` (fewer when it is shorter): for sniffing magic bytes.
Result<std::string> ReadHead(InputStream& stream, size_t size);

// Appends the rest of `stream` to `out` while `out` stays within `limit` bytes: true at the
// stream's end, false as soon as it holds more (its caller names the limit), the read's error as
// it is. `reserve`: bytes to reserve first (at most `limit`), 0 for none.
Result<bool> ReadAllWithin(InputStream& stream, uint64_t limit, std::string& out,
                           uint64_t reserve = 0);

// Serves a prefix `head` first, then the rest of `rest`; lets a reader sniff magic bytes
// and then hand the full stream to the right decoder.
std::unique_ptr<InputStream> MakePrefixedInputStream(std::string head,
                                                     std::unique_ptr<InputStream> rest);

}  // namespace sparkprof
