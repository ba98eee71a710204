// What the commands write: reports, checked to the last byte (a full disk or `> /dev/full` is
// an error, never a silently truncated report), never over their own input, and messages on
// stderr, with every string that came from an input made safe for a terminal.
#pragma once

#include <cstdio>
#include <string>
#include <string_view>
#include <vector>

namespace sparkprof::cli {

// "<program>: <message>\n" on stderr ("<message>\n" without a program); `message` passes
// through SanitizeForTerminal.
void PrintMessage(std::string_view program, std::string_view message);

// Writes `text` to `path` ("" or "-": standard output) and flushes it; false, with a message
// naming the output and the reason, when any byte could not be written.
bool WriteReportOutput(const std::string& path, const std::string& text,
                       std::string_view program = "sparkprof");

// A report written in pieces as they are ready (WriteReportOutput in one piece): the output is
// opened at the first piece (nothing is created when nothing is written) and each piece is
// flushed, so a reader sees it at once. The first failure is reported once, naming the output
// and the reason; later pieces are dropped.
class ReportStream {
 public:
  explicit ReportStream(std::string path, std::string_view program = "sparkprof");
  ReportStream(const ReportStream&) = delete;
  ReportStream& operator=(const ReportStream&) = delete;
  ~ReportStream();
  bool Write(std::string_view text);
  // True when every byte reached the output (closed unless it is standard output); nothing is
  // written after it.
  bool Close();
  bool failed() const { return failed_; }

 private:
  void Fail(int error);

  std::string path_;
  std::string program_;
  std::string name_;
  std::FILE* file_ = nullptr;
  bool to_stdout_;
  bool failed_ = false;
  bool closed_ = false;
};

// False, with a message, when `output` ("" or "-": standard output) is the same file (device
// and inode) as one of `input_files`: writing the report would destroy what it was made from.
bool OutputIsNotAnInput(const std::string& output, const std::vector<std::string>& input_files,
                        std::string_view program = "sparkprof");

}  // namespace sparkprof::cli
