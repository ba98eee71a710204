// Reads another stream ahead on a thread of its own, so that producing the bytes (decompression,
// disk reads) overlaps with what the caller does with them (parsing). Bounded: at most
// `buffers` x `buffer_bytes` are read ahead. Serves exactly the inner stream's bytes, then its
// end or its error, in order; input_offset() is the inner stream's offset after the bytes served
// so far were read.
//
// The bytes come out either copied (Read) or as the buffers they were read into (NextChunk),
// which a consumer may keep -- a line splitter hands lines in them to parser threads -- while
// the stream reads on into other buffers.
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <vector>

#include "common/input_stream.h"

namespace sparkprof {

inline constexpr size_t kReadAheadBufferBytes = 256 << 10;
inline constexpr size_t kReadAheadBuffers = 3;
// Readable bytes after every chunk's end (a JSON parser's read-ahead: simdjson needs 64).
inline constexpr size_t kReadAheadPaddingBytes = 64;

// Bytes read ahead, handed over without a copy: [data(), data() + size) of `bytes`, followed by
// at least kReadAheadPaddingBytes readable bytes (of no particular value). The stream writes into
// the buffer again only once nobody else holds `bytes`.
struct ReadAheadChunk {
  std::shared_ptr<const std::vector<char>> bytes;
  size_t size = 0;            // 0: the stream ended (status ok) or failed (status)
  Status status;              // the error after the bytes served so far
  uint64_t input_offset = 0;  // the inner stream's offset after these bytes were read
};

class ReadAheadStream : public InputStream {
 public:
  // The next bytes Read() would serve, as the buffer they are in; then, for good, an empty
  // chunk with the end or the error. A stream is read with Read() or with NextChunk(), not both.
  virtual ReadAheadChunk NextChunk() = 0;

  // Work for the stream's thread while every buffer is full and it would wait for the consumer
  // (on two cores, a third thread doing that work would take its core from the reading, on the
  // critical path): `help` returns whether it did some (it is then called again) and must not
  // throw. Set to nullptr before what `help` uses goes away: returns once no call is running.
  // Whether the stream has a thread to help with (false when it reads directly, or its thread
  // read to the end and stopped before any work was given).
  virtual bool SetIdleWork(std::function<bool()> help) = 0;
  // Tells the stream's thread, if it waits, that `help` may have work now.
  virtual void WakeForIdleWork() = 0;
};

// `inner` must outlive the returned stream and is read only by its thread until the stream is
// destroyed (which stops and joins the thread). Where no thread can be started, the returned
// stream reads `inner` directly. With `apart_from_caller`, the stream's thread and the calling
// thread are kept on different CPUs while it lives (ApartOnCpus, common/parallel.h): then it
// must be destroyed on the thread that made it.
std::unique_ptr<ReadAheadStream> MakeReadAheadStream(InputStream& inner,
                                                     size_t buffer_bytes = kReadAheadBufferBytes,
                                                     size_t buffers = kReadAheadBuffers,
                                                     bool apart_from_caller = false);

}  // namespace sparkprof
