// The HLO text lexer (docs/hlo.md section 1).
//
// Stateless over a SourceFile: lex(offset) returns the token starting at the first non-blank byte
// at or after `offset`, so the parser can look ahead and re-lex freely (JSON-dict mode is a
// separate entry point). Every malformed byte sequence throws a DiagnosticError at its position.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "support/source.h"

namespace tacit::hlo {

enum class Tok : uint8_t {
  kEof,
  kEqual,      // =
  kComma,      // ,
  kColon,      // :
  kStar,       // *
  kQuestion,   // ?
  kHash,       // #
  kPlus,       // +
  kTilde,      // ~
  kLSquare,    // [
  kRSquare,    // ]
  kLBrace,     // {
  kRBrace,     // }
  kLParen,     // (
  kRParen,     // )
  kArrow,      // ->
  kLeq,        // <=
  kDots,       // ...
  kName,       // %name, or identifier immediately followed by ':' (text excludes % and :)
  kAttrName,   // identifier immediately followed by '=' (text excludes =)
  kIdent,      // any other identifier, including keywords and element-type names
  kInt,        // -?[0-9]+
  kDecimal,    // numbers with '.' or exponent, nan, -nan (with optional payload)
  kNegInf,     // -inf
  kString,     // "..." (value() is the unescaped text)
  kDimLabels,  // b01f_01io->b01f
  kDxD,        // 3x3
  kPad,        // 1_1x0_2
};

std::string_view tokName(Tok t);  // for diagnostics: "'='", "a name", ...

struct Token {
  Tok kind = Tok::kEof;
  size_t begin = 0;  // byte offset of the token's first character (the % of a name)
  size_t end = 0;    // byte offset after the token (after the ':'/'=' of names/attribute names)
  bool space_before = false;  // whitespace or a comment separates it from the previous token
  std::string_view text;      // name/identifier text, number text, or the raw "..." of strings
  // kInt: the value (values above INT64_MAX are bit-cast from uint64); kDecimal: the value.
  int64_t int_value = 0;
  bool int_is_big_unsigned = false;  // kInt in (INT64_MAX, UINT64_MAX]
  double decimal_value = 0;
  uint64_t nan_payload = 0;  // kDecimal nan(0x...): the payload, else 0

  bool is(Tok k) const { return kind == k; }
  bool isIdent(std::string_view s) const { return kind == Tok::kIdent && text == s; }
};

class Lexer {
 public:
  explicit Lexer(const SourceFile& file) : file_(file), text_(file.view()) {}

  const SourceFile& file() const { return file_; }
  std::string_view text() const { return text_; }

  // The token at or after `offset` (skipping blanks and comments).
  Token lex(size_t offset) const;
  // JSON-dict mode: `offset` is at a '{'; returns the offset after its matching '}', counting
  // braces outside double-quoted strings.
  size_t skipJsonDict(size_t offset) const;
  // The unescaped value of a kString token.
  std::string stringValue(const Token& t) const;
  // Offset of the first non-blank, non-comment byte at or after `offset`.
  size_t skipBlanks(size_t offset) const;

  // Canonical text of a source range: comments removed, each run of blanks/comments outside
  // strings replaced by one space, leading/trailing blanks dropped. `json` keeps comments (JSON
  // values in backend_config are raw text in XLA) and only collapses whitespace.
  std::string canonical(size_t begin, size_t end, bool json = false) const;

  [[noreturn]] void fail(size_t offset, std::string message, std::string hint = {}) const {
    file_.fail(offset, std::move(message), std::move(hint));
  }

 private:
  Token lexNumberLike(size_t start) const;
  Token lexIdentifier(size_t start) const;
  size_t lexString(size_t start) const;  // returns the end offset
  size_t nanPayload(size_t pos, uint64_t* payload) const;

  const SourceFile& file_;
  std::string_view text_;
};

bool isIdentStart(char c);
bool isIdentChar(char c);
// Keywords, element-type names and `nan`: a name spelled like one needs the `%` sigil.
bool isReservedWord(std::string_view s);

}  // namespace tacit::hlo
