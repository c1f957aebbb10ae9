// Which tasks a suite holds; see BenchTasks.h.
#include "server/BenchTasks.h"

#include <algorithm>
#include <cstdlib>

namespace stitch::server::bench {
namespace fs = std::filesystem;
namespace {

int levelOf(const std::string& folder) {
  if (folder.size() <= 5 || folder.rfind("level", 0) != 0) return -1;
  if (folder.find_first_not_of("0123456789", 5) != std::string::npos) return -1;
  return std::atoi(folder.c_str() + 5);
}

}  // namespace

bool orderBefore(const BenchTask& a, const BenchTask& b) {
  auto rank = [](int level) { return level > 0 ? level : 1 << 30; };
  return rank(a.level) != rank(b.level) ? rank(a.level) < rank(b.level) : a.key < b.key;
}

protocol::Result<std::vector<BenchTask>, std::string> findTasks(const fs::path& dirOrFile) {
  std::error_code ec;
  const fs::path root = fs::canonical(dirOrFile, ec);
  if (ec) return "cannot read " + dirOrFile.string() + ": " + ec.message();
  std::vector<fs::path> files;
  if (fs::is_regular_file(root)) {
    if (root.extension() != ".py") return root.string() + " is not a task file (*.py)";
    files.push_back(root);
  } else {
    fs::recursive_directory_iterator it(root, fs::directory_options::skip_permission_denied, ec), end;
    if (ec) return "cannot list " + root.string() + ": " + ec.message();
    for (; it != end; it.increment(ec)) {
      if (ec) return "cannot list " + root.string() + ": " + ec.message();
      const std::string name = it->path().filename().string();
      if (it->is_directory() && (name == "__pycache__" || name.starts_with("."))) {
        it.disable_recursion_pending();
        continue;
      }
      if (it->is_regular_file() && it->path().extension() == ".py" && !name.starts_with("__")) files.push_back(it->path());
    }
  }
  // The key counts from the innermost levelN folder at or below the bench folder, so that one level
  // run alone names its tasks as the whole suite's run does.
  const fs::path base = fs::is_regular_file(root) ? root.parent_path().parent_path() : root.parent_path();
  std::vector<BenchTask> tasks;
  for (const auto& file : files) {
    std::vector<std::string> parts;
    for (const auto& p : file.lexically_relative(base).parent_path()) parts.push_back(p.string());
    std::size_t from = fs::is_regular_file(root) ? parts.size() : 1;  // below the bench folder itself
    int level = 0;
    for (std::size_t i = parts.size(); i-- > 0;)
      if (levelOf(parts[i]) >= 0) {
        level = levelOf(parts[i]);
        from = i;
        break;
      }
    std::string key;
    for (std::size_t i = from; i < parts.size(); ++i) key += parts[i] + "/";
    tasks.push_back(BenchTask{file, key + file.stem().string(), level});
  }
  std::sort(tasks.begin(), tasks.end(), orderBefore);
  return tasks;
}

}  // namespace stitch::server::bench
