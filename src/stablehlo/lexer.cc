#include "stablehlo/lexer.h"

#include <cctype>

namespace tacit::stablehlo {
namespace {

bool isAlpha(char c) {
  return std::isalpha(static_cast<unsigned char>(c)) != 0;
}
bool isDigit(char c) {
  return c >= '0' && c <= '9';
}
bool isHex(char c) {
  return std::isxdigit(static_cast<unsigned char>(c)) != 0;
}
// MLIR's suffix-id characters (value and block names) and bare-id characters.
bool isSuffixChar(char c) {
  return isAlpha(c) || isDigit(c) || c == '$' || c == '.' || c == '_' || c == '-';
}
bool isBareChar(char c) {
  return isAlpha(c) || isDigit(c) || c == '$' || c == '.' || c == '_';
}

}  // namespace

std::string_view tokName(Tok t) {
  switch (t) {
    case Tok::kEof:
      return "the end of the file";
    case Tok::kValue:
      return "a value name (%name)";
    case Tok::kSymbol:
      return "a symbol (@name)";
    case Tok::kBlock:
      return "a block label (^bb0)";
    case Tok::kHash:
      return "an attribute (#...)";
    case Tok::kBang:
      return "a dialect type (!...)";
    case Tok::kIdent:
      return "an identifier";
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
    case Tok::kLess:
      return "'<'";
    case Tok::kGreater:
      return "'>'";
    case Tok::kComma:
      return "','";
    case Tok::kColon:
      return "':'";
    case Tok::kEqual:
      return "'='";
    case Tok::kArrow:
      return "'->'";
    case Tok::kQuestion:
      return "'?'";
    case Tok::kStar:
      return "'*'";
  }
  return "a token";
}

size_t Lexer::skipBlanks() {
  size_t p = pos_;
  while (p < text_.size()) {
    char c = text_[p];
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
      ++p;
    } else if (c == '/' && p + 1 < text_.size() && text_[p + 1] == '/') {
      while (p < text_.size() && text_[p] != '\n')
        ++p;
    } else {
      break;
    }
  }
  return p;
}

size_t Lexer::lexWord(size_t start) const {
  size_t p = start;
  while (p < text_.size() && isSuffixChar(text_[p]))
    ++p;
  return p;
}

std::string Lexer::lexString(size_t start, size_t* end) {
  std::string out;
  size_t p = start + 1;
  while (true) {
    if (p >= text_.size() || text_[p] == '\n') {
      fail(start, "unterminated string", "close it with '\"' on the same line");
    }
    char c = text_[p];
    if (c == '"') break;
    if (c != '\\') {
      out += c;
      ++p;
      continue;
    }
    if (p + 1 >= text_.size()) fail(p, "unterminated escape sequence in a string");
    char e = text_[p + 1];
    if (e == '\\' || e == '"') {
      out += e;
      p += 2;
    } else if (e == 'n') {
      out += '\n';
      p += 2;
    } else if (e == 't') {
      out += '\t';
      p += 2;
    } else if (p + 2 < text_.size() && isHex(e) && isHex(text_[p + 2])) {
      // MLIR escapes other bytes as two hex digits: "\0A".
      out += static_cast<char>(std::stoi(std::string(text_.substr(p + 1, 2)), nullptr, 16));
      p += 3;
    } else {
      fail(p, "unknown escape sequence '\\" + std::string(1, e) + "' in a string",
           "MLIR strings escape \\\\, \\\", \\n, \\t and two hex digits (\\0A)");
    }
  }
  *end = p + 1;
  return out;
}

Token Lexer::lexNumber(size_t start) {
  Token t;
  t.begin = start;
  size_t p = start;
  if (text_[p] == '-') ++p;
  if (p + 1 < text_.size() && text_[p] == '0' && text_[p + 1] == 'x') {
    p += 2;
    size_t digits = p;
    while (p < text_.size() && isHex(text_[p]))
      ++p;
    if (p == digits) fail(start, "a hexadecimal number needs digits after '0x'");
    t.kind = Tok::kInt;
  } else {
    while (p < text_.size() && isDigit(text_[p]))
      ++p;
    t.kind = Tok::kInt;
    if (p < text_.size() && text_[p] == '.') {
      t.kind = Tok::kFloat;
      ++p;
      while (p < text_.size() && isDigit(text_[p]))
        ++p;
      if (p < text_.size() && (text_[p] == 'e' || text_[p] == 'E')) {
        ++p;
        if (p < text_.size() && (text_[p] == '+' || text_[p] == '-')) ++p;
        size_t digits = p;
        while (p < text_.size() && isDigit(text_[p]))
          ++p;
        if (p == digits) fail(start, "a floating-point exponent needs digits");
      }
    }
  }
  t.end = p;
  t.text = std::string(text_.substr(start, p - start));
  return t;
}

Token Lexer::next() {
  size_t p = skipBlanks();
  Token t;
  t.begin = p;
  if (p >= text_.size()) {
    t.end = p;
    pos_ = p;
    return t;
  }
  char c = text_[p];
  auto punct = [&](Tok kind, size_t length) {
    t.kind = kind;
    t.end = p + length;
    return t;
  };
  switch (c) {
    case '(':
      t = punct(Tok::kLParen, 1);
      break;
    case ')':
      t = punct(Tok::kRParen, 1);
      break;
    case '[':
      t = punct(Tok::kLSquare, 1);
      break;
    case ']':
      t = punct(Tok::kRSquare, 1);
      break;
    case '{':
      t = punct(Tok::kLBrace, 1);
      break;
    case '}':
      t = punct(Tok::kRBrace, 1);
      break;
    case '<':
      t = punct(Tok::kLess, 1);
      break;
    case '>':
      t = punct(Tok::kGreater, 1);
      break;
    case ',':
      t = punct(Tok::kComma, 1);
      break;
    case ':':
      t = punct(Tok::kColon, 1);
      break;
    case '=':
      t = punct(Tok::kEqual, 1);
      break;
    case '?':
      t = punct(Tok::kQuestion, 1);
      break;
    case '*':
      t = punct(Tok::kStar, 1);
      break;
    case '"': {
      t.kind = Tok::kString;
      t.text = lexString(p, &t.end);
      break;
    }
    case '%':
    case '^': {
      size_t end = lexWord(p + 1);
      if (end == p + 1) {
        fail(p, std::string("expected a name after '") + c + "'",
             c == '%' ? "values are named %0, %arg0, %cst_1, ..." : "blocks are labelled ^bb0");
      }
      t.kind = c == '%' ? Tok::kValue : Tok::kBlock;
      t.text = std::string(text_.substr(p + 1, end - p - 1));
      if (c == '%' && end < text_.size() && text_[end] == '#') {
        size_t digits = end + 1;
        size_t q = digits;
        while (q < text_.size() && isDigit(text_[q]))
          ++q;
        if (q == digits || q - digits > 9) fail(end, "expected a result number after '#'");
        t.result = std::stoll(std::string(text_.substr(digits, q - digits)));
        end = q;
      }
      t.end = end;
      break;
    }
    case '@': {
      t.kind = Tok::kSymbol;
      if (p + 1 < text_.size() && text_[p + 1] == '"') {
        t.text = lexString(p + 1, &t.end);
      } else {
        size_t end = lexWord(p + 1);
        if (end == p + 1) fail(p, "expected a symbol name after '@'");
        t.text = std::string(text_.substr(p + 1, end - p - 1));
        t.end = end;
      }
      break;
    }
    case '#':
    case '!': {
      size_t end = p + 1;
      while (end < text_.size() && isBareChar(text_[end]))
        ++end;
      if (end == p + 1) fail(p, std::string("expected a name after '") + c + "'");
      t.kind = c == '#' ? Tok::kHash : Tok::kBang;
      t.text = std::string(text_.substr(p + 1, end - p - 1));
      t.end = end;
      break;
    }
    case '-':
      if (p + 1 < text_.size() && text_[p + 1] == '>') {
        t = punct(Tok::kArrow, 2);
      } else if (p + 1 < text_.size() && isDigit(text_[p + 1])) {
        t = lexNumber(p);
      } else {
        fail(p, "unexpected '-'", "'-' starts a negative number or the arrow '->'");
      }
      break;
    default:
      if (isDigit(c)) {
        t = lexNumber(p);
      } else if (isAlpha(c) || c == '_') {
        size_t end = p;
        while (end < text_.size() && isBareChar(text_[end]))
          ++end;
        t.kind = Tok::kIdent;
        t.text = std::string(text_.substr(p, end - p));
        t.end = end;
      } else {
        fail(p, "unexpected character '" + std::string(1, c) + "'");
      }
  }
  pos_ = t.end;
  return t;
}

Token Lexer::peek() {
  size_t saved = pos_;
  Token t = next();
  pos_ = saved;
  return t;
}

std::string_view Lexer::rawAngle() {
  size_t start = pos_;
  int depth = 1;
  size_t p = pos_;
  while (p < text_.size()) {
    char c = text_[p];
    if (c == '"') {
      size_t end = 0;
      lexString(p, &end);
      p = end;
      continue;
    }
    if (c == '-' && p + 1 < text_.size() && text_[p + 1] == '>') {
      p += 2;  // an arrow inside, as in a function type
      continue;
    }
    if (c == '<') {
      if (++depth > 100) fail(p, "nesting deeper than 100 levels");
    } else if (c == '>' && --depth == 0) {
      pos_ = p + 1;
      return text_.substr(start, p - start);
    }
    ++p;
  }
  fail(start == 0 ? 0 : start - 1, "unterminated '<'", "close it with '>'");
}

}  // namespace tacit::stablehlo
