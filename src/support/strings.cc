#include "support/strings.h"

#include <charconv>
#include <cmath>
#include <cstdio>

namespace tacit {

std::vector<std::string_view> split(std::string_view text, char sep) {
  std::vector<std::string_view> parts;
  size_t start = 0;
  while (true) {
    size_t pos = text.find(sep, start);
    if (pos == std::string_view::npos) {
      parts.push_back(text.substr(start));
      return parts;
    }
    parts.push_back(text.substr(start, pos - start));
    start = pos + 1;
  }
}

std::string_view trim(std::string_view text) {
  size_t b = 0, e = text.size();
  while (b < e && (text[b] == ' ' || text[b] == '\t' || text[b] == '\n' || text[b] == '\r'))
    ++b;
  while (e > b &&
         (text[e - 1] == ' ' || text[e - 1] == '\t' || text[e - 1] == '\n' || text[e - 1] == '\r'))
    --e;
  return text.substr(b, e - b);
}

template <typename T>
static std::string formatShortest(T v) {
  if (std::isnan(v)) return std::signbit(v) ? "-nan" : "nan";
  if (std::isinf(v)) return v < 0 ? "-inf" : "inf";
  char buf[64];
  auto res = std::to_chars(buf, buf + sizeof(buf), v);
  return std::string(buf, res.ptr);
}

std::string formatDouble(double v) {
  return formatShortest(v);
}
std::string formatFloat(float v) {
  return formatShortest(v);
}

// How `escapes` writes a control character other than \n \t \r (empty: as it is).
static std::string controlEscape(unsigned char byte, Escapes escapes) {
  char buf[8];
  switch (escapes) {
    case Escapes::kTaidl:
      return byte == 0 ? "\\0" : "";
    case Escapes::kJson:
      std::snprintf(buf, sizeof(buf), "\\u%04x", byte);
      return buf;
    case Escapes::kC:
      break;
  }
  std::snprintf(buf, sizeof(buf), "\\%03o", byte);
  return buf;
}

std::string quote(std::string_view s, Escapes escapes) {
  std::string out = "\"";
  for (char c : s) {
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\t':
        out += "\\t";
        break;
      case '\r':
        out += "\\r";
        break;
      default: {
        auto byte = static_cast<unsigned char>(c);
        std::string escaped = byte < 0x20 ? controlEscape(byte, escapes) : "";
        if (escaped.empty()) {
          out += c;
        } else {
          out += escaped;
        }
      }
    }
  }
  out += '"';
  return out;
}

std::string plural(int64_t n, std::string_view singular, std::string_view plural_form) {
  std::string out = std::to_string(n) + " ";
  if (n == 1) return out + std::string(singular);
  return out + (plural_form.empty() ? std::string(singular) + "s" : std::string(plural_form));
}

std::string escapeHtml(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (char c : s) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

}  // namespace tacit
