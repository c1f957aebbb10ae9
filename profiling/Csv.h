// RFC 4180 CSV records (quoted fields, doubled quotes, commas and newlines inside quotes), the
// format Nsight Compute's --csv output uses. Lines that are not CSV records are the caller's to skip.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace stitch::profiling {

using CsvRow = std::vector<std::string>;

// Splits `text` into records. A record that starts with '=' (ncu's "==PROF==" banner lines) or
// is empty is dropped, so a log with banners around the table parses to the table alone.
std::vector<CsvRow> parseCsv(std::string_view text);

}  // namespace stitch::profiling
