#include "cli/output.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>
#include <utility>

#include "common/errno_text.h"
#include "common/terminal_text.h"

namespace sparkprof::cli {

void PrintMessage(std::string_view program, std::string_view message) {
  std::string line(program);
  if (!program.empty()) line += ": ";
  line += SanitizeForTerminal(message);
  line += '\n';
  std::fwrite(line.data(), 1, line.size(), stderr);
}

ReportStream::ReportStream(std::string path, std::string_view program)
    : path_(std::move(path)), program_(program), to_stdout_(path_.empty() || path_ == "-") {
  name_ = to_stdout_ ? "standard output" : path_;
}

ReportStream::~ReportStream() { Close(); }

void ReportStream::Fail(int error) {
  failed_ = true;
  PrintMessage(program_, "cannot write the report to " + name_ + ": " +
                             (error != 0 ? ErrnoText(error) : "write failed") +
                             "; what was written is incomplete");
}

bool ReportStream::Write(std::string_view text) {
  if (failed_ || closed_) return false;  // never reopened: "wb" would truncate what was written
  if (file_ == nullptr) {
    file_ = to_stdout_ ? stdout : std::fopen(path_.c_str(), "wb");
    if (file_ == nullptr) {
      failed_ = true;
      PrintMessage(program_, "cannot write " + name_ + ": " + ErrnoText(errno));
      return false;
    }
  }
  errno = 0;
  bool written = std::fwrite(text.data(), 1, text.size(), file_) == text.size();
  // Buffered bytes fail only when flushed: a full disk shows up here or in fclose.
  written = std::fflush(file_) == 0 && written;
  if (!written) Fail(errno);
  return written;
}

bool ReportStream::Close() {
  closed_ = true;
  if (file_ == nullptr || to_stdout_) {
    file_ = nullptr;
    return !failed_;
  }
  errno = 0;
  const bool closed = std::fclose(file_) == 0;
  file_ = nullptr;
  if (!closed && !failed_) Fail(errno);
  return !failed_;
}

bool WriteReportOutput(const std::string& path, const std::string& text, std::string_view program) {
  ReportStream stream(path, program);
  stream.Write(text);
  return stream.Close();
}

bool OutputIsNotAnInput(const std::string& output, const std::vector<std::string>& input_files,
                        std::string_view program) {
  const bool to_stdout = output.empty() || output == "-";
  struct stat out;
  if (to_stdout ? ::fstat(STDOUT_FILENO, &out) != 0 : ::stat(output.c_str(), &out) != 0) {
    return true;  // does not exist yet: cannot be an input
  }
  if (!S_ISREG(out.st_mode)) return true;  // a terminal, a pipe, /dev/null
  for (const std::string& input : input_files) {
    struct stat in;
    if (input.empty() || ::stat(input.c_str(), &in) != 0) continue;
    if (in.st_dev == out.st_dev && in.st_ino == out.st_ino) {
      PrintMessage(program, (to_stdout ? std::string("standard output") : output) +
                                " is the input file " + input +
                                "; writing the report there would destroy it. Choose another "
                                "output");
      return false;
    }
  }
  return true;
}

}  // namespace sparkprof::cli
