#include "common/read_ahead_stream.h"

#include <algorithm>
#include <condition_variable>
#include <cstring>
#include <mutex>
#include <new>
#include <optional>
#include <system_error>
#include <thread>
#include <utility>

#include "common/parallel.h"

namespace sparkprof {

namespace {

// Buffers handed out by NextChunk come back here when their last holder lets go (on whichever
// thread that is), to be filled again; beyond this many spare ones, they are freed.
constexpr size_t kMaxSpareBuffers = 8;

// The buffers of one stream. Shared with every buffer it handed out, so it outlives the stream
// when a consumer keeps a chunk longer.
class BufferPool {
 public:
  explicit BufferPool(size_t bytes) : bytes_(bytes) { free_.reserve(kMaxSpareBuffers); }

  // A buffer nobody else holds; back in the pool once every holder let go of it. The pool's
  // mutex orders the last holder's reads before the next writer's writes.
  static std::shared_ptr<std::vector<char>> Take(const std::shared_ptr<BufferPool>& pool) {
    std::unique_ptr<std::vector<char>> bytes;
    {
      std::lock_guard<std::mutex> lock(pool->mutex_);
      if (!pool->free_.empty()) {
        bytes = std::move(pool->free_.back());
        pool->free_.pop_back();
      }
    }
    if (!bytes) bytes = std::make_unique<std::vector<char>>(pool->bytes_);
    return {bytes.release(), [pool](std::vector<char>* returned) {
              std::unique_ptr<std::vector<char>> owned(returned);
              std::lock_guard<std::mutex> lock(pool->mutex_);
              // Never allocates (reserved): a deleter must not throw.
              if (pool->free_.size() < kMaxSpareBuffers) pool->free_.push_back(std::move(owned));
            }};
  }

 private:
  const size_t bytes_;
  std::mutex mutex_;
  std::vector<std::unique_ptr<std::vector<char>>> free_;
};

class ThreadedReadAheadStream final : public ReadAheadStream {
 public:
  ThreadedReadAheadStream(InputStream& inner, size_t buffer_bytes, size_t buffers,
                          bool apart_from_caller)
      : inner_(inner),
        buffer_bytes_(std::max<size_t>(buffer_bytes, 1)),
        slots_(std::max<size_t>(buffers, 2)),
        pool_(std::make_shared<BufferPool>(buffer_bytes_ + kReadAheadPaddingBytes)) {
    try {
      producer_ = std::thread([this] { Produce(); });
    } catch (const std::system_error&) {
      direct_ = true;  // no thread to be had: read in the caller's
    }
    if (!direct_ && apart_from_caller) {
      apart_.emplace(std::vector<pthread_t>{producer_.native_handle()});
    }
  }

  ~ThreadedReadAheadStream() override {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stopping_ = true;
    }
    changed_.notify_all();
    if (producer_.joinable()) producer_.join();
    apart_.reset();  // the caller's CPUs back
  }

  Result<size_t> Read(char* buffer, size_t size) override {
    if (direct_) {
      Result<size_t> got = inner_.Read(buffer, size);
      offset_ = inner_.input_offset();
      return got;
    }
    if (size == 0) return size_t{0};
    Slot& slot = WaitForSlot();
    if (served_ == slot.size) {
      // The end or the error that followed the slot's bytes; it stays the answer.
      return slot.status.ok() ? Result<size_t>(size_t{0}) : Result<size_t>(slot.status);
    }
    const size_t n = std::min(size, slot.size - served_);
    std::memcpy(buffer, slot.bytes->data() + served_, n);
    served_ += n;
    if (served_ == slot.size && !slot.last) NextSlot();
    return n;
  }

  ReadAheadChunk NextChunk() override {
    if (direct_) {
      if (!direct_done_) {
        Fill(direct_slot_);
        offset_ = direct_slot_.input_offset;
        direct_done_ = direct_slot_.last;
        if (direct_slot_.size > 0) {
          return {direct_slot_.bytes, direct_slot_.size, Status::Ok(), offset_};
        }
      }
      return {nullptr, 0, direct_slot_.status, offset_};
    }
    while (true) {
      Slot& slot = WaitForSlot();
      if (served_ < slot.size) {
        served_ = slot.size;
        return {slot.bytes, slot.size, Status::Ok(), offset_};
      }
      if (slot.last) return {nullptr, 0, slot.status, offset_};
      NextSlot();
    }
  }

  uint64_t input_offset() const override { return offset_; }

  bool SetIdleWork(std::function<bool()> help) override {
    if (direct_) return false;
    auto shared = help ? std::make_shared<const std::function<bool()>>(std::move(help)) : nullptr;
    {
      std::unique_lock<std::mutex> lock(mutex_);
      if (finished_ && shared != nullptr) return false;  // the thread is gone: nobody to help
      help_ = std::move(shared);
      // The producer holds its own reference to the previous work while calling it: wait.
      helped_.wait(lock, [&] { return !helping_; });
    }
    changed_.notify_all();  // a producer done reading waits for work or for none
    return true;
  }

  void WakeForIdleWork() override {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      woken_ = true;
    }
    changed_.notify_all();
  }

 private:
  using Buffer = std::shared_ptr<std::vector<char>>;
  struct Slot {
    Buffer bytes;
    size_t size = 0;
    uint64_t input_offset = 0;
    Status status;      // an error after `size` bytes
    bool last = false;  // the stream ended (or failed) after this slot's bytes
  };

  // Fills `slot` until it is full or the inner stream ends or fails (decoders return a block at
  // a time: fewer hand-offs per byte).
  void Fill(Slot& slot) {
    slot.size = 0;
    slot.status = Status::Ok();
    slot.last = false;
    try {
      slot.bytes.reset();  // back to the pool, unless a consumer still holds it
      slot.bytes = BufferPool::Take(pool_);
    } catch (const std::bad_alloc&) {
      slot.status = Internal("out of memory while reading ahead");
      slot.last = true;
      slot.input_offset = inner_.input_offset();
      return;
    }
    while (slot.size < buffer_bytes_) {
      Result<size_t> got = size_t{0};
      try {
        got = inner_.Read(slot.bytes->data() + slot.size, buffer_bytes_ - slot.size);
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
  }

  // The producer thread: fills free slots in order until the inner stream ends or fails; while
  // every slot is full, and after the end until told to stop, does the idle work it was given.
  void Produce() {
    for (size_t produce = 0;; ++produce) {
      {
        std::unique_lock<std::mutex> lock(mutex_);
        auto free_slot = [&] { return stopping_ || produce - consume_ < slots_.size(); };
        while (!free_slot()) {
          if (Help(lock)) continue;
          changed_.wait(lock, [&] { return free_slot() || (woken_ && help_ != nullptr); });
        }
        if (stopping_) return;
      }
      Slot& slot = slots_[produce % slots_.size()];
      Fill(slot);
      {
        std::lock_guard<std::mutex> lock(mutex_);
        filled_ = produce + 1;
      }
      changed_.notify_all();
      if (slot.last) break;
    }
    std::unique_lock<std::mutex> lock(mutex_);
    while (!stopping_ && help_ != nullptr) {
      if (Help(lock)) continue;
      changed_.wait(lock, [&] { return stopping_ || help_ == nullptr || woken_; });
    }
    finished_ = true;
  }

  // Calls the idle work once, if there is any, without holding `lock` meanwhile; whether it did
  // some.
  bool Help(std::unique_lock<std::mutex>& lock) {
    if (help_ == nullptr) return false;
    woken_ = false;  // a wake-up from here on is for work this call may not find
    std::shared_ptr<const std::function<bool()>> help = help_;
    helping_ = true;
    lock.unlock();
    const bool did = (*help)();
    help.reset();
    lock.lock();
    helping_ = false;
    helped_.notify_all();
    return did;
  }

  // The slot being served, once the producer filled it.
  Slot& WaitForSlot() {
    Slot& slot = slots_[consume_ % slots_.size()];
    if (!slot_ready_) {
      std::unique_lock<std::mutex> lock(mutex_);
      changed_.wait(lock, [&] { return filled_ > consume_; });
      slot_ready_ = true;
      served_ = 0;
    }
    offset_ = slot.input_offset;
    return slot;
  }

  // Every byte of the slot being served was served: the producer may fill it again.
  void NextSlot() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      ++consume_;
    }
    slot_ready_ = false;
    changed_.notify_all();
  }

  InputStream& inner_;
  const size_t buffer_bytes_;
  std::vector<Slot> slots_;
  std::shared_ptr<BufferPool> pool_;
  std::thread producer_;
  std::optional<ApartOnCpus> apart_;
  bool direct_ = false;
  Slot direct_slot_;  // the chunk read last when direct
  bool direct_done_ = false;
  std::mutex mutex_;
  std::condition_variable changed_;
  std::condition_variable helped_;  // a call of the idle work returned
  bool stopping_ = false;
  std::shared_ptr<const std::function<bool()>> help_;  // the idle work (guarded by mutex_)
  bool helping_ = false;   // the producer is calling it (guarded by mutex_)
  bool woken_ = false;     // WakeForIdleWork() since the producer last looked for work
  bool finished_ = false;  // the producer read to the end and stopped helping (guarded)
  size_t filled_ = 0;      // slots [0, filled_) were produced (guarded by mutex_)
  size_t consume_ = 0;     // the slot being served (guarded by mutex_ for writes)
  // The consumer's own state.
  bool slot_ready_ = false;
  size_t served_ = 0;
  uint64_t offset_ = 0;
};

}  // namespace

std::unique_ptr<ReadAheadStream> MakeReadAheadStream(InputStream& inner, size_t buffer_bytes,
                                                     size_t buffers, bool apart_from_caller) {
  return std::make_unique<ThreadedReadAheadStream>(inner, buffer_bytes, buffers, apart_from_caller);
}

}  // namespace sparkprof
