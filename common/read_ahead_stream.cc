#include "common/read_ahead_stream.h"

#include <algorithm>
#include <condition_variable>
#include <cstring>
#include <mutex>
#include <new>
#include <system_error>
#include <thread>
#include <vector>

namespace sparkprof {

namespace {

class ReadAheadStream final : public InputStream {
 public:
  ReadAheadStream(InputStream& inner, size_t buffer_bytes, size_t buffers)
      : inner_(inner), slots_(std::max<size_t>(buffers, 2)) {
    for (Slot& slot : slots_) slot.bytes.resize(std::max<size_t>(buffer_bytes, 1));
    try {
      producer_ = std::thread([this] { Produce(); });
    } catch (const std::system_error&) {
      direct_ = true;  // no thread to be had: read in the caller's
    }
  }

  ~ReadAheadStream() override {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stopping_ = true;
    }
    changed_.notify_all();
    if (producer_.joinable()) producer_.join();
  }

  Result<size_t> Read(char* buffer, size_t size) override {
    if (direct_) {
      Result<size_t> got = inner_.Read(buffer, size);
      offset_ = inner_.input_offset();
      return got;
    }
    if (size == 0) return size_t{0};
    Slot& slot = slots_[consume_ % slots_.size()];
    if (!slot_ready_) {
      std::unique_lock<std::mutex> lock(mutex_);
      changed_.wait(lock, [&] { return filled_ > consume_; });
      slot_ready_ = true;
      served_ = 0;
    }
    offset_ = slot.input_offset;
    if (served_ == slot.size) {
      // The end or the error that followed the slot's bytes; it stays the answer.
      return slot.status.ok() ? Result<size_t>(size_t{0}) : Result<size_t>(slot.status);
    }
    const size_t n = std::min(size, slot.size - served_);
    std::memcpy(buffer, slot.bytes.data() + served_, n);
    served_ += n;
    if (served_ == slot.size && slot.status.ok() && !slot.last) {
      {
        std::lock_guard<std::mutex> lock(mutex_);
        ++consume_;
      }
      slot_ready_ = false;
      changed_.notify_all();
    }
    return n;
  }

  uint64_t input_offset() const override { return offset_; }

 private:
  struct Slot {
    std::vector<char> bytes;
    size_t size = 0;
    uint64_t input_offset = 0;
    Status status;      // an error after `size` bytes
    bool last = false;  // the stream ended (or failed) after this slot's bytes
  };

  // The producer thread: fills free slots in order until the inner stream ends or fails.
  void Produce() {
    for (size_t produce = 0;; ++produce) {
      {
        std::unique_lock<std::mutex> lock(mutex_);
        changed_.wait(lock, [&] { return stopping_ || produce - consume_ < slots_.size(); });
        if (stopping_) return;
      }
      Slot& slot = slots_[produce % slots_.size()];
      slot.size = 0;
      slot.status = Status::Ok();
      slot.last = false;
      // Fill the slot (decoders return a block at a time): fewer hand-offs per byte.
      while (slot.size < slot.bytes.size()) {
        Result<size_t> got = size_t{0};
        try {
          got = inner_.Read(slot.bytes.data() + slot.size, slot.bytes.size() - slot.size);
        } catch (const std::bad_alloc&) {
          got = Internal("out of memory while reading ahead");
        }
        if (!got.ok()) {
          slot.status = got.status();
          slot.last = true;
          break;
        }
        if (*got == 0) {
          slot.last = true;
          break;
        }
        slot.size += *got;
      }
      slot.input_offset = inner_.input_offset();
      {
        std::lock_guard<std::mutex> lock(mutex_);
        filled_ = produce + 1;
      }
      changed_.notify_all();
      if (slot.last) return;
    }
  }

  InputStream& inner_;
  std::vector<Slot> slots_;
  std::thread producer_;
  bool direct_ = false;
  std::mutex mutex_;
  std::condition_variable changed_;
  bool stopping_ = false;
  size_t filled_ = 0;   // slots [0, filled_) were produced (guarded by mutex_)
  size_t consume_ = 0;  // the slot being served (guarded by mutex_ for writes)
  // The consumer's own state.
  bool slot_ready_ = false;
  size_t served_ = 0;
  uint64_t offset_ = 0;
};

}  // namespace

std::unique_ptr<InputStream> MakeReadAheadStream(InputStream& inner, size_t buffer_bytes,
                                                 size_t buffers) {
  return std::make_unique<ReadAheadStream>(inner, buffer_bytes, buffers);
}

}  // namespace sparkprof
