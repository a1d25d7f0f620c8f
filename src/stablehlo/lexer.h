// The lexer of MLIR's textual form, as far as StableHLO modules use it (docs/stablehlo.md).
//
// A cursor over a SourceFile: next() returns the token at or after the cursor, skipping blanks and
// `//` comments. Types such as `tensor<4x8xf32>` do not lex as tokens (`4x8xf32` is one word in
// MLIR's dimension-list grammar), so the parser reads the text between `<` and its `>` through
// rawAngle(). Every malformed byte sequence throws a DiagnosticError at its position.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "support/source.h"

namespace tacit::stablehlo {

enum class Tok : uint8_t {
  kEof,
  kValue,   // %name or %name#N (text: the name; result: N or -1)
  kSymbol,  // @name or @"quoted" (text: the name, unescaped)
  kBlock,   // ^bb0 (text without ^)
  kHash,    // #alias, #dialect.attr, #dialect (text without #)
  kBang,    // !dialect.type (text without !)
  kIdent,   // bare identifier: letters, digits, _ $ . (not starting with a digit)
  kInt,     // [-]digits or 0x hex digits
  kFloat,   // [-]digits.digits[e[+-]digits]
  kString,  // "..." (text: unescaped)
  kLParen,
  kRParen,
  kLSquare,
  kRSquare,
  kLBrace,
  kRBrace,
  kLess,
  kGreater,
  kComma,
  kColon,
  kEqual,
  kArrow,     // ->
  kQuestion,  // ?
  kStar,      // *
};

std::string_view tokName(Tok t);  // for diagnostics: "'('", "a value name", ...

struct Token {
  Tok kind = Tok::kEof;
  size_t begin = 0;
  size_t end = 0;
  std::string text;     // see Tok
  int64_t result = -1;  // kValue: the N of %name#N
  bool is(Tok k) const { return kind == k; }
  bool isIdent(std::string_view s) const { return kind == Tok::kIdent && text == s; }
};

class Lexer {
 public:
  explicit Lexer(const SourceFile& file) : file_(file), text_(file.view()) {}

  const SourceFile& file() const { return file_; }
  size_t offset() const { return pos_; }
  void seek(size_t offset) { pos_ = offset; }

  Token next();
  Token peek();
  // The cursor is just after a `<`: returns the text up to its matching `>` (nested <> counted)
  // and moves past the `>`.
  std::string_view rawAngle();
  // Offset of the first non-blank, non-comment byte at or after the cursor.
  size_t skipBlanks();

  [[noreturn]] void fail(size_t offset, std::string message, std::string hint = {}) const {
    file_.fail(offset, std::move(message), std::move(hint));
  }

 private:
  Token lexNumber(size_t start);
  std::string lexString(size_t start, size_t* end);
  size_t lexWord(size_t start) const;  // end of [A-Za-z0-9_$.-]* from start

  const SourceFile& file_;
  std::string_view text_;
  size_t pos_ = 0;
};

}  // namespace tacit::stablehlo
