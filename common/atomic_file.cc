#include "common/atomic_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

namespace sparkprof {

Status WriteFileAtomically(const std::string& path, std::string_view contents) {
  std::string temporary = path + ".tmp.XXXXXX";
  int fd = mkostemp(temporary.data(), O_CLOEXEC);
  if (fd < 0) {
    return IoError("cannot write " + path + ": cannot create a temporary file next to it: " +
                   std::strerror(errno));
  }
  auto fail = [&](const char* what, int error) {
    if (fd >= 0) ::close(fd);
    ::unlink(temporary.c_str());
    return IoError("cannot write " + path + ": " + what + std::strerror(error));
  };
  if (::fchmod(fd, 0644) != 0) return fail("", errno);
  size_t written = 0;
  while (written < contents.size()) {
    ssize_t n = ::write(fd, contents.data() + written, contents.size() - written);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return fail("", n < 0 ? errno : ENOSPC);
    written += static_cast<size_t>(n);
  }
  int closed = ::close(fd);  // NFS and quotas report write errors here
  fd = -1;
  if (closed != 0) return fail("", errno);
  if (::rename(temporary.c_str(), path.c_str()) != 0) {
    return fail(("cannot rename " + temporary + " over it: ").c_str(), errno);
  }
  return Status::Ok();
}

int OpenForWritingNoFollow(const std::string& path, std::string* error) {
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0644);
  if (fd < 0) {
    *error = "cannot create " + path + ": " +
             (errno == ELOOP ? std::string("it is a symbolic link") : std::strerror(errno));
  }
  return fd;
}

}  // namespace sparkprof
