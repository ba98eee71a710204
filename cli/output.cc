#include "cli/output.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>

#include "common/terminal_text.h"

namespace sparkprof::cli {

void PrintMessage(std::string_view program, std::string_view message) {
  std::string line(program);
  if (!program.empty()) line += ": ";
  line += SanitizeForTerminal(message);
  line += '\n';
  std::fwrite(line.data(), 1, line.size(), stderr);
}

bool WriteReportOutput(const std::string& path, const std::string& text,
                       std::string_view program) {
  const bool to_stdout = path.empty() || path == "-";
  const std::string name = to_stdout ? "standard output" : path;
  std::FILE* file = to_stdout ? stdout : std::fopen(path.c_str(), "wb");
  if (file == nullptr) {
    PrintMessage(program, "cannot write " + name + ": " + std::strerror(errno));
    return false;
  }
  errno = 0;
  bool written = std::fwrite(text.data(), 1, text.size(), file) == text.size();
  // Buffered bytes fail only when flushed: a full disk shows up here or in fclose.
  written = std::fflush(file) == 0 && written;
  int error = errno;
  if (!to_stdout) {
    written = std::fclose(file) == 0 && written;
    if (error == 0) error = errno;
  }
  if (!written) {
    PrintMessage(program, "cannot write the report to " + name + ": " +
                              (error != 0 ? std::strerror(error) : "write failed") +
                              "; what was written is incomplete");
    return false;
  }
  return true;
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
