// file:// URIs <-> local paths (percent-encoding both ways), as LSP clients send them.
#pragma once

#include <optional>
#include <string>

namespace stitch::server {

// nullopt for URIs that are not file:// (untitled:, vscode-notebook-cell:, ...).
std::optional<std::string> uriToPath(const std::string& uri);
std::string pathToUri(const std::string& path);

}  // namespace stitch::server
