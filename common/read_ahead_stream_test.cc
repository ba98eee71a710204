#include "common/read_ahead_stream.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

namespace sparkprof {
namespace {

// Serves `bytes` a few at a time (like a decoder, block by block), then `error` if it is set.
class ChunkedStream final : public InputStream {
 public:
  ChunkedStream(std::string bytes, size_t chunk, Status error = Status::Ok())
      : bytes_(std::move(bytes)), chunk_(chunk), error_(std::move(error)) {}
  Result<size_t> Read(char* buffer, size_t size) override {
    if (at_ == bytes_.size()) {
      if (!error_.ok()) return error_;
      return size_t{0};
    }
    const size_t n = std::min({size, chunk_, bytes_.size() - at_});
    bytes_.copy(buffer, n, at_);
    at_ += n;
    return n;
  }
  uint64_t input_offset() const override { return at_ / 2; }  // as if compressed 2:1

 private:
  std::string bytes_;
  size_t chunk_;
  Status error_;
  size_t at_ = 0;
};

std::string Pattern(size_t size) {
  std::string bytes(size, '\0');
  for (size_t i = 0; i < size; ++i) bytes[i] = static_cast<char>('a' + (i * 7 + i / 251) % 26);
  return bytes;
}

// Reads everything in `read_size` pieces; returns the bytes and the final status.
std::string Drain(InputStream& stream, size_t read_size, Status* status) {
  std::string out;
  std::string buffer(read_size, '\0');
  while (true) {
    Result<size_t> got = stream.Read(buffer.data(), buffer.size());
    if (!got.ok()) {
      *status = got.status();
      return out;
    }
    if (*got == 0) return out;
    out.append(buffer.data(), *got);
  }
}

TEST(ReadAheadStreamTest, ServesTheInnerBytesInOrderWhateverTheSizes) {
  for (size_t size : {0, 1, 1000, 65536, 300'001}) {
    for (size_t chunk : {1, 7, 4096, 1 << 20}) {
      for (size_t read : {1, 13, 8192}) {
        if (size > 70'000 && (chunk < 4096 || read < 8192)) continue;  // keep it quick
        const std::string bytes = Pattern(size);
        ChunkedStream inner(bytes, chunk);
        auto ahead = MakeReadAheadStream(inner, /*buffer_bytes=*/4096, /*buffers=*/3);
        Status status;
        EXPECT_EQ(Drain(*ahead, read, &status), bytes) << size << " " << chunk << " " << read;
        EXPECT_TRUE(status.ok());
        EXPECT_EQ(ahead->input_offset(), size / 2);
        // The end stays the end.
        char c;
        Result<size_t> again = ahead->Read(&c, 1);
        ASSERT_TRUE(again.ok());
        EXPECT_EQ(*again, 0u);
      }
    }
  }
}

TEST(ReadAheadStreamTest, ServesTheBytesBeforeAnErrorThenTheErrorForGood) {
  const std::string bytes = Pattern(10'000);
  ChunkedStream inner(bytes, 999, Corrupt("bad block at byte 5000"));
  auto ahead = MakeReadAheadStream(inner, 4096, 2);
  Status status;
  EXPECT_EQ(Drain(*ahead, 3000, &status), bytes);
  EXPECT_EQ(status.code(), StatusCode::kCorrupt);
  EXPECT_EQ(status.message(), "bad block at byte 5000");
  char c;
  Result<size_t> again = ahead->Read(&c, 1);
  ASSERT_FALSE(again.ok());
  EXPECT_EQ(again.status().message(), "bad block at byte 5000");
}

TEST(ReadAheadStreamTest, StopsCleanlyWhenTheReaderGivesUpEarly) {
  const std::string bytes = Pattern(1 << 20);
  ChunkedStream inner(bytes, 512);
  {
    auto ahead = MakeReadAheadStream(inner, 1024, 2);
    char buffer[100];
    Result<size_t> got = ahead->Read(buffer, sizeof(buffer));
    ASSERT_TRUE(got.ok());
    EXPECT_EQ(std::string(buffer, *got), bytes.substr(0, *got));
  }  // destroyed with most of the stream unread: the thread stops
  SUCCEED();
}

// NextChunk hands over the buffers themselves: kept chunks stay as they were while the stream
// reads on (into other buffers), and released ones are filled again (memory stays bounded).
TEST(ReadAheadStreamTest, ChunksAreTheBuffersAndKeptOnesAreNotOverwritten) {
  const std::string bytes = Pattern(300'001);
  for (bool keep : {true, false}) {
    ChunkedStream inner(bytes, 1000, Corrupt("bad block"));
    auto ahead = MakeReadAheadStream(inner, 4096, 3);
    std::vector<ReadAheadChunk> kept;
    std::set<const char*> buffers;
    std::string served;
    while (true) {
      ReadAheadChunk chunk = ahead->NextChunk();
      if (chunk.size == 0) {
        EXPECT_EQ(chunk.status.message(), "bad block");
        EXPECT_EQ(ahead->NextChunk().status.message(), "bad block");  // for good
        break;
      }
      ASSERT_GE(chunk.bytes->size(), chunk.size + kReadAheadPaddingBytes);
      served.append(chunk.bytes->data(), chunk.size);
      buffers.insert(chunk.bytes->data());
      if (keep) kept.push_back(std::move(chunk));
    }
    EXPECT_EQ(served, bytes);
    std::string again;
    for (const ReadAheadChunk& chunk : kept) again.append(chunk.bytes->data(), chunk.size);
    if (keep) {
      EXPECT_EQ(again, bytes);  // nothing kept was written over
    } else {
      // Released chunks come back: a few buffers in turn instead of one per chunk.
      EXPECT_LE(buffers.size(), 12u) << "for " << bytes.size() / 4096 << " chunks";
    }
  }
}

// The stream's thread does the work it is given while every buffer is full and after the end,
// never on the caller's thread; a wake-up brings it back to work it had found none of; once the
// work is cleared, no call of it is running or starts.
TEST(ReadAheadStreamTest, IdleWorkRunsOnTheStreamsThreadWhileItWaitsUntilCleared) {
  const std::string bytes = Pattern(1 << 20);
  ChunkedStream inner(bytes, 512);
  auto ahead = MakeReadAheadStream(inner, 1024, 2);
  std::mutex mutex;
  int work_left = 0;  // items of "work" on offer
  int done = 0;
  std::set<std::thread::id> threads;
  std::atomic<bool> inside{false};
  auto offer = [&](int items) {
    {
      std::lock_guard<std::mutex> lock(mutex);
      work_left = items;
    }
    ahead->WakeForIdleWork();
  };
  auto wait_for = [&](int expected) {
    for (int i = 0; i < 5000; ++i) {
      {
        std::lock_guard<std::mutex> lock(mutex);
        if (done == expected) return true;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    return false;
  };
  ASSERT_TRUE(ahead->SetIdleWork([&] {
    inside = true;
    bool did = false;
    {
      std::lock_guard<std::mutex> lock(mutex);
      threads.insert(std::this_thread::get_id());
      if (work_left > 0) {
        --work_left;
        ++done;
        did = true;
      }
    }
    std::this_thread::sleep_for(std::chrono::microseconds(200));  // catch a clear that is early
    inside = false;
    return did;
  }));
  offer(3);
  ASSERT_TRUE(wait_for(3));  // nothing read yet: the thread waits for a free buffer, and helps
  Status status;
  EXPECT_EQ(Drain(*ahead, 4096, &status), bytes);  // the bytes are served as ever
  EXPECT_TRUE(status.ok());
  offer(2);
  ASSERT_TRUE(wait_for(5));  // after the end, too
  ASSERT_TRUE(ahead->SetIdleWork(nullptr));
  EXPECT_FALSE(inside.load());  // it returned after the last call ended
  offer(1);
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  std::lock_guard<std::mutex> lock(mutex);
  EXPECT_EQ(done, 5);  // cleared: the work on offer since then is not done
  EXPECT_EQ(threads.size(), 1u);
  EXPECT_EQ(threads.count(std::this_thread::get_id()), 0u);
}

// A stream read to its end before any work was given either still helps or says it cannot;
// it never takes work it will not do.
TEST(ReadAheadStreamTest, IdleWorkGivenAfterTheEndIsDoneOrRefused) {
  for (int round = 0; round < 20; ++round) {
    ChunkedStream inner(Pattern(100), 512);
    auto ahead = MakeReadAheadStream(inner, 1024, 2);
    Status status;
    EXPECT_EQ(Drain(*ahead, 4096, &status).size(), 100u);
    if (round % 2 == 1) std::this_thread::sleep_for(std::chrono::milliseconds(2));
    std::atomic<int> left{1};
    if (!ahead->SetIdleWork([&] { return left.exchange(0) == 1; })) continue;
    ahead->WakeForIdleWork();
    for (int i = 0; i < 5000 && left.load() == 1; ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    EXPECT_EQ(left.load(), 0) << "round " << round;
    ahead->SetIdleWork(nullptr);
  }
}

}  // namespace
}  // namespace sparkprof
