// The .taidl lexer (docs/taidl.md section 1), also meant for `.tasm` programs.
//
// Stateless over a SourceFile: lex(offset) returns the token starting at the first non-blank
// byte at or after `offset` (comments `# ...` are blanks), so a parser can look ahead and re-lex
// in another mode: lexOpcode() reads HLO opcode spellings with hyphens (`bitcast-convert`), which
// would otherwise be subtractions. `%name` is a value token when a name character follows the `%`
// immediately; in operator position a parser treats such a token as the `%` operator and
// continues at begin + 1 (Lexer::splitPercent).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "support/source.h"

namespace tacit::taidl {

enum class Tok : uint8_t {
  kEof,
  kIdent,       // identifiers and keywords
  kValue,       // %In1 (text excludes %)
  kReg,         // $dataflow (text excludes $)
  kInt,         // decimal or 0x hex
  kFloat,       // 0.5, 1e-05 (inf and nan are identifiers)
  kString,      // "..." (text is the raw quoted text)
  kLParen,      // (
  kRParen,      // )
  kLSquare,     // [
  kRSquare,     // ]
  kLBrace,      // {
  kRBrace,      // }
  kComma,       // ,
  kSemi,        // ;
  kColon,       // :
  kAssign,      // =
  kEq,          // ==
  kNe,          // !=
  kLt,          // <
  kLe,          // <=
  kGt,          // >
  kGe,          // >=
  kPlus,        // +
  kMinus,       // -
  kStar,        // *
  kSlash,       // /
  kSlashSlash,  // //
  kPercent,     // % (not followed by a name character)
  kAndAnd,      // &&
  kOrOr,        // ||
  kBang,        // !
  kQuestion,    // ?
  kAt,          // @ (.tasm)
};

struct Token {
  Tok kind = Tok::kEof;
  uint32_t begin = 0;  // offset of the first character (the % of a value, the $ of a register)
  uint32_t end = 0;
  std::string_view text;  // identifier/value/register name, number text, or raw string
  int64_t int_value = 0;
  double float_value = 0;

  bool is(Tok k) const { return kind == k; }
  bool isIdent(std::string_view s) const { return kind == Tok::kIdent && text == s; }
};

// "'('", "an identifier", ... for "expected X" messages.
std::string tokenDescription(Tok kind);
// The token as it appears in the text, quoted: "'foo'", "end of file".
std::string tokenText(const Token& t);

// True for the language's keywords (docs/taidl.md section 1).
bool isKeyword(std::string_view word);

class Lexer {
 public:
  explicit Lexer(const SourceFile& file) : file_(file), text_(file.view()) {}

  const SourceFile& file() const { return file_; }

  Token lex(size_t offset) const;
  // An HLO opcode spelling: [A-Za-z][A-Za-z0-9_-]* (hyphens allowed).
  Token lexOpcode(size_t offset) const;
  // The unescaped value of a kString token.
  std::string stringValue(const Token& t) const;
  size_t skipBlanks(size_t offset) const;

  [[noreturn]] void fail(size_t offset, std::string message, std::string hint = {}) const {
    file_.fail(offset, std::move(message), std::move(hint));
  }

 private:
  Token lexNumber(size_t start) const;
  Token lexString(size_t start) const;

  const SourceFile& file_;
  std::string_view text_;
};

}  // namespace tacit::taidl
