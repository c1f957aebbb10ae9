// file:// URI conversion; see Uri.h.
#include "server/Uri.h"

#include <cctype>
#include <cstdio>

namespace stitch::server {

std::optional<std::string> uriToPath(const std::string& uri) {
  static const std::string scheme = "file://";
  if (uri.rfind(scheme, 0) != 0) return std::nullopt;
  std::string rest = uri.substr(scheme.size());
  // file://host/path: only the local host (empty or "localhost") names a local path.
  std::size_t slash = rest.find('/');
  if (slash == std::string::npos) return std::nullopt;
  std::string host = rest.substr(0, slash);
  if (!host.empty() && host != "localhost") return std::nullopt;
  std::string path;
  for (std::size_t i = slash; i < rest.size(); ++i) {
    if (rest[i] == '%' && i + 2 < rest.size() && std::isxdigit(static_cast<unsigned char>(rest[i + 1])) &&
        std::isxdigit(static_cast<unsigned char>(rest[i + 2]))) {
      path += static_cast<char>(std::stoi(rest.substr(i + 1, 2), nullptr, 16));
      i += 2;
    } else {
      path += rest[i];
    }
  }
  return path;
}

std::string pathToUri(const std::string& path) {
  std::string out = "file://";
  for (unsigned char c : path) {
    if (std::isalnum(c) || c == '/' || c == '-' || c == '_' || c == '.' || c == '~') {
      out += static_cast<char>(c);
    } else {
      char buf[4];
      std::snprintf(buf, sizeof buf, "%%%02X", c);
      out += buf;
    }
  }
  return out;
}

}  // namespace stitch::server
