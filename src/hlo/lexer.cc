#include "hlo/lexer.h"

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>

#include "hlo/dtype.h"

namespace tacit::hlo {

bool isIdentStart(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}
bool isIdentChar(char c) {
  return isIdentStart(c) || (c >= '0' && c <= '9') || c == '.' || c == '-';
}

bool isReservedWord(std::string_view s) {
  static constexpr std::string_view kKeywords[] = {"HloModule",
                                                   "ENTRY",
                                                   "ROOT",
                                                   "true",
                                                   "false",
                                                   "inf",
                                                   "nan",
                                                   "maximal",
                                                   "replicated",
                                                   "manual",
                                                   "unknown",
                                                   "unreduced",
                                                   "last_tile_dim_replicate",
                                                   "shard_as",
                                                   "shard_like"};
  for (std::string_view k : kKeywords) {
    if (s == k) return true;
  }
  return parsePrimitiveType(s).has_value();
}

namespace {

bool isDigit(char c) {
  return c >= '0' && c <= '9';
}
bool isBlank(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}
bool isHex(char c) {
  return isDigit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

// The matchers below return the length of the longest match at `p` (0 = no match); they mirror
// the regular expressions of XLA's lexer (docs/hlo.md section 1).
size_t digitsAt(std::string_view s, size_t p) {
  size_t n = 0;
  while (p + n < s.size() && isDigit(s[p + n]))
    ++n;
  return n;
}

// [-]?((\d+|\d+[.]\d*|\d*[.]\d+)([eE][+-]?\d+))|[-]?(\d+[.]\d*|\d*[.]\d+)
size_t matchDecimal(std::string_view s, size_t p) {
  size_t i = p;
  if (i < s.size() && s[i] == '-') ++i;
  size_t int_digits = digitsAt(s, i);
  i += int_digits;
  bool dot = false;
  size_t frac_digits = 0;
  if (i < s.size() && s[i] == '.') {
    frac_digits = digitsAt(s, i + 1);
    if (int_digits > 0 || frac_digits > 0) {
      dot = true;
      i += 1 + frac_digits;
    }
  }
  if (int_digits == 0 && frac_digits == 0) return 0;
  if (i < s.size() && (s[i] == 'e' || s[i] == 'E')) {
    size_t j = i + 1;
    if (j < s.size() && (s[j] == '+' || s[j] == '-')) ++j;
    size_t exp_digits = digitsAt(s, j);
    if (exp_digits > 0) return j + exp_digits - p;
  }
  return dot ? i - p : 0;
}

size_t classRun(std::string_view s, size_t p, std::string_view cls) {
  size_t n = 0;
  while (p + n < s.size() && (isDigit(s[p + n]) || cls.find(s[p + n]) != std::string_view::npos))
    ++n;
  return n;
}

// [0-9bf?]{2,}_[0-9io?]{2,}->[0-9bf?]{2,}
size_t matchDimLabels(std::string_view s, size_t p) {
  size_t i = p;
  size_t n = classRun(s, i, "bf?");
  if (n < 2) return 0;
  i += n;
  if (i >= s.size() || s[i] != '_') return 0;
  n = classRun(s, ++i, "io?");
  if (n < 2) return 0;
  i += n;
  if (i + 1 >= s.size() || s[i] != '-' || s[i + 1] != '>') return 0;
  n = classRun(s, i += 2, "bf?");
  if (n < 2) return 0;
  return i + n - p;
}

// [0-9]+(x[0-9]+)+
size_t matchDxD(std::string_view s, size_t p) {
  size_t i = p + digitsAt(s, p);
  if (i == p) return 0;
  int groups = 0;
  while (i + 1 < s.size() && s[i] == 'x' && isDigit(s[i + 1])) {
    i += 1 + digitsAt(s, i + 1);
    ++groups;
  }
  return groups ? i - p : 0;
}

// -?[0-9]+_-?[0-9]+(_[0-9]+)?
size_t matchPadDim(std::string_view s, size_t p) {
  auto signedInt = [&](size_t i) -> size_t {
    size_t j = i;
    if (j < s.size() && s[j] == '-') ++j;
    size_t d = digitsAt(s, j);
    return d ? j + d - i : 0;
  };
  size_t a = signedInt(p);
  if (!a || p + a >= s.size() || s[p + a] != '_') return 0;
  size_t b = signedInt(p + a + 1);
  if (!b) return 0;
  size_t i = p + a + 1 + b;
  if (i + 1 < s.size() && s[i] == '_' && isDigit(s[i + 1])) i += 1 + digitsAt(s, i + 1);
  return i - p;
}

// pad_dim(x pad_dim)*
size_t matchPad(std::string_view s, size_t p) {
  size_t n = matchPadDim(s, p);
  if (!n) return 0;
  size_t i = p + n;
  while (i < s.size() && s[i] == 'x') {
    size_t m = matchPadDim(s, i + 1);
    if (!m) break;
    i += 1 + m;
  }
  return i - p;
}

size_t matchInt(std::string_view s, size_t p) {
  size_t i = p;
  if (i < s.size() && s[i] == '-') ++i;
  size_t d = digitsAt(s, i);
  return d ? i + d - p : 0;
}

bool startsWith(std::string_view s, size_t p, std::string_view w) {
  return s.substr(p, w.size()) == w;
}

// Unescapes a string body (between the quotes). Returns false and sets *error_at on a bad escape.
bool unescape(std::string_view body, std::string* out, size_t* error_at) {
  for (size_t i = 0; i < body.size(); ++i) {
    char c = body[i];
    if (c != '\\') {
      if (out) out->push_back(c);
      continue;
    }
    if (++i >= body.size()) {
      *error_at = i - 1;
      return false;
    }
    char e = body[i];
    char v;
    switch (e) {
      case 'n':
        v = '\n';
        break;
      case 't':
        v = '\t';
        break;
      case 'r':
        v = '\r';
        break;
      case 'a':
        v = '\a';
        break;
      case 'b':
        v = '\b';
        break;
      case 'f':
        v = '\f';
        break;
      case 'v':
        v = '\v';
        break;
      case '\\':
      case '"':
      case '\'':
      case '?':
        v = e;
        break;
      case 'x': {
        size_t j = i + 1;
        unsigned value = 0;
        while (j < body.size() && isHex(body[j]) && j < i + 3) {
          char h = body[j++];
          value = value * 16 + static_cast<unsigned>(isDigit(h) ? h - '0' : (h | 0x20) - 'a' + 10);
        }
        if (j == i + 1) {
          *error_at = i - 1;
          return false;
        }
        v = static_cast<char>(value);
        i = j - 1;
        break;
      }
      default:
        if (e >= '0' && e <= '7') {
          unsigned value = 0;
          size_t j = i;
          while (j < body.size() && j < i + 3 && body[j] >= '0' && body[j] <= '7') {
            value = value * 8 + static_cast<unsigned>(body[j++] - '0');
          }
          if (value > 255) {
            *error_at = i - 1;
            return false;
          }
          v = static_cast<char>(value);
          i = j - 1;
          break;
        }
        *error_at = i - 1;
        return false;
    }
    if (out) out->push_back(v);
  }
  return true;
}

}  // namespace

std::string_view tokName(Tok t) {
  switch (t) {
    case Tok::kEof:
      return "end of input";
    case Tok::kEqual:
      return "'='";
    case Tok::kComma:
      return "','";
    case Tok::kColon:
      return "':'";
    case Tok::kStar:
      return "'*'";
    case Tok::kQuestion:
      return "'?'";
    case Tok::kHash:
      return "'#'";
    case Tok::kPlus:
      return "'+'";
    case Tok::kTilde:
      return "'~'";
    case Tok::kLSquare:
      return "'['";
    case Tok::kRSquare:
      return "']'";
    case Tok::kLBrace:
      return "'{'";
    case Tok::kRBrace:
      return "'}'";
    case Tok::kLParen:
      return "'('";
    case Tok::kRParen:
      return "')'";
    case Tok::kArrow:
      return "'->'";
    case Tok::kLeq:
      return "'<='";
    case Tok::kDots:
      return "'...'";
    case Tok::kName:
      return "a name";
    case Tok::kAttrName:
      return "an attribute name";
    case Tok::kIdent:
      return "an identifier";
    case Tok::kInt:
      return "an integer";
    case Tok::kDecimal:
      return "a number";
    case Tok::kNegInf:
      return "'-inf'";
    case Tok::kString:
      return "a string";
    case Tok::kDimLabels:
      return "dimension labels";
    case Tok::kDxD:
      return "a window size";
    case Tok::kPad:
      return "a padding";
  }
  return "a token";
}

size_t Lexer::skipBlanks(size_t p) const {
  const std::string_view s = text_;
  while (p < s.size()) {
    char c = s[p];
    if (isBlank(c)) {
      ++p;
    } else if (c == '/' && p + 1 < s.size() && s[p + 1] == '/') {
      while (p < s.size() && s[p] != '\n' && s[p] != '\r')
        ++p;
    } else if (c == '/' && p + 1 < s.size() && s[p + 1] == '*') {
      size_t close = s.find("*/", p + 2);
      if (close == std::string_view::npos)
        fail(p, "unterminated block comment", "close it with '*/'");
      p = close + 2;
    } else {
      break;
    }
  }
  return p;
}

size_t Lexer::nanPayload(size_t p, uint64_t* payload) const {
  // nan(0x<hex>): an optional payload right after "nan".
  const std::string_view s = text_;
  if (!startsWith(s, p, "(0x")) return p;
  size_t i = p + 3;
  uint64_t v = 0;
  size_t digits = 0;
  while (i < s.size() && isHex(s[i])) {
    if (++digits > 16) fail(p, "NaN payload does not fit in 64 bits");
    char h = s[i++];
    v = v * 16 + static_cast<uint64_t>(isDigit(h) ? h - '0' : (h | 0x20) - 'a' + 10);
  }
  if (digits == 0 || i >= s.size() || s[i] != ')')
    fail(p, "malformed NaN payload", "write nan(0x7f)");
  if (v == 0) fail(p, "a NaN payload must be non-zero");
  *payload = v;
  return i + 1;
}

Token Lexer::lexNumberLike(size_t p) const {
  const std::string_view s = text_;
  Token t;
  t.begin = p;
  auto finish = [&](Tok kind, size_t len) {
    t.kind = kind;
    t.end = p + len;
    t.text = s.substr(p, len);
    return t;
  };
  if (size_t n = matchDecimal(s, p)) {
    if (n > 400) fail(p, "number is too long");
    std::string buf(s.substr(p, n));
    errno = 0;
    double v = std::strtod(buf.c_str(), nullptr);
    if (errno == ERANGE && std::isinf(v)) fail(p, "number " + buf + " is out of range");
    t.decimal_value = v;
    return finish(Tok::kDecimal, n);
  }
  if (size_t n = matchDimLabels(s, p)) return finish(Tok::kDimLabels, n);
  if (size_t n = matchDxD(s, p)) return finish(Tok::kDxD, n);
  if (size_t n = matchPad(s, p)) return finish(Tok::kPad, n);
  if (size_t n = matchInt(s, p)) {
    std::string_view digits = s.substr(p, n);
    bool negative = digits[0] == '-';
    uint64_t mag = 0;
    for (char c : digits.substr(negative ? 1 : 0)) {
      uint64_t d = static_cast<uint64_t>(c - '0');
      if (mag > (std::numeric_limits<uint64_t>::max() - d) / 10) {
        fail(p, "integer " + std::string(digits) + " does not fit in 64 bits");
      }
      mag = mag * 10 + d;
    }
    if (negative) {
      if (mag > uint64_t{1} << 63)
        fail(p, "integer " + std::string(digits) + " does not fit in 64 bits");
      t.int_value = static_cast<int64_t>(0 - mag);
    } else {
      t.int_value = static_cast<int64_t>(mag);
      t.int_is_big_unsigned = mag > static_cast<uint64_t>(std::numeric_limits<int64_t>::max());
    }
    return finish(Tok::kInt, n);
  }
  if (startsWith(s, p, "-inf") && !(p + 4 < s.size() && isIdentChar(s[p + 4]))) {
    return finish(Tok::kNegInf, 4);
  }
  if (startsWith(s, p, "-nan") && !(p + 4 < s.size() && isIdentChar(s[p + 4]))) {
    size_t end = nanPayload(p + 4, &t.nan_payload);
    t.decimal_value = -std::numeric_limits<double>::quiet_NaN();
    return finish(Tok::kDecimal, end - p);
  }
  if (s[p] == '?') return finish(Tok::kQuestion, 1);
  fail(p, "unexpected character '-'", "'-' starts a number, '-inf', '-nan' or '->'");
}

Token Lexer::lexIdentifier(size_t p) const {
  const std::string_view s = text_;
  size_t i = p;
  while (i < s.size() && isIdentChar(s[i]))
    ++i;
  Token t;
  t.begin = p;
  t.text = s.substr(p, i - p);
  if (i < s.size() && s[i] == ':') {
    t.kind = Tok::kName;
    t.end = i + 1;
    return t;
  }
  if (i < s.size() && s[i] == '=') {
    t.kind = Tok::kAttrName;
    t.end = i + 1;
    return t;
  }
  if (t.text == "nan") {
    t.kind = Tok::kDecimal;
    t.decimal_value = std::numeric_limits<double>::quiet_NaN();
    t.end = nanPayload(i, &t.nan_payload);
    t.text = s.substr(p, t.end - p);
    return t;
  }
  if (size_t n = matchDimLabels(s, p)) {
    t.kind = Tok::kDimLabels;
    t.end = p + n;
    t.text = s.substr(p, n);
    return t;
  }
  t.kind = Tok::kIdent;
  t.end = i;
  return t;
}

size_t Lexer::lexString(size_t p) const {
  const std::string_view s = text_;
  size_t i = p + 1;
  while (i < s.size() && s[i] != '"') {
    if (s[i] == '\\') ++i;
    ++i;
  }
  if (i >= s.size()) fail(p, "unterminated string", "close it with '\"'");
  size_t error_at = 0;
  if (!unescape(s.substr(p + 1, i - p - 1), nullptr, &error_at)) {
    fail(p + 1 + error_at, "invalid escape sequence in string");
  }
  return i + 1;
}

std::string Lexer::stringValue(const Token& t) const {
  std::string out;
  size_t ignored = 0;
  unescape(t.text.substr(1, t.text.size() - 2), &out, &ignored);
  return out;
}

Token Lexer::lex(size_t offset) const {
  const std::string_view s = text_;
  size_t p = skipBlanks(offset);
  Token t;
  t.begin = p;
  t.space_before = p != offset;
  if (p >= s.size()) {
    t.kind = Tok::kEof;
    t.end = p;
    return t;
  }
  auto single = [&](Tok kind, size_t len = 1) {
    t.kind = kind;
    t.end = p + len;
    t.text = s.substr(p, len);
    return t;
  };
  char c = s[p];
  switch (c) {
    case '=':
      return single(Tok::kEqual);
    case ',':
      return single(Tok::kComma);
    case ':':
      return single(Tok::kColon);
    case '*':
      return single(Tok::kStar);
    case '#':
      return single(Tok::kHash);
    case '+':
      return single(Tok::kPlus);
    case '~':
      return single(Tok::kTilde);
    case '[':
      return single(Tok::kLSquare);
    case ']':
      return single(Tok::kRSquare);
    case '{':
      return single(Tok::kLBrace);
    case '}':
      return single(Tok::kRBrace);
    case '(':
      return single(Tok::kLParen);
    case ')':
      return single(Tok::kRParen);
    case '<':
      if (p + 1 < s.size() && s[p + 1] == '=') return single(Tok::kLeq, 2);
      fail(p, "unexpected character '<'", "'<' only appears in '<=' (bounded dynamic dimension)");
    case '"': {
      size_t end = lexString(p);
      return single(Tok::kString, end - p);
    }
    case '%': {
      if (p + 1 >= s.size() || !isIdentStart(s[p + 1])) {
        fail(p, "expected a name after '%'", "names start with a letter or '_'");
      }
      size_t i = p + 1;
      while (i < s.size() && isIdentChar(s[i]))
        ++i;
      t.kind = Tok::kName;
      t.end = i;
      t.text = s.substr(p + 1, i - p - 1);
      return t;
    }
    case '.':
      if (startsWith(s, p, "...")) return single(Tok::kDots, 3);
      if (!matchDecimal(s, p)) fail(p, "unexpected character '.'");
      break;
    case '-':
      if (p + 1 < s.size() && s[p + 1] == '>') return single(Tok::kArrow, 2);
      break;
    case '/':
      fail(p, "unexpected character '/'", "comments are '// ...' or '/* ... */'");
    default:
      break;
  }
  if (isDigit(c) || c == '?' || c == '-' || c == '.' || isIdentStart(c)) {
    Token w = isIdentStart(c) ? lexIdentifier(p) : lexNumberLike(p);
    w.space_before = t.space_before;
    return w;
  }
  auto byte = static_cast<unsigned char>(c);
  char buf[8];
  std::snprintf(buf, sizeof(buf), "0x%02x", byte);
  if (byte >= 0x80) {
    fail(p, std::string("unexpected non-ASCII byte ") + buf + " outside a string or comment");
  }
  fail(p, std::string("unexpected character ") +
              (byte >= 0x20 && byte < 0x7f ? "'" + std::string(1, c) + "'" : std::string(buf)));
}

size_t Lexer::skipJsonDict(size_t p) const {
  const std::string_view s = text_;
  int depth = 0;
  for (size_t i = p; i < s.size(); ++i) {
    char c = s[i];
    if (c == '"') {
      i = lexString(i) - 1;
    } else if (c == '{') {
      ++depth;
    } else if (c == '}') {
      if (--depth == 0) return i + 1;
    }
  }
  fail(p, "unterminated '{' in a JSON-style value", "balance the braces");
}

std::string Lexer::canonical(size_t begin, size_t end, bool json) const {
  const std::string_view s = text_;
  std::string out;
  out.reserve(end - begin);
  bool pending_space = false;
  size_t i = begin;
  while (i < end) {
    char c = s[i];
    bool comment = !json && c == '/' && i + 1 < end && (s[i + 1] == '/' || s[i + 1] == '*');
    if (isBlank(c) || comment) {
      size_t next = comment ? skipBlanks(i) : i + 1;
      if (json && !comment) {
        while (next < end && isBlank(s[next]))
          ++next;
      }
      i = next;
      pending_space = !out.empty();
      continue;
    }
    if (pending_space) out += ' ';
    pending_space = false;
    if (c == '"') {
      size_t close = lexString(i);
      out.append(s.substr(i, close - i));
      i = close;
    } else {
      out += c;
      ++i;
    }
  }
  return out;
}

}  // namespace tacit::hlo
