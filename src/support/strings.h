// Small string helpers shared by printers and diagnostics.
#pragma once

#include <cstdint>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

namespace tacit {

// Joins the elements of a range with `sep`, formatting each with operator<<.
template <typename Range>
std::string join(const Range& range, std::string_view sep) {
  std::ostringstream out;
  bool first = true;
  for (const auto& v : range) {
    if (!first) out << sep;
    first = false;
    out << v;
  }
  return out.str();
}

// Joins after mapping each element through `fn` (returning something streamable).
template <typename Range, typename Fn>
std::string joinWith(const Range& range, std::string_view sep, Fn fn) {
  std::ostringstream out;
  bool first = true;
  for (const auto& v : range) {
    if (!first) out << sep;
    first = false;
    out << fn(v);
  }
  return out.str();
}

std::vector<std::string_view> split(std::string_view text, char sep);
std::string_view trim(std::string_view text);

// Shortest text that reads back to the same value ("0.1", "1e-05", "inf", "-nan").
std::string formatDouble(double v);
std::string formatFloat(float v);

// Quotes a string with C escapes, as HLO STRING tokens and diagnostics show it.
std::string quote(std::string_view s);

// "1 instruction" / "2 instructions".
std::string plural(int64_t n, std::string_view singular, std::string_view plural_form = {});

}  // namespace tacit
