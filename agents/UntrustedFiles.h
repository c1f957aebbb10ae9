// Reading and placing files that data names (a job log, a candidate, a client's request): the host
// trusts none of it (SECURITY.md), so every such path is resolved inside the folder it belongs to,
// only regular files are read, and every read has a cap.
#pragma once

#include <cstddef>
#include <filesystem>
#include <string>

namespace stitch::agents {

// The caps, each far above what the host itself writes (SECURITY.md lists them).
inline constexpr std::size_t kMaxJobLogBytes = 32u << 20;
// Reopening replays each line as a notification on the message loop: lines, not bytes, bound its time.
inline constexpr std::size_t kMaxJobLogLines = 10000;
inline constexpr std::size_t kMaxProgramFileBytes = 4u << 20;
inline constexpr std::size_t kMaxModelFileBytes = 4u << 20;

// The whole regular file at `path` (`what` names it in errors: "the job log"). Opened without
// waiting, so a FIFO or a device is refused at once rather than read; a file over `cap` bytes is
// refused with the cap named. Throws std::runtime_error.
std::string readRegularFile(const std::filesystem::path& path, std::size_t cap, const std::string& what);

// True when `path`, resolved with its symlinks, is `folder` (resolved too) or lies under it.
bool liesInside(const std::filesystem::path& folder, const std::filesystem::path& path);

// Where the file `relative` is written under `folder`, resolved: refused (std::runtime_error naming
// it) when it is empty or absolute, has a `..` part, resolves through a symlink outside `folder`,
// passes a dangling symlink, or names something that exists and is not a regular file.
std::filesystem::path placeInside(const std::filesystem::path& folder, const std::string& relative);

// The existing file `path` names (relative to `folder`, or absolute), resolved: refused
// (std::runtime_error naming it) when it lies outside `folder`.
std::filesystem::path existingInside(const std::filesystem::path& folder, const std::string& path);

}  // namespace stitch::agents
