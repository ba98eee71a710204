#include "native-agent/agent_options.h"

#include <gtest/gtest.h>

namespace sparkprof::agent {
namespace {

TEST(AgentOptionsTest, DefaultsWhenEmpty) {
  auto options = ParseAgentOptions("");
  ASSERT_TRUE(options.ok());
  EXPECT_EQ(options->mode, SamplingMode::kCpuWall);
  EXPECT_EQ(options->interval_ns, 10'000'000);
  EXPECT_EQ(options->depth, 64);
  EXPECT_EQ(options->ring, 32u);
  EXPECT_TRUE(options->out_path.empty());
  EXPECT_TRUE(options->vm_structs);
  EXPECT_TRUE(options->jvm_internal_threads);
}

TEST(AgentOptionsTest, VmStructsAndJvmThreadsSwitchOffAndBackOn) {
  auto off = ParseAgentOptions("vmstructs=off,jvmthreads=off");
  ASSERT_TRUE(off.ok()) << off.status().ToString();
  EXPECT_FALSE(off->vm_structs);
  EXPECT_FALSE(off->jvm_internal_threads);
  auto on = ParseAgentOptions("vmstructs=off,vmstructs=on,jvmthreads=on");
  ASSERT_TRUE(on.ok()) << on.status().ToString();
  EXPECT_TRUE(on->vm_structs);
  EXPECT_TRUE(on->jvm_internal_threads);
  for (const char* bad : {"vmstructs=no", "vmstructs=", "jvmthreads=OFF", "jvmthreads=1"}) {
    auto parsed = ParseAgentOptions(bad);
    ASSERT_FALSE(parsed.ok()) << bad;
    EXPECT_NE(parsed.status().message().find("must be on or off"), std::string::npos) << bad;
  }
}

TEST(AgentOptionsTest, ParsesEveryKey) {
  auto options = ParseAgentOptions(
      "interval=1ms,mode=wall,out=/tmp/p-%p,dump=30,depth=128,ring=256,maxstacks=5000,"
      "prometheus=127.0.0.1:9404,walker=jvmti,executor=7");
  ASSERT_TRUE(options.ok()) << options.status().ToString();
  EXPECT_EQ(options->interval_ns, 1'000'000);
  EXPECT_EQ(options->mode, SamplingMode::kWall);
  EXPECT_EQ(options->out_path, "/tmp/p-%p");
  EXPECT_EQ(ExpandOutPath(options->out_path, 42), "/tmp/p-42");
  EXPECT_EQ(options->dump_seconds, 30);
  EXPECT_EQ(options->depth, 128);
  EXPECT_EQ(options->ring, 256u);
  EXPECT_EQ(options->max_stacks, 5000u);
  EXPECT_EQ(options->prometheus, "127.0.0.1:9404");
  EXPECT_EQ(options->walker, WalkerChoice::kJvmti);
  EXPECT_EQ(options->executor_id, "7");
}

TEST(AgentOptionsTest, ParsesDurations) {
  EXPECT_EQ(ParseDurationNs("10ms").value(), 10'000'000);
  EXPECT_EQ(ParseDurationNs("500us").value(), 500'000);
  EXPECT_EQ(ParseDurationNs("2s").value(), 2'000'000'000);
  EXPECT_EQ(ParseDurationNs("250000ns").value(), 250'000);
  EXPECT_EQ(ParseDurationNs("20").value(), 20'000'000);
  EXPECT_FALSE(ParseDurationNs("ms").ok());
  EXPECT_FALSE(ParseDurationNs("-1ms").ok());
  EXPECT_FALSE(ParseDurationNs("10 ms").ok());
}

TEST(AgentOptionsTest, RingMemoryTakesASize) {
  EXPECT_EQ(ParseAgentOptions("").value().ring_memory_bytes, kDefaultRingMemoryBytes);
  EXPECT_EQ(ParseAgentOptions("ringmemory=1g").value().ring_memory_bytes, uint64_t{1} << 30);
  EXPECT_EQ(ParseAgentOptions("ringmemory=512M").value().ring_memory_bytes, uint64_t{512} << 20);
  EXPECT_EQ(ParseAgentOptions("ringmemory=65536").value().ring_memory_bytes, 65536u);
  EXPECT_EQ(ParseBytes("64k").value(), 65536u);
  EXPECT_FALSE(ParseAgentOptions("ringmemory=1k").ok());   // below 64k
  EXPECT_FALSE(ParseAgentOptions("ringmemory=65g").ok());  // above 64g
  EXPECT_FALSE(ParseAgentOptions("ringmemory=m").ok());
  EXPECT_FALSE(ParseAgentOptions("ringmemory=-1m").ok());
  EXPECT_FALSE(ParseAgentOptions("ringmemory=99999999999999999999g").ok());
  auto bad = ParseAgentOptions("ringmemory=lots");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("is not a size"), std::string::npos);
}

TEST(AgentOptionsTest, RejectsBadOptionsWithAClearMessage) {
  auto unknown = ParseAgentOptions("intervall=10ms");
  ASSERT_FALSE(unknown.ok());
  EXPECT_NE(unknown.status().message().find("unknown option 'intervall'"), std::string::npos);
  EXPECT_NE(unknown.status().message().find("interval=10ms"), std::string::npos);  // the help
  auto too_small = ParseAgentOptions("interval=10us");
  ASSERT_FALSE(too_small.ok());
  EXPECT_NE(too_small.status().message().find("between 100us and 10s"), std::string::npos);
  EXPECT_FALSE(ParseAgentOptions("mode=both").ok());
  EXPECT_FALSE(ParseAgentOptions("mode=wall+cpu").ok());
  EXPECT_EQ(ParseAgentOptions("mode=cpu+wall")->mode, SamplingMode::kCpuWall);
  EXPECT_EQ(ParseAgentOptions("mode=cpu")->mode, SamplingMode::kCpu);
  EXPECT_FALSE(ParseAgentOptions("depth=0").ok());
  EXPECT_FALSE(ParseAgentOptions("depth=abc").ok());
  EXPECT_FALSE(ParseAgentOptions("ring=1").ok());
  EXPECT_FALSE(ParseAgentOptions("maxstacks=99999999999").ok());
  EXPECT_FALSE(ParseAgentOptions("out=").ok());
  EXPECT_FALSE(ParseAgentOptions("start").ok());
}

TEST(AgentOptionsTest, ExecutorOptionIsValidatedLikeThePluginsId) {
  EXPECT_TRUE(ParseAgentOptions("").value().executor_id.empty());  // not given
  EXPECT_FALSE(ParseAgentOptions("executor=").ok());
  EXPECT_FALSE(ParseAgentOptions("executor=a\tb").ok());
  EXPECT_FALSE(ParseAgentOptions("executor=" + std::string(kMaxExecutorIdBytes + 1, 'x')).ok());
  EXPECT_EQ(
      ParseAgentOptions("executor=" + std::string(kMaxExecutorIdBytes, 'x')).value().executor_id,
      std::string(kMaxExecutorIdBytes, 'x'));
}

TEST(ValidateExecutorIdTest, AcceptsSparkIdsAndPrintableUtf8) {
  for (std::string_view id :
       {"7", "driver", "exec-1@host:42", "12 345", "\xC3\xA9x\xE2\x82\xAC", "\xF0\x9F\x98\x80"}) {
    EXPECT_TRUE(ValidateExecutorId(id).ok()) << id;
  }
  EXPECT_TRUE(ValidateExecutorId(std::string(kMaxExecutorIdBytes, '9')).ok());
}

TEST(ValidateExecutorIdTest, CapsTheLengthInBytes) {
  Status too_long = ValidateExecutorId(std::string(kMaxExecutorIdBytes + 1, '9'));
  ASSERT_FALSE(too_long.ok());
  EXPECT_NE(too_long.message().find("longer than 256 bytes"), std::string::npos);
  // 86 three-byte characters: 258 bytes although only 86 characters.
  std::string euros;
  for (int i = 0; i < 86; ++i) euros += "\xE2\x82\xAC";
  EXPECT_FALSE(ValidateExecutorId(euros).ok());
  EXPECT_FALSE(ValidateExecutorId("").ok());
}

TEST(ValidateExecutorIdTest, RefusesControlCharactersAndSaysWhere) {
  using namespace std::string_view_literals;
  for (std::string_view id : {"a\nb"sv, "\t"sv, "7\r"sv, "a\0b"sv, "\x1b[31m"sv, "x\x7F"sv,
                              "\xC2\x85"sv /* U+0085, NEL */}) {
    EXPECT_FALSE(ValidateExecutorId(id).ok()) << testing::PrintToString(std::string(id));
  }
  Status newline = ValidateExecutorId("ab\ncd");
  EXPECT_NE(newline.message().find("control character (U+000A) at byte 2"), std::string::npos)
      << newline.message();
}

TEST(ValidateExecutorIdTest, RefusesMalformedUtf8) {
  using namespace std::string_view_literals;
  for (std::string_view id : {"\x80"sv, "a\xC3"sv, "\xC0\xB7"sv /* overlong '7' */,
                              "\xC0\x80"sv /* JNI's NUL */, "\xED\xA0\x80"sv /* surrogate */,
                              "\xF4\x90\x80\x80"sv /* above U+10FFFF */, "\xFF"sv, "\xE2\x82"sv}) {
    EXPECT_FALSE(ValidateExecutorId(id).ok()) << testing::PrintToString(std::string(id));
  }
  EXPECT_NE(ValidateExecutorId("ok\xFF").message().find("not well-formed UTF-8 at byte 2"),
            std::string::npos);
}

}  // namespace
}  // namespace sparkprof::agent
