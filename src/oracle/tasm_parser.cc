// The .tasm parser (docs/tasm.md section 2): recursive descent over the taidl lexer. Attribute
// values and loop bounds are parsed as taidl expressions over the loop variables and reduced to
// Affine with the taidl polynomial machinery (toPoly/affineIn); anything else is a diagnostic.
#include <algorithm>
#include <memory>

#include "hlo/npy_literal.h"
#include "hlo/parser.h"
#include "oracle/tasm.h"
#include "support/source.h"
#include "support/strings.h"
#include "taidl/lexer.h"
#include "taidl/poly.h"

namespace tacit::oracle {
namespace {

using taidl::Expr;
using taidl::ExprOp;
using taidl::Tok;
using taidl::Token;

constexpr int kMaxNesting = 64;         // parentheses and unary operators in one expression
constexpr size_t kMaxExprNodes = 1000;  // operators and operands of one expression
constexpr size_t kMaxSourceBytes = size_t{1} << 28;

// Tensor declarations and statement keywords; a keyword followed by '(' is a call of a unit
// that happens to have that name.
bool isDeclKeyword(std::string_view w) {
  return w == "input" || w == "output" || w == "const";
}

class Parser {
 public:
  Parser(const taidl::Isa& isa, const SourceFile& file, const ParseOptions& options)
      : isa_(isa), file_(file), lex_(file), options_(options) {
    tok_ = lex_.lex(0);
  }

  Program parse() {
    Program p;
    p.file = file_.name();
    expectIdent("kernel", "at the start of a program");
    p.name = name("the kernel name");
    expectIdent("hbm", "after the kernel name (kernel NAME hbm=BYTES {)");
    expect(Tok::kAssign, "after hbm");
    Token size = expect(Tok::kInt, "as the HBM size in bytes");
    if (size.int_value <= 0 || size.int_value > kMaxHbmBytes)
      lex_.fail(size.begin,
                "the HBM size must be between 1 and " + std::to_string(kMaxHbmBytes) + " bytes");
    p.hbm_bytes = size.int_value;
    expect(Tok::kLBrace, "to open the kernel body");
    hbm_ = p.hbm_bytes;
    while (tok_.kind == Tok::kIdent && isDeclKeyword(tok_.text) && !nextIs(Tok::kLParen))
      p.tensors.push_back(tensor(p));
    p.body = block(p);
    if (!at(Tok::kEof)) expected("end of file after the kernel's closing '}'");
    return p;
  }

 private:
  // ---- tokens ----
  bool at(Tok k) const { return tok_.kind == k; }
  bool atIdent(std::string_view s) const { return tok_.isIdent(s); }
  bool nextIs(Tok k) const { return lex_.lex(tok_.end).kind == k; }
  void advance() { tok_ = lex_.lex(tok_.end); }
  SourceLoc loc(uint32_t offset) const { return file_.locate(offset); }

  [[noreturn]] void expected(const std::string& what, const std::string& hint = {}) const {
    lex_.fail(tok_.begin, "expected " + what + ", found " + taidl::tokenText(tok_), hint);
  }
  Token expect(Tok k, const std::string& context) {
    if (!at(k)) expected(taidl::tokenDescription(k) + " " + context);
    Token t = tok_;
    advance();
    return t;
  }
  void expectIdent(std::string_view word, const std::string& context) {
    if (!atIdent(word)) expected("'" + std::string(word) + "' " + context);
    advance();
  }
  std::string name(const std::string& what) {
    if (!at(Tok::kIdent)) expected(what);
    std::string s(tok_.text);
    advance();
    return s;
  }

  // ---- tensors ----
  Tensor tensor(const Program& p) {
    Tensor t;
    t.loc = loc(tok_.begin);
    uint32_t begin = tok_.begin;
    t.kind = atIdent("input")    ? TensorKind::kInput
             : atIdent("output") ? TensorKind::kOutput
                                 : TensorKind::kConst;
    advance();
    t.name = name("a tensor name after " + std::string(tensorKindName(t.kind)));
    if (p.findTensor(t.name) != nullptr)
      lex_.fail(begin, "tensor '" + t.name + "' is declared twice");
    expect(Tok::kAt, "before the tensor's HBM byte address (name @ADDR : TYPE)");
    t.addr = expect(Tok::kInt, "as the HBM byte address").int_value;
    expect(Tok::kColon, "before the tensor's type");
    t.shape = type();
    checkPlacement(t, begin);
    if (t.kind == TensorKind::kConst) {
      expect(Tok::kAssign, "after a const's type (= VALUE or = file \"x.npy\")");
      constValue(t);
    }
    expect(Tok::kSemi, "after the tensor declaration");
    if (p.tensors.size() >= kMaxTensors)
      lex_.fail(begin, "more than " + std::to_string(kMaxTensors) + " tensors");
    return t;
  }

  hlo::Shape type() {
    uint32_t begin = tok_.begin;
    std::string dtype = name("an element type (s8, bf16, f32, ...)");
    auto pt = hlo::parsePrimitiveType(dtype);
    if (!pt || !hlo::isEvaluable(*pt))
      lex_.fail(begin, "'" + dtype + "' is not an element type", "use s8, u8, s32, bf16, f32, ...");
    expect(Tok::kLSquare, "after the element type");
    std::vector<int64_t> dims;
    int64_t bytes = hlo::byteSize(*pt);
    while (!at(Tok::kRSquare)) {
      if (!dims.empty()) expect(Tok::kComma, "between dimensions");
      Token d = expect(Tok::kInt, "as a dimension size");
      if (dims.size() >= static_cast<size_t>(taidl::kMaxRank) ||
          __builtin_mul_overflow(bytes, d.int_value, &bytes) || bytes > kMaxHbmBytes)
        lex_.fail(d.begin, "the type is too large for any HBM (at most " +
                               std::to_string(taidl::kMaxRank) + " dimensions and " +
                               std::to_string(kMaxHbmBytes) + " bytes)");
      dims.push_back(d.int_value);
    }
    advance();
    return hlo::Shape(*pt, std::move(dims));
  }

  void checkPlacement(const Tensor& t, uint32_t begin) const {
    int64_t end = t.addr + t.byteSize();  // both bounded by kMaxHbmBytes: no overflow
    if (end > hbm_)
      lex_.fail(begin,
                "tensor '" + t.name + "' [" + std::to_string(t.addr) + ", " + std::to_string(end) +
                    ") does not fit in the HBM of " + std::to_string(hbm_) + " bytes",
                "HBM overflow: enlarge hbm= in the kernel header or move the tensor");
  }

  void constValue(Tensor& t) {
    uint32_t begin = tok_.begin;
    if (atIdent("file") && nextIs(Tok::kString)) {
      advance();
      Token s = tok_;
      t.file = lex_.stringValue(s);
      loadNpy(t, s.begin);
      advance();
      return;
    }
    // An HLO literal ("{1, 2}", "0.5", "{{1,0},{0,1}}"): the text up to the ';' at brace depth 0.
    std::string_view text = file_.view();
    size_t end = begin;
    int depth = 0;
    while (end < text.size() && !(text[end] == ';' && depth == 0)) {
      depth += text[end] == '{' ? 1 : text[end] == '}' ? -1 : 0;
      ++end;
    }
    if (end >= text.size()) lex_.fail(begin, "expected ';' after the const's value");
    std::string_view literal = text.substr(begin, end - begin);
    if (t.shape.elementCount() > static_cast<int64_t>(literal.size()) + 1)
      lex_.fail(begin, "the value has fewer elements than " + t.shape.shortStr() + " needs",
                "write every element, or use file \"x.npy\"");
    try {
      t.value = hlo::parseLiteral(literal, t.shape, file_.name());
    } catch (const DiagnosticError& e) {
      Diagnostic d = e.diagnostic();  // what() was formatted at the substring's position
      relocate(d, begin);
      throw DiagnosticError(std::move(d));
    }
    if (t.value.isUnknown()) lex_.fail(begin, "a const needs its values, not {...}");
    tok_ = lex_.lex(end);
  }

  // Moves a diagnostic located in a substring starting at `offset` to the program's position.
  void relocate(Diagnostic& d, uint32_t offset) const {
    SourceLoc base = loc(offset);
    if (!d.loc.known())
      d.loc = base;
    else if (d.loc.line == 1)
      d.loc = {base.line, base.col + d.loc.col - 1};
    else
      d.loc = {base.line + d.loc.line - 1, d.loc.col};
    d.file = file_.name();
  }

  void loadNpy(Tensor& t, uint32_t at_offset) {
    if (!options_.allow_files) lex_.fail(at_offset, "files are not allowed here");
    std::string path = t.file;
    if (path.empty() || path[0] != '/') {
      std::string dir = options_.base_dir;
      if (dir.empty()) {
        size_t slash = file_.name().rfind('/');
        dir = slash == std::string::npos ? "." : file_.name().substr(0, slash);
      }
      path = dir + "/" + path;
    }
    if (!fileExists(path))
      lex_.fail(at_offset, "cannot read " + quote(path) + ": no such regular file",
                "paths are relative to the program's folder");
    try {
      t.value = hlo::readNpyLiteral(path, t.shape, "const '" + t.name + "'");
    } catch (const DiagnosticError& e) {
      lex_.fail(at_offset, "bad .npy for const '" + t.name + "': " + e.diagnostic().message,
                e.diagnostic().hint);
    }
  }

  // ---- statements ----
  std::vector<Stmt> block(const Program& p) {
    std::vector<Stmt> out;
    while (!at(Tok::kRBrace)) {
      if (at(Tok::kEof)) expected("'}' to close the block");
      out.push_back(statement(p));
    }
    advance();
    return out;
  }

  Stmt statement(const Program& p) {
    if (tok_.kind == Tok::kIdent && isDeclKeyword(tok_.text) && !nextIs(Tok::kLParen))
      lex_.fail(tok_.begin, "tensor declarations must precede the statements",
                "move the " + std::string(tok_.text) + " declaration up");
    if (atIdent("loop") && nextIs(Tok::kIdent)) return loop(p);
    if (atIdent("debug") && !nextIs(Tok::kLParen)) return debug();
    if (at(Tok::kIdent)) return call();
    expected("a statement (an instruction call, loop or debug) or '}'");
  }

  Stmt loop(const Program& p) {
    Stmt s;
    s.kind = StmtKind::kLoop;
    s.loc = loc(tok_.begin);
    advance();
    uint32_t var_at = tok_.begin;
    s.var = name("a loop variable");
    if (std::find(vars_.begin(), vars_.end(), s.var) != vars_.end())
      lex_.fail(var_at, "loop variable '" + s.var + "' shadows an enclosing loop's variable");
    if (vars_.size() >= kMaxLoopDepth)
      lex_.fail(s.loc.line ? var_at : 0,
                "loops nest more than " + std::to_string(kMaxLoopDepth) + " deep");
    expectIdent("in", "after the loop variable (loop i in [lo, hi) { ... })");
    expect(Tok::kLSquare, "to open the loop range [lo, hi)");
    s.lo = affine("the loop's lower bound");
    expect(Tok::kComma, "between the loop bounds");
    s.hi = affine("the loop's upper bound");
    expect(Tok::kRParen, "to close the half-open loop range [lo, hi)");
    expect(Tok::kLBrace, "to open the loop body");
    vars_.push_back(s.var);
    s.body = block(p);
    vars_.pop_back();
    return s;
  }

  Stmt debug() {
    Stmt s;
    s.kind = StmtKind::kDebug;
    s.loc = loc(tok_.begin);
    advance();
    if (at(Tok::kString)) {
      s.label = lex_.stringValue(tok_);
      advance();
    }
    uint32_t buf_at = tok_.begin;
    std::string buffer = name("a buffer name after debug");
    s.buffer = isa_.findBuffer(buffer);
    if (s.buffer < 0)
      lex_.fail(
          buf_at, "the ISA " + isa_.name + " has no buffer '" + buffer + "'",
          "buffers: " + joinWith(isa_.buffers, ", ", [](const auto& b) { return b.name.text; }));
    const taidl::Buffer& b = isa_.buffers[static_cast<size_t>(s.buffer)];
    if (at(Tok::kLSquare)) {
      advance();
      while (!at(Tok::kRSquare)) {
        if (!s.ranges.empty()) expect(Tok::kComma, "between debug ranges");
        if (static_cast<int64_t>(s.ranges.size()) >= b.rank())
          lex_.fail(tok_.begin, buffer + " has " + plural(b.rank(), "dimension"));
        DebugRange r;
        r.start = affine("a debug index");
        r.end = at(Tok::kColon) ? (advance(), affine("the end of a debug range")) : r.start + 1;
        s.ranges.push_back(std::move(r));
      }
      advance();
    }
    if (atIdent("as")) {
      advance();
      uint32_t type_at = tok_.begin;
      auto pt = hlo::parsePrimitiveType(name("an element type after 'as'"));
      if (!pt || !hlo::isEvaluable(*pt) || *pt == hlo::PrimitiveType::kPred || !b.is_hbm)
        lex_.fail(type_at, "`as TYPE` views HBM (d0) bytes as a numeric element type");
      s.view = *pt;
    }
    expect(Tok::kSemi, "after the debug statement");
    return s;
  }

  Stmt call() {
    Stmt s;
    s.kind = StmtKind::kCall;
    uint32_t begin = tok_.begin;
    s.loc = loc(begin);
    std::string unit = name("an instruction name");
    s.unit = isa_.findInstruction(unit);
    if (s.unit < 0) {
      s.unit = isa_.findMacro(unit);
      s.is_macro = true;
    }
    if (s.unit < 0)
      lex_.fail(begin,
                "unknown instruction '" + unit + "' (the ISA " + isa_.name +
                    " has no instruction or macro of that name)",
                "instructions: " +
                    joinWith(isa_.instructions, ", ", [](const auto& i) { return i.name.text; }));
    const std::vector<taidl::Attribute>& decl =
        s.is_macro ? isa_.macros[static_cast<size_t>(s.unit)].attrs
                   : isa_.instructions[static_cast<size_t>(s.unit)].attrs;
    std::string names = joinWith(decl, ", ", [](const auto& a) { return a.name.text; });
    expect(Tok::kLParen, "after the instruction name");
    s.attrs.assign(decl.size(), Affine());
    std::vector<bool> given(decl.size(), false);
    size_t positional = 0;
    bool named = false;
    while (!at(Tok::kRParen)) {
      if (positional > 0 || named) expect(Tok::kComma, "between attributes");
      uint32_t arg_at = tok_.begin;
      size_t k = 0;
      if (at(Tok::kIdent) && nextIs(Tok::kAssign)) {
        named = true;
        std::string attr(tok_.text);
        auto it = std::find_if(decl.begin(), decl.end(),
                               [&](const auto& a) { return a.name.text == attr; });
        if (it == decl.end())
          lex_.fail(arg_at, unit + " has no attribute '" + attr + "'", "attributes: " + names);
        k = static_cast<size_t>(it - decl.begin());
        advance();
        advance();
      } else {
        if (named)
          lex_.fail(arg_at, "a positional attribute after a named one",
                    "give positional attributes first, in declaration order: " + names);
        if (positional >= decl.size())
          lex_.fail(arg_at, "extra attribute: " + unit + " takes " +
                                plural(static_cast<int64_t>(decl.size()), "attribute") +
                                (decl.empty() ? "" : " (" + names + ")"));
        k = positional++;
      }
      if (given[k])
        lex_.fail(arg_at, "attribute '" + decl[k].name.text + "' of " + unit + " is given twice");
      given[k] = true;
      s.attrs[k] = affine("an attribute value");
    }
    for (size_t k = 0; k < decl.size(); ++k) {
      if (!given[k])
        lex_.fail(tok_.begin, "missing attribute '" + decl[k].name.text + "' of " + unit,
                  unit + " takes (" + names + ")");
    }
    advance();
    expect(Tok::kSemi, "after the call");
    return s;
  }

  // ---- expressions ----
  // An integer expression over the enclosing loop variables that must be affine in them.
  Affine affine(const std::string& what) {
    uint32_t begin = tok_.begin;
    nesting_ = 0;
    Expr e = sum();
    if (e.nodes().size() > kMaxExprNodes)
      lex_.fail(begin, what + " is too large (more than " + std::to_string(kMaxExprNodes) +
                           " operators and operands)");
    if (!e.uses(taidl::RefKind::kLoop)) {
      try {
        return Affine(taidl::evalExpr(e, {}));
      } catch (const taidl::ExprError& err) {
        lex_.fail(err.offset, err.message + " in " + what);
      }
    }
    std::optional<taidl::Poly> poly = taidl::toPoly(e);
    std::optional<taidl::Affine> aff;
    if (poly) aff = taidl::affineIn(*poly, taidl::RefKind::kLoop);
    if (!aff)
      lex_.fail(begin, what + " `" + taidl::exprText(e) + "` is not affine in the loop variables",
                "use sums of integer multiples of loop variables plus a constant "
                "(no products of variables, //, % or division by a variable)");
    Affine out;
    auto c = aff->constant.constantValue();
    out.constant = c ? *c : 0;
    for (const taidl::AffineTerm& t : aff->terms) {
      auto k = t.coeff.constantValue();
      if (!c || !k) lex_.fail(begin, what + " is not affine in the loop variables");
      out.terms.push_back({static_cast<uint32_t>(t.var.slot), *k});
    }
    std::sort(out.terms.begin(), out.terms.end(),
              [](const auto& a, const auto& b) { return a.depth < b.depth; });
    return out;
  }

  struct Nest {
    explicit Nest(Parser& p) : p_(p) {
      if (++p_.nesting_ > kMaxNesting)
        p_.lex_.fail(p_.tok_.begin,
                     "expression nests more than " + std::to_string(kMaxNesting) + " levels deep");
    }
    ~Nest() { --p_.nesting_; }
    Parser& p_;
  };

  Expr sum() {
    Expr l = prod();
    while (at(Tok::kPlus) || at(Tok::kMinus)) {
      ExprOp op = at(Tok::kPlus) ? ExprOp::kAdd : ExprOp::kSub;
      uint32_t at_op = tok_.begin;
      advance();
      l = Expr::binary(op, std::move(l), prod(), at_op);
      limit(l, at_op);
    }
    return l;
  }

  Expr prod() {
    Expr l = unary();
    while (true) {
      ExprOp op;
      if (at(Tok::kStar))
        op = ExprOp::kMul;
      else if (at(Tok::kSlash))
        op = ExprOp::kDiv;
      else if (at(Tok::kSlashSlash))
        op = ExprOp::kFloorDiv;
      else if (at(Tok::kPercent) || at(Tok::kValue))
        op = ExprOp::kMod;  // `i%4` lexes as %4
      else
        return l;
      uint32_t at_op = tok_.begin;
      tok_ = lex_.lex(at_op + (at(Tok::kSlashSlash) ? 2 : 1));
      l = Expr::binary(op, std::move(l), unary(), at_op);
      limit(l, at_op);
    }
  }

  void limit(const Expr& e, uint32_t at_op) const {
    if (e.nodes().size() > kMaxExprNodes)
      lex_.fail(at_op, "expression is too large (more than " + std::to_string(kMaxExprNodes) +
                           " operators and operands)");
  }

  Expr unary() {
    if (at(Tok::kMinus)) {
      Nest nest(*this);
      uint32_t at_op = tok_.begin;
      advance();
      return Expr::unary(ExprOp::kNeg, unary(), at_op);
    }
    return primary();
  }

  Expr primary() {
    Token t = tok_;
    if (at(Tok::kInt)) {
      advance();
      return Expr::integer(t.int_value, t.begin);
    }
    if (at(Tok::kLParen)) {
      Nest nest(*this);
      advance();
      Expr e = sum();
      expect(Tok::kRParen, "to close '('");
      return e;
    }
    if (at(Tok::kIdent)) {
      auto it = std::find(vars_.begin(), vars_.end(), t.text);
      if (it == vars_.end())
        lex_.fail(t.begin, "unknown name '" + std::string(t.text) + "' in an expression",
                  vars_.empty() ? "attribute values are integers (no loop is open here)"
                                : "loop variables here: " + join(vars_, ", "));
      advance();
      auto depth = static_cast<int32_t>(it - vars_.begin());
      return Expr::ref(taidl::RefKind::kLoop, depth, std::string(t.text), 0, t.begin);
    }
    if (at(Tok::kFloat)) expected("an integer", "attribute values are integers");
    expected("an integer expression");
  }

  const taidl::Isa& isa_;
  const SourceFile& file_;
  taidl::Lexer lex_;
  const ParseOptions& options_;
  Token tok_;
  int64_t hbm_ = 0;
  int nesting_ = 0;
  std::vector<std::string> vars_;
};

}  // namespace

Program parseProgram(const taidl::Isa& isa, std::string_view text, const std::string& filename,
                     const ParseOptions& options) {
  if (text.size() >= kMaxSourceBytes)
    fail(filename, {}, "the program is too large (the limit is 256 MiB)");
  SourceFile file(filename, std::string(text));
  Program p = Parser(isa, file, options).parse();
  checkProgram(isa, p);
  return p;
}

Program parseProgramFile(const taidl::Isa& isa, const std::string& path,
                         const ParseOptions& options) {
  return parseProgram(isa, readFile(path), path, options);
}

}  // namespace tacit::oracle
