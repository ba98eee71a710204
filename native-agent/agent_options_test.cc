#include "native-agent/agent_options.h"

#include <gtest/gtest.h>

namespace sparkprof::agent {
namespace {

TEST(AgentOptionsTest, DefaultsWhenEmpty) {
  auto options = ParseAgentOptions("");
  ASSERT_TRUE(options.ok());
  EXPECT_EQ(options->mode, SamplingMode::kCpu);
  EXPECT_EQ(options->interval_ns, 10'000'000);
  EXPECT_EQ(options->depth, 64);
  EXPECT_EQ(options->ring, 32u);
  EXPECT_TRUE(options->out_path.empty());
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

TEST(AgentOptionsTest, RejectsBadOptionsWithAClearMessage) {
  auto unknown = ParseAgentOptions("intervall=10ms");
  ASSERT_FALSE(unknown.ok());
  EXPECT_NE(unknown.status().message().find("unknown option 'intervall'"), std::string::npos);
  EXPECT_NE(unknown.status().message().find("interval=10ms"), std::string::npos);  // the help
  auto too_small = ParseAgentOptions("interval=10us");
  ASSERT_FALSE(too_small.ok());
  EXPECT_NE(too_small.status().message().find("between 100us and 10s"), std::string::npos);
  EXPECT_FALSE(ParseAgentOptions("mode=both").ok());
  EXPECT_FALSE(ParseAgentOptions("depth=0").ok());
  EXPECT_FALSE(ParseAgentOptions("depth=abc").ok());
  EXPECT_FALSE(ParseAgentOptions("ring=1").ok());
  EXPECT_FALSE(ParseAgentOptions("maxstacks=99999999999").ok());
  EXPECT_FALSE(ParseAgentOptions("out=").ok());
  EXPECT_FALSE(ParseAgentOptions("start").ok());
}

}  // namespace
}  // namespace sparkprof::agent
