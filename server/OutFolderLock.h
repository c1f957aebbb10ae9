// One `stitchcuda optimize` at a time writes into an --out folder: a second run on the same folder
// is refused while the first holds its lock, so neither report silently replaces the other's.
#pragma once

#include <filesystem>
#include <optional>
#include <string>

namespace stitch::server {

class OutFolderLock {
public:
  // The folder's lock (flock on FOLDER/.stitchcuda-optimize.lock, the folder made if missing, held
  // until this is destroyed or the process ends, however it ends); nullopt with `why` set when another
  // process holds it (named by its pid) or the lock file cannot be made.
  static std::optional<OutFolderLock> take(const std::filesystem::path& folder, std::string& why);

  OutFolderLock(OutFolderLock&& other) noexcept : fd_(other.fd_) { other.fd_ = -1; }
  OutFolderLock& operator=(OutFolderLock&&) = delete;
  OutFolderLock(const OutFolderLock&) = delete;
  ~OutFolderLock();

private:
  explicit OutFolderLock(int fd) : fd_(fd) {}
  int fd_ = -1;
};

}  // namespace stitch::server
