// The parser's state, shared by parser.cc (modules, functions, generic ops, attributes, types) and
// pretty.cc (the pretty form of each op). Internal to the stablehlo module.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "stablehlo/lexer.h"
#include "stablehlo/syntax.h"

namespace tacit::stablehlo {

// The op has as many operand types as operands, and as many result types as results.
void checkCounts(const SourceFile& file, const Op& op);

class Parser {
 public:
  explicit Parser(const SourceFile& file) : lex_(file) {}

  Module parseFile();

  // ---- tokens ----
  Token expect(Tok kind, std::string_view what);
  void expectIdent(std::string_view word, std::string_view context);
  bool accept(Tok kind);
  bool acceptIdent(std::string_view word);
  SourceLoc locOf(size_t offset) const { return lex_.file().locate(offset); }
  SourceLoc here() { return locOf(lex_.skipBlanks()); }
  [[noreturn]] void failAt(const Token& t, std::string message, std::string hint = {}) const {
    lex_.fail(t.begin, std::move(message), std::move(hint));
  }
  [[noreturn]] void failExpected(std::string_view what, std::string hint = {});

  // ---- types and attributes ----
  Type parseType();
  // `(T, T) -> T` or `(T) -> (T, T)`; a single type after `:` where the op allows it is the
  // caller's.
  void parseFunctionType(std::vector<Type>& inputs, std::vector<Type>& results);
  std::vector<Type> parseTypeList();  // T, T, ... (at least one)
  Attr parseAttr();
  void parseAttrDict(NamedAttrs& into);  // at '{'
  void parseOptionalAttrDict(NamedAttrs& into) {
    if (lex_.peek().is(Tok::kLBrace)) parseAttrDict(into);
  }
  std::vector<int64_t> parseIntList();  // [1, 2]
  // Convolution dimension numbers after `dim_numbers =` or inside #stablehlo.conv<...>:
  // `[b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f]`, as a dictionary {lhs, rhs, out} of label lists.
  Attr parseConvDimensions();
  int64_t parseInt(std::string_view what);
  std::string parseOptionalLoc();  // loc(...): the name of a name location, or "#alias", or ""

  // ---- ops ----
  // `%name: type` (then `{attrs}` when `attrs`, a function's argument) and an optional location:
  // a region's or a function's argument; `what` names it in the diagnostic.
  BlockArg parseTypedArg(std::string_view what, bool attrs);
  void parseRegionBody(Region& region, bool entry_block_has_label);
  Op parseOp();
  void parseGenericOp(Op& op);
  void parsePrettyOp(Op& op);  // pretty.cc
  ValueRef parseValueRef();
  std::vector<ValueRef> parseValueRefList();  // %a, %b (possibly empty)
  Func parseFunc(SourceLoc loc);              // after `func.func`
  Func funcFromGeneric(Op& op);
  void parseModuleBody(Module& m);

  Lexer lex_;
  int depth_ = 0;
  int64_t values_ = 0;
  std::map<std::string, std::string> loc_aliases_;  // #loc3 -> name of its name location

  struct DepthGuard {
    Parser& p;
    DepthGuard(Parser& parser, size_t offset);
    ~DepthGuard() { --p.depth_; }
    DepthGuard(const DepthGuard&) = delete;
    DepthGuard& operator=(const DepthGuard&) = delete;
  };
  void countValues(int64_t n, const SourceLoc& loc);
};

}  // namespace tacit::stablehlo
