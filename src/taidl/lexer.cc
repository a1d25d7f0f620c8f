#include "taidl/lexer.h"

#include <array>
#include <cstdio>
#include <cstdlib>
#include <string>

namespace tacit::taidl {
namespace {

bool isIdentStart(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}
bool isDigit(char c) {
  return c >= '0' && c <= '9';
}
bool isIdentChar(char c) {
  return isIdentStart(c) || isDigit(c);
}
bool isValueChar(char c) {
  return isIdentChar(c) || c == '.';
}
bool isHexDigit(char c) {
  return isDigit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

constexpr std::array<std::string_view, 24> kKeywords = {
    "isa",   "param",  "const",  "buffer", "of",    "reg",   "instruction", "macro",
    "reads", "writes", "size",   "read",   "write", "set",   "require",     "cost",
    "if",    "else",   "repeat", "in",     "true",  "false", "min",         "max"};

}  // namespace

bool isKeyword(std::string_view word) {
  for (std::string_view k : kKeywords) {
    if (k == word) return true;
  }
  return false;
}

std::string tokenDescription(Tok kind) {
  switch (kind) {
    case Tok::kEof:
      return "end of file";
    case Tok::kIdent:
      return "an identifier";
    case Tok::kValue:
      return "a value name (%name)";
    case Tok::kReg:
      return "a register ($name)";
    case Tok::kInt:
      return "an integer";
    case Tok::kFloat:
      return "a floating-point number";
    case Tok::kString:
      return "a string";
    case Tok::kLParen:
      return "'('";
    case Tok::kRParen:
      return "')'";
    case Tok::kLSquare:
      return "'['";
    case Tok::kRSquare:
      return "']'";
    case Tok::kLBrace:
      return "'{'";
    case Tok::kRBrace:
      return "'}'";
    case Tok::kComma:
      return "','";
    case Tok::kSemi:
      return "';'";
    case Tok::kColon:
      return "':'";
    case Tok::kAssign:
      return "'='";
    case Tok::kEq:
      return "'=='";
    case Tok::kNe:
      return "'!='";
    case Tok::kLt:
      return "'<'";
    case Tok::kLe:
      return "'<='";
    case Tok::kGt:
      return "'>'";
    case Tok::kGe:
      return "'>='";
    case Tok::kPlus:
      return "'+'";
    case Tok::kMinus:
      return "'-'";
    case Tok::kStar:
      return "'*'";
    case Tok::kSlash:
      return "'/'";
    case Tok::kSlashSlash:
      return "'//'";
    case Tok::kPercent:
      return "'%'";
    case Tok::kAndAnd:
      return "'&&'";
    case Tok::kOrOr:
      return "'||'";
    case Tok::kBang:
      return "'!'";
    case Tok::kQuestion:
      return "'?'";
    case Tok::kAt:
      return "'@'";
  }
  return "a token";
}

std::string tokenText(const Token& t) {
  switch (t.kind) {
    case Tok::kEof:
      return "end of file";
    case Tok::kValue:
      return "'%" + std::string(t.text) + "'";
    case Tok::kReg:
      return "'$" + std::string(t.text) + "'";
    default:
      return "'" + std::string(t.text) + "'";
  }
}

size_t Lexer::skipBlanks(size_t pos) const {
  while (pos < text_.size()) {
    char c = text_[pos];
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v') {
      ++pos;
    } else if (c == '#') {
      while (pos < text_.size() && text_[pos] != '\n')
        ++pos;
    } else {
      break;
    }
  }
  return pos;
}

Token Lexer::lexNumber(size_t start) const {
  size_t pos = start;
  Token t;
  t.begin = static_cast<uint32_t>(start);
  if (text_[pos] == '0' && pos + 1 < text_.size() &&
      (text_[pos + 1] == 'x' || text_[pos + 1] == 'X')) {
    pos += 2;
    size_t digits = pos;
    uint64_t v = 0;
    while (pos < text_.size() && isHexDigit(text_[pos])) {
      char c = text_[pos];
      uint64_t d = isDigit(c) ? uint64_t(c - '0') : uint64_t((c | 0x20) - 'a' + 10);
      if (v > (uint64_t(INT64_MAX) - d) / 16)
        fail(start, "integer literal is too large (the limit is 2^63 - 1)");
      v = v * 16 + d;
      ++pos;
    }
    if (pos == digits) fail(start, "expected hexadecimal digits after '0x'");
    if (pos < text_.size() && (isIdentChar(text_[pos]) || text_[pos] == '.'))
      fail(pos, "malformed number: unexpected '" + std::string(1, text_[pos]) + "'");
    t.kind = Tok::kInt;
    t.int_value = static_cast<int64_t>(v);
  } else {
    while (pos < text_.size() && isDigit(text_[pos]))
      ++pos;
    bool is_float = false;
    if (pos < text_.size() && text_[pos] == '.') {
      is_float = true;
      ++pos;
      while (pos < text_.size() && isDigit(text_[pos]))
        ++pos;
    }
    if (pos < text_.size() && (text_[pos] == 'e' || text_[pos] == 'E')) {
      size_t e = pos + 1;
      if (e < text_.size() && (text_[e] == '+' || text_[e] == '-')) ++e;
      if (e >= text_.size() || !isDigit(text_[e]))
        fail(pos, "malformed number: expected exponent digits");
      is_float = true;
      pos = e;
      while (pos < text_.size() && isDigit(text_[pos]))
        ++pos;
    }
    if (pos < text_.size() && (isIdentChar(text_[pos]) || text_[pos] == '.'))
      fail(pos, "malformed number: unexpected '" + std::string(1, text_[pos]) + "'");
    std::string digits(text_.substr(start, pos - start));
    if (is_float) {
      t.kind = Tok::kFloat;
      t.float_value = std::strtod(digits.c_str(), nullptr);
    } else {
      t.kind = Tok::kInt;
      uint64_t v = 0;
      for (char c : digits) {
        auto d = static_cast<uint64_t>(c - '0');
        if (v > (uint64_t(INT64_MAX) - d) / 10)
          fail(start, "integer literal is too large (the limit is 2^63 - 1)");
        v = v * 10 + d;
      }
      t.int_value = static_cast<int64_t>(v);
    }
  }
  t.end = static_cast<uint32_t>(pos);
  t.text = text_.substr(start, pos - start);
  return t;
}

Token Lexer::lexString(size_t start) const {
  size_t pos = start + 1;
  while (pos < text_.size() && text_[pos] != '"') {
    if (text_[pos] == '\n') fail(start, "unterminated string");
    if (text_[pos] == '\\') {
      ++pos;
      if (pos >= text_.size()) break;
      char c = text_[pos];
      if (c != '"' && c != '\\' && c != 'n' && c != 't' && c != 'r' && c != '0')
        fail(pos - 1, "unknown escape sequence '\\" + std::string(1, c) + "'",
             "the escapes are \\\" \\\\ \\n \\t \\r \\0");
    }
    ++pos;
  }
  if (pos >= text_.size()) fail(start, "unterminated string");
  Token t;
  t.kind = Tok::kString;
  t.begin = static_cast<uint32_t>(start);
  t.end = static_cast<uint32_t>(pos + 1);
  t.text = text_.substr(start, pos + 1 - start);
  return t;
}

std::string Lexer::stringValue(const Token& t) const {
  std::string out;
  for (size_t i = 1; i + 1 < t.text.size(); ++i) {
    char c = t.text[i];
    if (c != '\\') {
      out += c;
      continue;
    }
    char e = t.text[++i];
    out += e == 'n' ? '\n' : e == 't' ? '\t' : e == 'r' ? '\r' : e == '0' ? '\0' : e;
  }
  return out;
}

Token Lexer::lexOpcode(size_t offset) const {
  size_t start = skipBlanks(offset);
  if (start >= text_.size() || !isIdentStart(text_[start])) return lex(offset);
  size_t pos = start;
  while (pos < text_.size() && (isIdentChar(text_[pos]) || text_[pos] == '-'))
    ++pos;
  Token t;
  t.kind = Tok::kIdent;
  t.begin = static_cast<uint32_t>(start);
  t.end = static_cast<uint32_t>(pos);
  t.text = text_.substr(start, pos - start);
  return t;
}

Token Lexer::lex(size_t offset) const {
  size_t start = skipBlanks(offset);
  Token t;
  t.begin = t.end = static_cast<uint32_t>(start);
  if (start >= text_.size()) return t;
  char c = text_[start];
  char next = start + 1 < text_.size() ? text_[start + 1] : '\0';
  auto simple = [&](Tok kind, size_t len) {
    t.kind = kind;
    t.end = static_cast<uint32_t>(start + len);
    t.text = text_.substr(start, len);
    return t;
  };
  if (isIdentStart(c)) {
    size_t pos = start;
    while (pos < text_.size() && isIdentChar(text_[pos]))
      ++pos;
    return simple(Tok::kIdent, pos - start);
  }
  if (isDigit(c)) return lexNumber(start);
  switch (c) {
    case '%': {
      if (!isValueChar(next)) return simple(Tok::kPercent, 1);
      size_t pos = start + 1;
      while (pos < text_.size() && isValueChar(text_[pos]))
        ++pos;
      t = simple(Tok::kValue, pos - start);
      t.text = text_.substr(start + 1, pos - start - 1);
      return t;
    }
    case '$': {
      if (!isIdentStart(next)) fail(start, "expected a register name after '$'");
      size_t pos = start + 1;
      while (pos < text_.size() && isIdentChar(text_[pos]))
        ++pos;
      t = simple(Tok::kReg, pos - start);
      t.text = text_.substr(start + 1, pos - start - 1);
      return t;
    }
    case '"':
      return lexString(start);
    case '(':
      return simple(Tok::kLParen, 1);
    case ')':
      return simple(Tok::kRParen, 1);
    case '[':
      return simple(Tok::kLSquare, 1);
    case ']':
      return simple(Tok::kRSquare, 1);
    case '{':
      return simple(Tok::kLBrace, 1);
    case '}':
      return simple(Tok::kRBrace, 1);
    case ',':
      return simple(Tok::kComma, 1);
    case ';':
      return simple(Tok::kSemi, 1);
    case ':':
      return simple(Tok::kColon, 1);
    case '?':
      return simple(Tok::kQuestion, 1);
    case '@':
      return simple(Tok::kAt, 1);
    case '+':
      return simple(Tok::kPlus, 1);
    case '-':
      return simple(Tok::kMinus, 1);
    case '*':
      return simple(Tok::kStar, 1);
    case '=':
      return next == '=' ? simple(Tok::kEq, 2) : simple(Tok::kAssign, 1);
    case '!':
      return next == '=' ? simple(Tok::kNe, 2) : simple(Tok::kBang, 1);
    case '<':
      return next == '=' ? simple(Tok::kLe, 2) : simple(Tok::kLt, 1);
    case '>':
      return next == '=' ? simple(Tok::kGe, 2) : simple(Tok::kGt, 1);
    case '/':
      return next == '/' ? simple(Tok::kSlashSlash, 2) : simple(Tok::kSlash, 1);
    case '&':
      if (next == '&') return simple(Tok::kAndAnd, 2);
      fail(start, "unexpected '&'", "logical and is '&&'");
    case '|':
      if (next == '|') return simple(Tok::kOrOr, 2);
      fail(start, "unexpected '|'", "logical or is '||'");
    default:
      break;
  }
  auto byte = static_cast<unsigned char>(c);
  if (byte >= 0x20 && byte < 0x7f) fail(start, "unexpected character '" + std::string(1, c) + "'");
  char buf[8];
  std::snprintf(buf, sizeof buf, "0x%02x", byte);
  fail(start, std::string("unexpected byte ") + buf);
}

}  // namespace tacit::taidl
