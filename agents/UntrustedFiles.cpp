// Confined paths and capped reads; see UntrustedFiles.h.
#include "agents/UntrustedFiles.h"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <stdexcept>
#include <sys/stat.h>
#include <unistd.h>

namespace stitch::agents {
namespace fs = std::filesystem;
namespace {

std::string mib(std::size_t bytes) { return std::to_string(bytes >> 20) + " MiB"; }

// Both already resolved.
bool under(const fs::path& folder, const fs::path& path) {
  const fs::path rel = path.lexically_relative(folder);
  return !rel.empty() && *rel.begin() != "..";
}

fs::path resolved(const fs::path& path) {
  std::error_code ec;
  fs::path out = fs::weakly_canonical(path, ec);
  if (ec) throw std::runtime_error("cannot resolve " + path.string() + ": " + ec.message());
  return out;
}

class Fd {
public:
  explicit Fd(int fd) : fd_(fd) {}
  ~Fd() {
    if (fd_ >= 0) ::close(fd_);
  }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  int get() const { return fd_; }

private:
  int fd_;
};

}  // namespace

std::string readRegularFile(const fs::path& path, std::size_t cap, const std::string& what) {
  // O_NONBLOCK: opening a FIFO for reading would otherwise wait for a writer, on the message loop.
  Fd fd(::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY));
  if (fd.get() < 0) throw std::runtime_error("cannot read " + what + " " + path.string() + ": " + std::strerror(errno));
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode))
    throw std::runtime_error(what + " " + path.string() + " is not a regular file; refused");
  if (static_cast<std::size_t>(st.st_size) > cap)
    throw std::runtime_error(what + " " + path.string() + " is " + std::to_string(st.st_size) +
                             " bytes, over the cap of " + mib(cap) + "; refused");
  // Read to the end, not to st_size: a file that grows while it is read is caught past the cap too.
  std::string text;
  text.reserve(static_cast<std::size_t>(st.st_size));
  char buffer[1 << 16];
  while (true) {
    ssize_t n = ::read(fd.get(), buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw std::runtime_error("cannot read " + what + " " + path.string() + ": " + std::strerror(errno));
    if (n == 0) break;
    if (text.size() + static_cast<std::size_t>(n) > cap)
      throw std::runtime_error(what + " " + path.string() + " is over the cap of " + mib(cap) + "; refused");
    text.append(buffer, static_cast<std::size_t>(n));
  }
  return text;
}

bool liesInside(const fs::path& folder, const fs::path& path) {
  std::error_code a, b;
  const fs::path f = fs::weakly_canonical(folder, a), p = fs::weakly_canonical(path, b);
  return !a && !b && under(f, p);
}

fs::path placeInside(const fs::path& folder, const std::string& relative) {
  const fs::path rel(relative);
  if (relative.empty() || rel.has_root_path())
    throw std::runtime_error("the path \"" + relative + "\" is " + (relative.empty() ? "empty" : "absolute") +
                             "; only a path inside " + folder.string() + " is written");
  for (const auto& part : rel)
    if (part == "..")
      throw std::runtime_error("the path \"" + relative + "\" climbs out with \"..\"; only a path inside " +
                               folder.string() + " is written");
  const fs::path base = resolved(folder), target = resolved(base / rel);
  if (!under(base, target) || target == base)
    throw std::runtime_error("the path \"" + relative + "\" leads through a symlink to " + target.string() +
                             ", outside " + base.string() + "; refused");
  // Resolution leaves only dangling symlinks; writing through one would create its target, anywhere.
  fs::path walked = base;
  for (const auto& part : target.lexically_relative(base)) {
    walked /= part;
    std::error_code ec;
    if (fs::is_symlink(fs::symlink_status(walked, ec)))
      throw std::runtime_error("the path \"" + relative + "\" leads through the dangling symlink " + walked.string() +
                               "; refused");
  }
  // Opening a FIFO or a device to write (or to keep what it held) would wait, or write where no file is.
  std::error_code ec;
  const auto status = fs::status(target, ec);
  if (fs::exists(status) && !fs::is_regular_file(status))
    throw std::runtime_error("the path \"" + relative + "\" names " + target.string() + ", which is not a regular file; refused");
  return target;
}

fs::path existingInside(const fs::path& folder, const std::string& path) {
  fs::path p(path);
  if (p.is_relative()) p = folder / p;
  std::error_code ec;
  const fs::path target = fs::canonical(p, ec);
  if (ec) throw std::runtime_error("cannot read " + p.string() + ": " + ec.message());
  const fs::path base = resolved(folder);
  if (!under(base, target))
    throw std::runtime_error(path + " lies outside " + base.string() +
                             (target != p ? " (it resolves to " + target.string() + ")" : std::string()) + "; refused");
  return target;
}

}  // namespace stitch::agents
