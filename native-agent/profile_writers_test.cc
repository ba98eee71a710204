#include "native-agent/profile_writers.h"

#include <dirent.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <gtest/gtest.h>
#include <simdjson.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <vector>

namespace sparkprof::agent {
namespace {

class NamesResolver : public MethodNameResolver {
 public:
  std::string Resolve(const void* id) override {
    return reinterpret_cast<uintptr_t>(id) == 1 ? "Main.main" : "Weird;name\nwith\"quotes";
  }
};

TEST(ProfileWritersTest, CollapsedAndJsonDescribeTheProfile) {
  ThreadRegistry registry;
  NamesResolver resolver;
  GcMonitor gc;
  TaskTimeline timeline;
  Drain drain(DrainConfig{}, registry, resolver, gc, timeline);
  ThreadState* state = registry.Add(std::make_unique<ThreadState>(1, 8, 4));
  state->name = "main";
  for (int i = 0; i < 3; ++i) {
    SampleRecord* record = state->ring.TryReserve();
    record->tag = TaskTag{1, 0, 9};
    record->weight_ns = 10'000'000;
    record->partial_walk_error = 0;
    record->frames[0] = RawFrame{0, reinterpret_cast<const void*>(uintptr_t{2})};
    record->frames[1] = RawFrame{0, reinterpret_cast<const void*>(uintptr_t{1})};
    record->num_frames = 2;
    state->ring.Commit();
  }
  drain.RunCycle();

  EXPECT_EQ(RenderCollapsed(drain.cumulative(), drain.strings()),
            "Main.main;Weird_name_with\"quotes 3\n");
  ReportContext context{
      "cpu", "cpu: timer_create per thread", "AsyncGetCallTrace", 10'000'000, 7, 1, 2};
  std::string json = RenderJson(context, drain, HealthSnapshot{});
  EXPECT_NE(json.find("\"samples\":3"), std::string::npos) << json;
  EXPECT_NE(json.find("{\"stage_id\":1,\"stage_attempt\":0,\"task_attempt_id\":9,\"categories\":"
                      "{\"compute\":{\"samples\":3,\"time_ns\":30000000}}}"),
            std::string::npos)
      << json;
  EXPECT_NE(json.find("\"thread\":\"main\""), std::string::npos);
  EXPECT_NE(json.find("concurrent GC phases are not pauses"), std::string::npos);
}

// Thread names are whatever the JVM and /proc give: an emoji (as UTF-8, and as the surrogate
// pair JVMTI's modified UTF-8 writes), invalid bytes and control characters must still give a
// document a JSON parser accepts, with the names it can keep kept.
TEST(ProfileWritersTest, JsonIsValidForAnyThreadName) {
  const std::string names[] = {
      "worker \xF0\x9F\x94\xA5",         // U+1F525 in UTF-8
      "jvmti \xED\xA0\xBD\xED\xB4\xA5",  // the same in modified UTF-8 (two surrogates)
      "bytes \xFF\xFE end \xF0\x9F",     // invalid, and a sequence cut short
      std::string("ctl \x01\x1B[m\x7F\t\"q\" \\ \0 nul", 21),
      "bidi \xE2\x80\xAE \xC2\x85",  // U+202E, U+0085
  };
  ThreadRegistry registry;
  NamesResolver resolver;
  GcMonitor gc;
  TaskTimeline timeline;
  Drain drain(DrainConfig{}, registry, resolver, gc, timeline);
  pid_t tid = 1;
  for (const std::string& name : names) {
    ThreadState* state = registry.Add(std::make_unique<ThreadState>(tid++, 8, 4));
    state->name = name;
    SampleRecord* record = state->ring.TryReserve();
    record->tag = TaskTag{1, 0, 9};
    record->weight_ns = 10'000'000;
    record->off_cpu_ns = 0;
    record->cpu_starved_ns = 0;
    record->jvm_thread_state = -1;
    record->idle_before_us = 0;
    record->partial_walk_error = 0;
    record->frames[0] = RawFrame{0, reinterpret_cast<const void*>(uintptr_t{1})};
    record->num_frames = 1;
    state->ring.Commit();
  }
  drain.RunCycle();
  ReportContext context{"cpu \xFF", "cpu: timer_create per thread", "AsyncGetCallTrace", 1, 7, 1,
                        2};
  std::string json = RenderJson(context, drain, HealthSnapshot{});

  simdjson::dom::parser parser;
  simdjson::dom::element document;
  ASSERT_EQ(parser.parse(json).get(document), simdjson::SUCCESS) << json;
  std::vector<std::string> parsed;
  for (simdjson::dom::element thread : document["threads"].get_array()) {
    std::string_view name;
    ASSERT_EQ(thread["thread"].get_string().get(name), simdjson::SUCCESS) << json;
    parsed.emplace_back(name);
  }
  std::sort(parsed.begin(), parsed.end());
  const std::string replacement = "\xEF\xBF\xBD";
  std::vector<std::string> expected = {
      "bidi \xE2\x80\xAE \xC2\x85",  // escaped in the text (\u202e), kept in the value
      "bytes " + replacement + replacement + " end " + replacement + replacement,
      std::string("ctl \x01\x1B[m\x7F\t\"q\" \\ \0 nul", 21),
      "jvmti " + replacement + replacement + replacement + replacement + replacement + replacement,
      "worker \xF0\x9F\x94\xA5",
  };
  EXPECT_EQ(parsed, expected) << json;
  EXPECT_NE(json.find("\\u202e"), std::string::npos) << json;
  std::string_view mode;
  ASSERT_EQ(document["mode"].get_string().get(mode), simdjson::SUCCESS);
  EXPECT_EQ(mode, "cpu " + replacement);
}

TEST(ProfileWritersTest, WritesFilesAtomically) {
  std::string path = ::testing::TempDir() + "/sparkprof_writer_test.txt";
  ASSERT_TRUE(WriteFileAtomically(path, "hello\n").ok());
  std::ifstream in(path);
  std::stringstream contents;
  contents << in.rdbuf();
  EXPECT_EQ(contents.str(), "hello\n");
  std::remove(path.c_str());
  EXPECT_FALSE(WriteFileAtomically("/nonexistent-dir/x", "y").ok());
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream contents;
  contents << in.rdbuf();
  return contents.str();
}

// A fresh empty directory under the test's temporary directory.
std::string FreshDirectory(const std::string& name) {
  std::string directory = ::testing::TempDir() + "/" + name + "." + std::to_string(getpid());
  std::string command = "rm -rf '" + directory + "'";
  EXPECT_EQ(std::system(command.c_str()), 0);
  EXPECT_EQ(mkdir(directory.c_str(), 0755), 0);
  return directory;
}

std::vector<std::string> DirectoryEntries(const std::string& directory) {
  std::vector<std::string> names;
  DIR* dir = opendir(directory.c_str());
  if (dir == nullptr) return names;
  while (dirent* entry = readdir(dir)) {
    std::string name = entry->d_name;
    if (name != "." && name != "..") names.push_back(name);
  }
  closedir(dir);
  return names;
}

// out=/tmp/prof once wrote through "/tmp/prof.collapsed.tmp<pid>" with fopen: another local user
// could plant a symlink there (or at the final name) and have the JVM's user overwrite any of
// its files. Now neither a symlink at the final name nor at any temporary name is followed.
TEST(ProfileWritersTest, NeverWritesThroughAPlantedSymlink) {
  std::string directory = FreshDirectory("sparkprof_symlink_test");
  std::string victim = directory + "/victim";
  { std::ofstream(victim) << "precious\n"; }
  std::string path = directory + "/prof.collapsed";
  ASSERT_EQ(symlink(victim.c_str(), path.c_str()), 0);
  // Every temporary name the old writer could have used.
  for (const std::string& temporary :
       {path + ".tmp" + std::to_string(getpid()), path + ".tmp." + std::to_string(getpid())}) {
    ASSERT_EQ(symlink(victim.c_str(), temporary.c_str()), 0);
  }
  ASSERT_TRUE(WriteFileAtomically(path, "main;work 3\n").ok());
  EXPECT_EQ(ReadFile(victim), "precious\n");
  struct stat info {};
  ASSERT_EQ(lstat(path.c_str(), &info), 0);
  EXPECT_TRUE(S_ISREG(info.st_mode)) << "the symlink itself was replaced by the new file";
  EXPECT_EQ(info.st_mode & 0777, 0644u);
  EXPECT_EQ(ReadFile(path), "main;work 3\n");
}

// A write that fails part-way (here: the file-size limit; a full disk alike) is an error, leaves
// no temporary behind and does not touch the previous file.
TEST(ProfileWritersTest, FailedWriteIsAnErrorAndLeavesNothingBehind) {
  std::string directory = FreshDirectory("sparkprof_failed_write_test");
  std::string path = directory + "/prof.json";
  ASSERT_TRUE(WriteFileAtomically(path, "old").ok());
  rlimit previous{};
  ASSERT_EQ(getrlimit(RLIMIT_FSIZE, &previous), 0);
  struct sigaction ignore {
  }, previous_action{};
  ignore.sa_handler = SIG_IGN;
  sigaction(SIGXFSZ, &ignore, &previous_action);
  rlimit small = previous;
  small.rlim_cur = 16;
  ASSERT_EQ(setrlimit(RLIMIT_FSIZE, &small), 0);
  Status status = WriteFileAtomically(path, std::string(4096, 'x'));
  setrlimit(RLIMIT_FSIZE, &previous);
  sigaction(SIGXFSZ, &previous_action, nullptr);
  ASSERT_FALSE(status.ok());
  EXPECT_NE(status.message().find("cannot write " + path), std::string::npos) << status.message();
  EXPECT_EQ(ReadFile(path), "old");
  EXPECT_EQ(DirectoryEntries(directory), std::vector<std::string>{"prof.json"});
  // A directory that does not exist: the same, with the reason.
  Status missing = WriteFileAtomically(directory + "/no/such/dir/x", "y");
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.message().find("No such file"), std::string::npos) << missing.message();
}

}  // namespace
}  // namespace sparkprof::agent
