#include "common/input_stream.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

namespace sparkprof {
namespace {

namespace fs = std::filesystem;

TEST(InputStreamTest, ReadsARegularFile) {
  fs::path path = fs::temp_directory_path() / ("sparkprof_input_" + std::to_string(getpid()));
  std::ofstream(path) << "hello";
  Result<std::unique_ptr<InputStream>> stream = OpenFileInputStream(path.string());
  ASSERT_TRUE(stream.ok()) << stream.status().ToString();
  char buffer[16];
  Result<size_t> got = (*stream)->Read(buffer, sizeof(buffer));
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(std::string(buffer, *got), "hello");
  EXPECT_EQ(*(*stream)->Read(buffer, sizeof(buffer)), 0u);
  fs::remove(path);
  EXPECT_EQ(OpenFileInputStream(path.string()).status().code(), StatusCode::kNotFound);
}

// A FIFO used to block in open() (no writer) and then in read(): the command never returned.
TEST(InputStreamTest, RefusesFifosDevicesAndDirectoriesWithoutBlocking) {
  fs::path fifo = fs::temp_directory_path() / ("sparkprof_fifo_" + std::to_string(getpid()));
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  Result<std::unique_ptr<InputStream>> stream = OpenFileInputStream(fifo.string());
  fs::remove(fifo);
  ASSERT_FALSE(stream.ok());
  EXPECT_EQ(stream.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(stream.status().message().find("not a regular file"), std::string::npos);
  EXPECT_FALSE(OpenFileInputStream("/dev/zero").ok());
  EXPECT_FALSE(OpenFileInputStream("/dev/tty").ok());
  EXPECT_FALSE(OpenFileInputStream(fs::temp_directory_path().string()).ok());
}

// /proc/kmsg looks like a regular file; reading it blocks, and as root consumes the kernel log.
TEST(InputStreamTest, RefusesKernelInterfaceFiles) {
  EXPECT_FALSE(OpenFileInputStream("/proc/kmsg").ok());  // refused, or no permission
  for (const char* path : {"/proc/self/status", "/sys/kernel/mm/transparent_hugepage/enabled"}) {
    Result<std::unique_ptr<InputStream>> stream = OpenFileInputStream(path);
    if (stream.status().code() == StatusCode::kNotFound) continue;
    EXPECT_EQ(stream.status().code(), StatusCode::kInvalidArgument) << path;
    EXPECT_NE(stream.status().message().find("kernel interface"), std::string::npos);
  }
}

TEST(InputStreamTest, ReadAllWithinStopsPastTheLimit) {
  std::string out = "x";
  std::unique_ptr<InputStream> small = MakeMemoryInputStream(std::string(10, 'a'));
  Result<bool> whole = ReadAllWithin(*small, 11, out, 100);
  ASSERT_TRUE(whole.ok());
  EXPECT_TRUE(*whole);
  EXPECT_EQ(out, "x" + std::string(10, 'a'));  // exactly the limit
  std::string more;
  std::unique_ptr<InputStream> large = MakeMemoryInputStream(std::string(12, 'b'));
  whole = ReadAllWithin(*large, 11, more);
  ASSERT_TRUE(whole.ok());
  EXPECT_FALSE(*whole);
}

}  // namespace
}  // namespace sparkprof
