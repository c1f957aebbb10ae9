// A line-based reader of a Python class's forward; see ForwardSource.h. It handles the shapes
// a model file has (multi-line signatures, annotations, defaults, a one-line body) and refuses *args.
#include "agents/builtin/emit/ForwardSource.h"

#include <sstream>

namespace stitch::agents::builtin {
namespace {

std::size_t indentOf(const std::string& line) { return line.find_first_not_of(" \t"); }

bool blank(const std::string& line) {
  auto i = indentOf(line);
  return i == std::string::npos || line[i] == '#';
}

std::string trim(const std::string& s) {
  auto b = s.find_first_not_of(" \t\r\n");
  if (b == std::string::npos) return "";
  auto e = s.find_last_not_of(" \t\r\n");
  return s.substr(b, e - b + 1);
}

}  // namespace

Outcome<ForwardSource> findForward(const std::string& source, const std::string& modelClass) {
  std::vector<std::string> lines;
  std::istringstream in(source);
  for (std::string l; std::getline(in, l);) lines.push_back(l);
  std::size_t start = 0;
  bool inClass = modelClass.empty();
  for (; start < lines.size(); ++start) {
    const std::string t = trim(lines[start]);
    if (!inClass && (t.rfind("class " + modelClass + "(", 0) == 0 || t.rfind("class " + modelClass + ":", 0) == 0))
      inClass = true;
    else if (inClass && t.rfind("def forward(", 0) == 0)
      break;
  }
  if (start == lines.size())
    return Failure{"no `def forward(` in class " + (modelClass.empty() ? std::string("any") : modelClass)};
  ForwardSource f;
  f.defLine = static_cast<int>(start) + 1;
  const std::size_t defIndent = indentOf(lines[start]);
  // The signature may span lines: read to the ')' that closes "forward(".
  std::string joined;
  std::size_t end = start, open = std::string::npos, close = std::string::npos;
  for (; end < lines.size() && close == std::string::npos; ++end) {
    joined += lines[end] + "\n";
    if (open == std::string::npos) open = joined.find('(');
    int depth = 0;
    for (std::size_t i = open; open != std::string::npos && i < joined.size(); ++i) {
      if (joined[i] == '(') ++depth;
      else if (joined[i] == ')' && --depth == 0) {
        close = i;
        break;
      }
    }
  }
  if (close == std::string::npos)
    return Failure{"line " + std::to_string(f.defLine) + ": the forward signature does not close"};
  const std::string sig = joined.substr(open + 1, close - open - 1);
  int depth = 0;
  std::string current;
  auto flush = [&]() -> bool {
    std::string p = trim(current);
    current.clear();
    if (p.empty()) return true;
    if (p[0] == '*') return false;
    const std::size_t eq = p.find('=');
    const std::string name = trim(p.substr(0, p.find_first_of(":=")));
    if (name == "self") return true;
    f.params.push_back(name);
    f.defaults.push_back(eq == std::string::npos ? "" : trim(p.substr(eq + 1)));
    return true;
  };
  for (char c : sig) {
    if (c == '(' || c == '[') ++depth;
    if (c == ')' || c == ']') --depth;
    if (c == ',' && depth == 0) {
      if (!flush()) return Failure{"line " + std::to_string(f.defLine) + ": forward takes *args or **kwargs"};
    } else
      current += c;
  }
  if (!flush()) return Failure{"line " + std::to_string(f.defLine) + ": forward takes *args or **kwargs"};
  // The colon that ends the def (after a return annotation, if any): what follows it on that line,
  // other than a comment, is a one-line body.
  const std::size_t lastLine = end - 1;
  const std::size_t lastStart = joined.size() - lines[lastLine].size() - 1;
  depth = 0;
  for (std::size_t i = close + 1; i < joined.size() && joined[i] != '\n'; ++i) {
    const char c = joined[i];
    if (c == '(' || c == '[') ++depth;
    if (c == ')' || c == ']') --depth;
    if (c != ':' || depth != 0) continue;
    const std::string rest = trim(joined.substr(i + 1, joined.find('\n', i) - i - 1));
    if (rest.empty() || rest[0] == '#') break;
    f.bodyFirst = f.bodyLast = static_cast<int>(lastLine) + 1;
    f.bodyIndent = lines[start].substr(0, defIndent) + "    ";
    f.body = f.bodyIndent + rest + "\n";
    f.header = joined.substr(lastStart, i + 1 - lastStart) + "\n";
    return f;
  }
  for (std::size_t i = end; i < lines.size(); ++i) {
    if (blank(lines[i])) continue;
    if (indentOf(lines[i]) <= defIndent) break;
    if (f.bodyFirst == 0) {
      f.bodyFirst = static_cast<int>(i) + 1;
      f.bodyIndent = lines[i].substr(0, indentOf(lines[i]));
    }
    f.bodyLast = static_cast<int>(i) + 1;
  }
  if (f.bodyFirst == 0) return Failure{"line " + std::to_string(f.defLine) + ": forward has no body"};
  for (int i = f.bodyFirst; i <= f.bodyLast; ++i) f.body += lines[static_cast<std::size_t>(i) - 1] + "\n";
  return f;
}

}  // namespace stitch::agents::builtin
