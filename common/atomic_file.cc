#include "common/atomic_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <system_error>

#include "common/errno_text.h"

namespace sparkprof {

Status WriteFileAtomically(const std::string& path, std::string_view contents) {
  std::string temporary = path + ".tmp.XXXXXX";
  int fd = mkostemp(temporary.data(), O_CLOEXEC);
  if (fd < 0) {
    return IoError("cannot write " + path +
                   ": cannot create a temporary file next to it: " + ErrnoText(errno));
  }
  auto fail = [&](const char* what, int error) {
    if (fd >= 0) ::close(fd);
    ::unlink(temporary.c_str());
    return IoError("cannot write " + path + ": " + what + ErrnoText(error));
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
             (errno == ELOOP ? std::string("it is a symbolic link") : ErrnoText(errno));
  }
  return fd;
}

namespace {

// Why another user could read or replace what is written in the directory `info` describes, or
// an empty string. `entry` asks more: a directory this process made, not just one it may use.
std::string OwnershipProblem(const struct stat& info, bool entry) {
  uid_t self = ::geteuid();
  if (S_ISLNK(info.st_mode)) return "is a symbolic link";
  if (!S_ISDIR(info.st_mode)) return "is not a directory";
  bool owner_trusted = info.st_uid == self || (!entry && info.st_uid == 0);
  if (!owner_trusted) return "belongs to another user (uid " + std::to_string(info.st_uid) + ")";
  if ((info.st_mode & S_IWOTH) != 0 && (info.st_mode & S_ISVTX) == 0) {
    return "is writable by every user without the sticky bit";
  }
  return "";
}

}  // namespace

Status UsableOutputDirectory(const std::string& directory) {
  // The directory itself as a symlink: followed only when this user or root made it. One another
  // user planted (e.g. /tmp/sparkprof-<user> in the shared /tmp) points where they chose: a
  // root-owned target passes the owner check below, and the outputs would land there.
  struct stat link {};
  std::string trimmed = directory;
  while (trimmed.size() > 1 && trimmed.back() == '/') trimmed.pop_back();
  if (::lstat(trimmed.c_str(), &link) == 0 && S_ISLNK(link.st_mode) && link.st_uid != ::geteuid() &&
      link.st_uid != 0) {
    return IoError(directory + " is a symbolic link made by another user (uid " +
                   std::to_string(link.st_uid) +
                   "): outputs are not written where another user points them");
  }
  std::error_code error;
  std::filesystem::create_directories(directory, error);
  if (error) return IoError("cannot create " + directory + ": " + error.message());
  struct stat info {};
  if (::stat(directory.c_str(), &info) != 0) {
    return IoError("cannot inspect " + directory + ": " + ErrnoText(errno));
  }
  if (std::string problem = OwnershipProblem(info, false); !problem.empty()) {
    return IoError(directory + " " + problem +
                   ": outputs are not written where another user could read or replace them");
  }
  return Status::Ok();
}

Status CreateOwnDirectory(const std::string& parent, const std::string& name) {
  SPARKPROF_RETURN_IF_ERROR(UsableOutputDirectory(parent));
  struct stat info {};
  std::string path = (std::filesystem::path(parent) / name).string();
  if (::mkdir(path.c_str(), 0755) != 0 && errno != EEXIST) {
    return IoError("cannot create " + path + ": " + ErrnoText(errno));
  }
  if (::lstat(path.c_str(), &info) != 0) {
    return IoError("cannot inspect " + path + ": " + ErrnoText(errno));
  }
  if (std::string problem = OwnershipProblem(info, true); !problem.empty()) {
    return IoError(path + " " + problem + ": not created by this application, not written to");
  }
  return Status::Ok();
}

}  // namespace sparkprof
