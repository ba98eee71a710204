// The text of an errno value. std::strerror may hand every thread one shared buffer (POSIX does
// not require it to be thread-safe; clang-tidy's concurrency-mt-unsafe says so), and the agent
// and the servers call it from many threads: this copies strerror_r's text instead. Header only:
// the agent links nothing beyond libc.
#pragma once

#include <cstring>
#include <string>

namespace sparkprof {

namespace errno_text_detail {
// glibc's strerror_r (_GNU_SOURCE, as g++ and clang++ define it) returns the text, which may or
// may not be the buffer; POSIX's fills the buffer and returns 0.
[[maybe_unused]] inline const char* TextOf(const char* returned, const char* /*buffer*/) {
  return returned != nullptr ? returned : "unknown error";
}
[[maybe_unused]] inline const char* TextOf(int returned, const char* buffer) {
  return returned == 0 ? buffer : "unknown error";
}
}  // namespace errno_text_detail

inline std::string ErrnoText(int error) {
  char buffer[256];
  buffer[0] = '\0';
  return errno_text_detail::TextOf(strerror_r(error, buffer, sizeof(buffer)), buffer);
}

}  // namespace sparkprof
