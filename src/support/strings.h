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

// The escapes `quote` writes. Every form writes \" \\ \n \t \r; they differ only in the other
// control characters (below 0x20), which each reader spells differently. Other bytes are copied.
enum class Escapes : uint8_t {
  kC,      // \ooo, three octal digits: HLO STRING tokens (hlo/lexer.cc), diagnostics, DOT labels
  kTaidl,  // \0 for NUL, the others as they are: the .taidl/.tasm lexer reads only
           // \" \\ \n \t \r \0 (docs/tasm.md)
  kJson,   // \u00XX (RFC 8259: JSON has no octal escapes)
};

// `s` in double quotes, escaped for the reader `escapes` names. The one quoting of the project:
// .tasm text, HLO text, JSON, DOT labels and diagnostics all use it.
std::string quote(std::string_view s, Escapes escapes = Escapes::kC);

// `s` as HTML/XML character data or attribute text: & < > " ' as entities.
std::string escapeHtml(std::string_view s);

// "1 instruction" / "2 instructions".
std::string plural(int64_t n, std::string_view singular, std::string_view plural_form = {});

}  // namespace tacit
