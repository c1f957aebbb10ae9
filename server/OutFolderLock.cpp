// The --out folder's lock; see OutFolderLock.h.
#include "server/OutFolderLock.h"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

namespace stitch::server {

std::optional<OutFolderLock> OutFolderLock::take(const std::filesystem::path& folder, std::string& why) {
  std::error_code ec;
  std::filesystem::create_directories(folder, ec);
  const auto path = folder / ".stitchcuda-optimize.lock";
  const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644);
  if (fd < 0) {
    why = "cannot make its lock file " + path.string() + ": " + std::strerror(errno);
    return std::nullopt;
  }
  if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    const int error = errno;
    char holder[32] = {};
    const ssize_t n = ::pread(fd, holder, sizeof holder - 1, 0);
    ::close(fd);
    if (error != EWOULDBLOCK) {
      why = "cannot lock " + path.string() + ": " + std::strerror(error);
      return std::nullopt;
    }
    const std::string pid = n > 0 ? std::string(holder, static_cast<std::size_t>(n)) : "";
    why = "another stitchcuda optimize" + (pid.empty() ? std::string() : " (pid " + pid + ")") +
          " is writing its report there; wait for it to finish or give another --out";
    return std::nullopt;
  }
  // Who holds it, for the message a refused run prints (without it that message names no pid).
  const std::string pid = std::to_string(::getpid());
  const bool named = ::ftruncate(fd, 0) == 0 && ::pwrite(fd, pid.data(), pid.size(), 0) == static_cast<ssize_t>(pid.size());
  (void)named;
  return OutFolderLock(fd);
}

OutFolderLock::~OutFolderLock() {
  if (fd_ >= 0) ::close(fd_);
}

}  // namespace stitch::server
