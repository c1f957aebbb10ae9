// On-disk cache of measured ceilings, one JSON file per GPU name (see RooflineCache.h).
#include "profiling/RooflineCache.h"

#include <fstream>
#include <unistd.h>

namespace stitch::profiling {
namespace fs = std::filesystem;

fs::path RooflineCache::fileFor(const std::string& gpu) const {
  std::string safe;
  for (char c : gpu) safe += std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '.' ? c : '_';
  return dir_ / ((safe.empty() ? std::string("unknown") : safe) + ".json");
}

std::optional<Ceilings> RooflineCache::load(const std::string& gpu) const {
  std::ifstream f(fileFor(gpu));
  if (!f) return std::nullopt;
  auto j = nlohmann::json::parse(f, nullptr, false);
  auto c = ceilingsFromJson(j);
  if (!c || c.value().gpu != gpu) return std::nullopt;
  return c.value();
}

ProfileResult<fs::path> RooflineCache::store(const Ceilings& ceilings) const {
  std::error_code ec;
  fs::create_directories(dir_, ec);
  if (ec) return ProfileError{"cache_error", "cannot create " + dir_.string() + ": " + ec.message()};
  const fs::path target = fileFor(ceilings.gpu);
  const fs::path tmp = target.string() + ".tmp" + std::to_string(::getpid());
  {
    std::ofstream f(tmp);
    f << ceilingsToJson(ceilings).dump(1) << "\n";
    if (!f) return ProfileError{"cache_error", "cannot write " + tmp.string()};
  }
  fs::rename(tmp, target, ec);
  if (ec) return ProfileError{"cache_error", "cannot move " + tmp.string() + " to " + target.string() + ": " + ec.message()};
  return target;
}

ProfileResult<Ceilings> RooflineCache::getOrMeasure(const std::string& gpu,
                                                    const std::function<ProfileResult<nlohmann::json>()>& measure) const {
  if (auto cached = load(gpu)) return *cached;
  auto measured = measure();
  if (!measured) return measured.error();
  auto c = ceilingsFromJson(measured.value());
  if (!c) return c.error();
  if (c.value().gpu != gpu)
    return ProfileError{"ceilings_mismatch", "measured ceilings are for \"" + c.value().gpu + "\", not \"" + gpu + "\""};
  if (auto stored = store(c.value()); !stored) return stored.error();
  return c;
}

}  // namespace stitch::profiling
