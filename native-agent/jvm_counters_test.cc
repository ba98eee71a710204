#include "native-agent/jvm_counters.h"

#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

namespace sparkprof::agent {
namespace {

// Builds a counter region as HotSpot lays it out (perfMemory.hpp, version 2.0, little endian).
class Region {
 public:
  Region() : bytes_(32, 0) {
    const unsigned char magic[4] = {0xca, 0xfe, 0xc0, 0xc0};
    std::memcpy(bytes_.data(), magic, 4);
    bytes_[4] = 1;  // little endian
    bytes_[5] = 2;  // major
    bytes_[7] = 1;  // accessible
    Put32(24, 32);  // first entry
  }
  void Long(const std::string& name, int64_t value) { Add(name, 'J', 0, &value, sizeof(value)); }
  void Text(const std::string& name, const std::string& text) {
    std::string data = text + '\0';
    Add(name, 'B', static_cast<int32_t>(data.size()), data.data(), data.size());
  }
  std::vector<char>& bytes() {
    Put32(8, static_cast<int32_t>(bytes_.size()));
    Put32(28, entries_);
    return bytes_;
  }
  void Put32(size_t offset, int32_t value) { std::memcpy(bytes_.data() + offset, &value, 4); }

 private:
  void Add(const std::string& name, char type, int32_t vector_length, const void* data,
           size_t data_bytes) {
    const size_t start = bytes_.size();
    const size_t name_offset = 20;
    size_t data_offset = name_offset + name.size() + 1;
    data_offset = (data_offset + 7) / 8 * 8;
    size_t length = (data_offset + data_bytes + 7) / 8 * 8;
    bytes_.resize(start + length, 0);
    Put32(start, static_cast<int32_t>(length));
    Put32(start + 4, static_cast<int32_t>(name_offset));
    Put32(start + 8, vector_length);
    bytes_[start + 12] = type;
    Put32(start + 16, static_cast<int32_t>(data_offset));
    std::memcpy(bytes_.data() + start + name_offset, name.c_str(), name.size() + 1);
    std::memcpy(bytes_.data() + start + data_offset, data, data_bytes);
    ++entries_;
  }
  std::vector<char> bytes_;
  int32_t entries_ = 0;
};

// A G1-like region: young generation 0 (eden, s0, s1), old generation 1 named "space".
Region G1Region() {
  Region region;
  region.Long("sun.gc.generation.0.capacity", 100);
  region.Long("sun.gc.generation.0.maxCapacity", 1000);
  region.Long("sun.gc.generation.1.capacity", 400);
  region.Long("sun.gc.generation.1.maxCapacity", 1000);
  const char* names[] = {"eden", "s0", "s1"};
  for (int space = 0; space < 3; ++space) {
    const std::string prefix = "sun.gc.generation.0.space." + std::to_string(space) + ".";
    region.Text(prefix + "name", names[space]);
    region.Long(prefix + "used", 10 + space);
    region.Long(prefix + "capacity", 50);
    region.Long(prefix + "maxCapacity", 1000);
  }
  region.Text("sun.gc.generation.1.space.0.name", "space");
  region.Long("sun.gc.generation.1.space.0.used", 300);
  region.Long("sun.gc.generation.1.space.0.capacity", 400);
  region.Long("sun.gc.generation.1.space.0.maxCapacity", 1000);
  region.Long("sun.gc.metaspace.used", 77);
  region.Long("sun.gc.metaspace.capacity", 88);
  region.Long("sun.gc.compressedclassspace.used", 9);
  region.Long("java.threads.live", 12);
  region.Long("sun.gc.collector.0.invocations", 5);
  region.Long("sun.gc.collector.1.invocations", 2);
  region.Long("sun.rt.unrelated", 1);
  return region;
}

TEST(JvmCountersTest, ReadsPoolsMetaspaceThreadsAndAfterGc) {
  Region region = G1Region();
  std::vector<char>& bytes = region.bytes();
  Result<JvmCounters*> opened = JvmCounters::Open(bytes.data(), bytes.size());
  ASSERT_TRUE(opened.ok()) << opened.status().message();
  JvmCounters* counters = *opened;
  JvmMemoryReading reading = counters->Read();
  EXPECT_TRUE(reading.known);
  EXPECT_EQ(reading.heap_used_bytes, 10u + 11 + 12 + 300);
  ASSERT_EQ(reading.pools.size(), 3u);
  EXPECT_EQ(reading.pools[0].name, "eden");
  EXPECT_EQ(reading.pools[1].name, "survivor");
  EXPECT_EQ(reading.pools[1].used_bytes, 23u);  // s0 and s1 summed
  EXPECT_EQ(reading.pools[2].name, "old");
  EXPECT_EQ(reading.pools[2].committed_bytes, 400u);
  EXPECT_EQ(reading.metaspace_used_bytes, 77u);
  EXPECT_EQ(reading.metaspace_committed_bytes, 88u);
  EXPECT_EQ(reading.class_space_used_bytes, 9u);
  EXPECT_EQ(reading.java_threads, 12u);
  EXPECT_EQ(reading.collections, 7u);
  EXPECT_EQ(reading.gc_finishes, 0u);
  counters->OnGcFinish();
  reading = counters->Read();
  EXPECT_EQ(reading.old_used_after_gc_bytes, 300u);
  EXPECT_EQ(reading.heap_used_after_gc_bytes, 333u);
  EXPECT_EQ(reading.gc_finishes, 1u);
  delete counters;
}

TEST(JvmCountersTest, RefusesBadRegionsNamingTheOffset) {
  std::vector<char> tiny(8, 0);
  EXPECT_FALSE(JvmCounters::Open(tiny.data(), tiny.size()).ok());
  Region region = G1Region();
  std::vector<char> bytes = region.bytes();
  bytes[0] = 0;
  Result<JvmCounters*> no_magic = JvmCounters::Open(bytes.data(), bytes.size());
  ASSERT_FALSE(no_magic.ok());
  EXPECT_NE(no_magic.status().message().find("magic"), std::string::npos);
  // An entry whose length runs past the used bytes.
  Region long_entry = G1Region();
  std::vector<char>& long_bytes = long_entry.bytes();
  long_entry.Put32(32, 1 << 20);
  Result<JvmCounters*> past = JvmCounters::Open(long_bytes.data(), long_bytes.size());
  ASSERT_FALSE(past.ok());
  EXPECT_NE(past.status().message().find("offset 32"), std::string::npos)
      << past.status().message();
  // A count of entries beyond what is there.
  Region many = G1Region();
  std::vector<char>& many_bytes = many.bytes();
  many.Put32(28, 5000);
  EXPECT_FALSE(JvmCounters::Open(many_bytes.data(), many_bytes.size()).ok());
  // A region without heap spaces.
  Region empty;
  empty.Long("java.threads.live", 3);
  std::vector<char>& empty_bytes = empty.bytes();
  Result<JvmCounters*> none = JvmCounters::Open(empty_bytes.data(), empty_bytes.size());
  ASSERT_FALSE(none.ok());
  EXPECT_NE(none.status().message().find("no heap spaces"), std::string::npos);
}

TEST(JvmCountersTest, ParseKeepsOnlyWhatIsAskedAndCutsLongTexts) {
  Region region;
  region.Long("a.b", 1);
  region.Text("a.text", std::string(1000, 'x'));
  std::vector<char>& bytes = region.bytes();
  auto parsed = ParsePerfCounters(bytes.data(), bytes.size(), nullptr);
  ASSERT_TRUE(parsed.ok());
  ASSERT_EQ(parsed->size(), 2u);
  EXPECT_EQ(*(*parsed)[0].value, 1);
  EXPECT_EQ((*parsed)[1].text.size(), 256u);
  auto none = ParsePerfCounters(bytes.data(), bytes.size(),
                                [](std::string_view name) { return name == "zzz"; });
  ASSERT_TRUE(none.ok());
  EXPECT_TRUE(none->empty());
}

}  // namespace
}  // namespace sparkprof::agent
