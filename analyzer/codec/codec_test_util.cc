#include "analyzer/codec/codec_test_util.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <random>
#include <vector>

namespace sparkprof::codec::testing {

std::string SampleEventLogText(size_t bytes) {
  std::string text;
  text.reserve(bytes + 256);
  std::mt19937 random(42);
  for (int task = 0; text.size() < bytes; ++task) {
    // Separate statements: the order of calls inside one expression differs between compilers,
    // and the fuzz corpus depends on these bytes.
    const uint64_t launch_time_ms = 1700000000000 + random() % 100000;
    const uint32_t executor = random() % 16;
    const uint32_t run_time_ms = random() % 5000;
    const uint32_t gc_time_ms = random() % 300;
    text += R"({"Event":"SparkListenerTaskEnd","Stage ID":)" + std::to_string(task / 200) +
            R"(,"Task Info":{"Task ID":)" + std::to_string(task) + R"(,"Launch Time":)" +
            std::to_string(launch_time_ms) + R"(,"Executor ID":")" + std::to_string(executor) +
            R"("},"Task Metrics":{"Executor Run Time":)" + std::to_string(run_time_ms) +
            R"(,"JVM GC Time":)" + std::to_string(gc_time_ms) + "}}\n";
  }
  text.resize(bytes);
  return text;
}

std::string RandomBytes(size_t bytes, uint32_t seed) {
  std::mt19937 random(seed);
  std::string out(bytes, '\0');
  for (char& c : out) c = static_cast<char>(random());
  return out;
}

Drained Drain(InputStream& stream, size_t read_bytes) {
  Drained drained;
  std::vector<char> buffer(read_bytes);
  while (true) {
    Result<size_t> got = stream.Read(buffer.data(), buffer.size());
    if (!got.ok()) {
      drained.status = got.status();
      drained.error_is_sticky = !stream.Read(buffer.data(), buffer.size()).ok();
      return drained;
    }
    if (*got == 0) return drained;
    drained.bytes.append(buffer.data(), *got);
  }
}

Drained DecodeAll(Format format, std::string compressed, const DecoderLimits& limits,
                  size_t read_bytes) {
  auto decoder = MakeDecoder(format, MakeMemoryInputStream(std::move(compressed)), limits);
  if (!decoder.ok()) return {"", decoder.status(), true};
  return Drain(**decoder, read_bytes);
}

void ExpectError(const Drained& drained, StatusCode code, const std::string& message_part) {
  EXPECT_EQ(drained.status.code(), code) << drained.status.ToString();
  EXPECT_NE(drained.status.message().find(message_part), std::string::npos)
      << drained.status.message() << "\n  should contain: " << message_part;
  EXPECT_TRUE(drained.error_is_sticky);
}

namespace {

class TrickleInputStream final : public InputStream {
 public:
  TrickleInputStream(std::string bytes, size_t max_read_bytes)
      : bytes_(std::move(bytes)), max_read_bytes_(max_read_bytes) {}
  Result<size_t> Read(char* buffer, size_t size) override {
    size_t n = std::min({size, max_read_bytes_, bytes_.size() - offset_});
    std::memcpy(buffer, bytes_.data() + offset_, n);
    offset_ += n;
    return n;
  }
  uint64_t input_offset() const override { return offset_; }

 private:
  std::string bytes_;
  size_t max_read_bytes_;
  size_t offset_ = 0;
};

}  // namespace

std::unique_ptr<InputStream> MakeTrickleInputStream(std::string bytes, size_t max_read_bytes) {
  return std::make_unique<TrickleInputStream>(std::move(bytes), max_read_bytes);
}

}  // namespace sparkprof::codec::testing
