// CSV tokenizer for ncu output (see Csv.h).
#include "profiling/Csv.h"

namespace stitch::profiling {

std::vector<CsvRow> parseCsv(std::string_view text) {
  std::vector<CsvRow> rows;
  std::size_t i = 0;
  while (i < text.size()) {
    std::size_t lineEnd = text.find('\n', i);
    if (text[i] == '=' || text[i] == '\n' || text[i] == '\r') {  // banner or blank line
      i = lineEnd == std::string_view::npos ? text.size() : lineEnd + 1;
      continue;
    }
    CsvRow row;
    std::string field;
    bool quoted = false;
    for (; i < text.size(); ++i) {
      char c = text[i];
      if (quoted) {
        if (c == '"' && i + 1 < text.size() && text[i + 1] == '"') {
          field += '"';
          ++i;
        } else if (c == '"') {
          quoted = false;
        } else {
          field += c;
        }
      } else if (c == '"') {
        quoted = true;
      } else if (c == ',') {
        row.push_back(std::move(field));
        field.clear();
      } else if (c == '\n') {
        ++i;
        break;
      } else if (c != '\r') {
        field += c;
      }
    }
    row.push_back(std::move(field));
    rows.push_back(std::move(row));
  }
  return rows;
}

}  // namespace stitch::profiling
