// A fixture for tests that run the `sparkprof` command: a scratch directory per test, files
// written into it, and the command run with its exit code, stdout and stderr captured.
#pragma once

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace sparkprof::testing {

class CliTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("sparkprof_cli_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  std::string Write(const std::string& name, const std::string& bytes) {
    std::filesystem::path path = dir_ / name;
    std::ofstream(path, std::ios::binary) << bytes;
    return path.string();
  }

  static std::string Slurp(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    std::stringstream buffer;
    buffer << in.rdbuf();
    return buffer.str();
  }

  struct Run {
    int exit_code;
    std::string out;
    std::string err;
  };
  // Runs `sparkprof ARGS` (SPARKPROF_CLI) for at most a minute; `redirect` replaces the capture
  // of stdout (e.g. "> /dev/full"), and `out` is then empty.
  Run RunCli(const std::string& args, const std::string& redirect = "") {
    std::string out_path = (dir_ / "stdout").string(), err_path = (dir_ / "stderr").string();
    std::string command = "timeout 60 " + std::string(SPARKPROF_CLI) + " " + args + " " +
                          (redirect.empty() ? ">" + out_path : redirect) + " 2>" + err_path;
    int status = std::system(command.c_str());
    return {WEXITSTATUS(status), redirect.empty() ? Slurp(out_path) : "", Slurp(err_path)};
  }

  std::filesystem::path dir_;
};

}  // namespace sparkprof::testing
