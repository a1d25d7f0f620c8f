// The .taidl parser: recursive descent over the grammar of docs/taidl.md section 2. Syntax only;
// names are resolved by the checker. The first mistake is a DiagnosticError at its position.
#include <limits>

#include "hlo/opcode.h"
#include "taidl/isa.h"
#include "taidl/lexer.h"

namespace tacit::taidl {
namespace {

constexpr size_t kMaxExprNodes = 1000;
constexpr size_t kMaxSourceBytes = size_t{1} << 28;

class Parser {
 public:
  Parser(const SourceFile& file, Isa& isa) : lex_(file), isa_(isa) { tok_ = lex_.lex(0); }

  void parseSpec();

 private:
  // ---- tokens ----
  void advance() { tok_ = lex_.lex(tok_.end); }
  bool at(Tok k) const { return tok_.kind == k; }
  bool atKeyword(std::string_view k) const { return tok_.isIdent(k); }
  bool accept(Tok k) {
    if (!at(k)) return false;
    advance();
    return true;
  }
  bool acceptKeyword(std::string_view k) {
    if (!atKeyword(k)) return false;
    advance();
    return true;
  }
  Token expect(Tok k, std::string_view context);
  void expectKeyword(std::string_view k, std::string_view context);
  [[noreturn]] void failHere(std::string message, std::string hint = {}) const {
    lex_.fail(tok_.begin, std::move(message), std::move(hint));
  }
  [[noreturn]] void expected(std::string what, std::string hint = {}) const {
    failHere("expected " + what + ", found " + tokenText(tok_), std::move(hint));
  }
  Ident name(std::string_view what);
  Token peek() const { return lex_.lex(tok_.end); }

  // Nesting guard: parentheses, blocks and literals may not nest deeper than kMaxNesting.
  struct Nest {
    explicit Nest(Parser& p) : p_(p) {
      if (++p_.depth_ > kMaxNesting)
        p_.failHere("nesting is too deep (the limit is " + std::to_string(kMaxNesting) + ")");
    }
    ~Nest() { --p_.depth_; }
    Parser& p_;
  };

  // ---- declarations ----
  void parseParam(bool is_const);
  void parseBuffer();
  void parseRegister();
  void parseInstruction();
  void parseMacro();
  void parseEngine();
  void parseMemory();
  std::vector<CallArg> parseSettings(std::string_view what);
  std::pair<std::vector<Attribute>, int32_t> parseAttributes();
  Call parseCall();

  // ---- statements ----
  std::vector<Stmt> parseBlock();
  Stmt parseStmt();
  Stmt parseSlice(StmtKind kind);
  Stmt parseValueStmt();
  Stmt parseWrite();
  void parseSliceStart(Stmt& s);
  Stmt parseIf();
  Stmt parseRepeat();
  void parseOp(Stmt& s);
  OpAttr parseOpAttr();
  RangeExpr parseRange();
  LiteralValue parseLiteral();
  TypeExpr parseType();
  hlo::PrimitiveType parseDtype(uint32_t* offset);

  // ---- expressions ----
  Expr parseExpr();
  Expr parseCond();
  Expr parseOr();
  Expr parseAnd();
  Expr parseCmp();
  Expr parseSum();
  Expr parseProd();
  Expr parseUnary();
  Expr parsePrimary();
  std::vector<Expr> parseExprList(Tok close);

  Lexer lex_;
  Isa& isa_;
  Token tok_;
  int depth_ = 0;
};

Token Parser::expect(Tok k, std::string_view context) {
  if (!at(k)) {
    std::string what = tokenDescription(k);
    if (!context.empty()) what += " " + std::string(context);
    std::string hint;
    if (k == Tok::kSemi && tok_.begin > 0) hint = "every statement and declaration ends with ';'";
    expected(what, hint);
  }
  Token t = tok_;
  advance();
  return t;
}

void Parser::expectKeyword(std::string_view k, std::string_view context) {
  if (!atKeyword(k)) expected("'" + std::string(k) + "' " + std::string(context));
  advance();
}

Ident Parser::name(std::string_view what) {
  if (!at(Tok::kIdent)) expected(std::string(what));
  if (isKeyword(tok_.text)) {
    failHere("'" + std::string(tok_.text) + "' is a keyword and cannot be used as " +
             std::string(what));
  }
  Ident id{std::string(tok_.text), tok_.begin};
  advance();
  return id;
}

// ---- spec and declarations ------------------------------------------------------------------

void Parser::parseSpec() {
  if (!atKeyword("isa")) expected("'isa NAME;' at the start of the spec");
  advance();
  Ident n = name("the ISA name");
  isa_.name = n.text;
  isa_.name_offset = n.offset;
  expect(Tok::kSemi, "after the ISA name");
  while (!at(Tok::kEof)) {
    if (acceptKeyword("param")) {
      parseParam(false);
    } else if (acceptKeyword("const")) {
      parseParam(true);
    } else if (acceptKeyword("buffer")) {
      parseBuffer();
    } else if (acceptKeyword("reg")) {
      parseRegister();
    } else if (acceptKeyword("instruction")) {
      parseInstruction();
    } else if (acceptKeyword("macro")) {
      parseMacro();
    } else if (acceptKeyword("engine")) {
      parseEngine();
    } else if (atKeyword("memory")) {
      parseMemory();
    } else {
      expected("a declaration (param, const, buffer, reg, instruction, macro, engine or memory)");
    }
  }
}

void Parser::parseParam(bool is_const) {
  Param p;
  p.name = name(is_const ? "a constant name" : "a parameter name");
  p.offset = p.name.offset;
  expect(Tok::kAssign, "after the name");
  p.expr = parseExpr();
  expect(Tok::kSemi, "after the value");
  auto& list = is_const ? isa_.consts : isa_.params;
  list.push_back(std::move(p));
  isa_.items.push_back(
      {is_const ? ItemKind::kConst : ItemKind::kParam, static_cast<int32_t>(list.size() - 1)});
}

hlo::PrimitiveType Parser::parseDtype(uint32_t* offset) {
  if (!at(Tok::kIdent)) expected("an element type (s8, bf16, f32, ...)");
  std::optional<hlo::PrimitiveType> t = hlo::parsePrimitiveType(tok_.text);
  if (!t || *t == hlo::PrimitiveType::kTuple)
    failHere("unknown element type '" + std::string(tok_.text) + "'",
             "element types are HLO's: pred, s8, s16, s32, s64, u8, ..., f16, bf16, f32, f64");
  *offset = tok_.begin;
  advance();
  return *t;
}

void Parser::parseBuffer() {
  Buffer b;
  b.name = name("a buffer name");
  b.offset = b.name.offset;
  expect(Tok::kLSquare, "before the access dimensions");
  b.access_exprs = parseExprList(Tok::kRSquare);
  expect(Tok::kRSquare, "after the access dimensions");
  expectKeyword("of", "between the access dimensions and the unit type");
  b.dtype = parseDtype(&b.dtype_offset);
  expect(Tok::kLSquare, "before the unit dimensions");
  b.unit_exprs = parseExprList(Tok::kRSquare);
  expect(Tok::kRSquare, "after the unit dimensions");
  expect(Tok::kSemi, "after the buffer declaration");
  isa_.buffers.push_back(std::move(b));
  isa_.items.push_back({ItemKind::kBuffer, static_cast<int32_t>(isa_.buffers.size() - 1)});
}

void Parser::parseRegister() {
  Register r;
  if (!at(Tok::kReg)) {
    std::string hint;
    if (at(Tok::kIdent)) hint = "register names start with '$': reg $" + std::string(tok_.text);
    expected("a register name ($name)", hint);
  }
  r.name = Ident{std::string(tok_.text), tok_.begin};
  r.offset = tok_.begin;
  advance();
  expect(Tok::kAssign, "after the register name");
  r.init = parseExpr();
  expect(Tok::kSemi, "after the initial value");
  isa_.registers.push_back(std::move(r));
  isa_.items.push_back({ItemKind::kRegister, static_cast<int32_t>(isa_.registers.size() - 1)});
}

std::pair<std::vector<Attribute>, int32_t> Parser::parseAttributes() {
  expect(Tok::kLParen, "before the attributes");
  std::vector<Attribute> attrs;
  auto group = [&](bool alpha) {
    if (at(Tok::kRParen) || at(Tok::kSemi)) return;
    attrs.push_back(Attribute{name("an attribute name"), alpha});
    while (accept(Tok::kComma))
      attrs.push_back(Attribute{name("an attribute name"), alpha});
  };
  group(true);
  auto num_alpha = static_cast<int32_t>(attrs.size());
  if (accept(Tok::kSemi)) group(false);
  if (!at(Tok::kRParen)) {
    if (at(Tok::kSemi)) failHere("only one ';' separates computational from addressing attributes");
    expected("',', ';' or ')' in the attribute list");
  }
  advance();
  return {std::move(attrs), num_alpha};
}

void Parser::parseInstruction() {
  Instruction inst;
  inst.name = name("an instruction name");
  inst.offset = inst.name.offset;
  auto [attrs, num_alpha] = parseAttributes();
  inst.attrs = std::move(attrs);
  inst.num_alpha = num_alpha;
  inst.body = parseBlock();
  isa_.instructions.push_back(std::move(inst));
  isa_.items.push_back(
      {ItemKind::kInstruction, static_cast<int32_t>(isa_.instructions.size() - 1)});
}

Call Parser::parseCall() {
  Call c;
  c.callee = name("an instruction name");
  c.offset = c.callee.offset;
  expect(Tok::kLParen, "before the arguments");
  while (!at(Tok::kRParen)) {
    if (!c.args.empty()) expect(Tok::kComma, "between arguments");
    CallArg arg;
    arg.offset = tok_.begin;
    if (at(Tok::kIdent) && peek().kind == Tok::kAssign) {
      arg.name = name("an attribute name");
      advance();
    }
    arg.value = parseExpr();
    c.args.push_back(std::move(arg));
  }
  advance();
  expect(Tok::kSemi, "after the call");
  return c;
}

void Parser::parseMacro() {
  Macro m;
  m.name = name("a macro name");
  m.offset = m.name.offset;
  auto [attrs, num_alpha] = parseAttributes();
  m.attrs = std::move(attrs);
  m.num_alpha = num_alpha;
  expect(Tok::kLBrace, "before the macro body");
  while (!accept(Tok::kRBrace)) {
    if (at(Tok::kEof)) expected("'}' at the end of the macro");
    m.calls.push_back(parseCall());
  }
  isa_.macros.push_back(std::move(m));
  isa_.items.push_back({ItemKind::kMacro, static_cast<int32_t>(isa_.macros.size() - 1)});
}

// `(name = expr, ...)`: the settings of a timing declaration or clause, each named.
std::vector<CallArg> Parser::parseSettings(std::string_view what) {
  expect(Tok::kLParen, std::string("before the settings of ") + std::string(what));
  std::vector<CallArg> out;
  while (!accept(Tok::kRParen)) {
    if (!out.empty()) expect(Tok::kComma, "between settings");
    CallArg arg;
    arg.offset = tok_.begin;
    arg.name = name("a setting name");
    expect(Tok::kAssign, "after the setting name");
    arg.value = parseExpr();
    out.push_back(std::move(arg));
  }
  return out;
}

void Parser::parseEngine() {
  Engine e;
  e.name = name("an engine name");
  if (at(Tok::kLParen)) e.settings = parseSettings("the engine");
  expect(Tok::kSemi, "after the engine declaration");
  isa_.engines.push_back(std::move(e));
  isa_.items.push_back({ItemKind::kEngine, static_cast<int32_t>(isa_.engines.size() - 1)});
}

void Parser::parseMemory() {
  uint32_t at = tok_.begin;
  advance();
  if (isa_.memory) lex_.fail(at, "a second memory declaration", "an ISA has one memory interface");
  MemoryPort m;
  m.offset = at;
  m.settings = parseSettings("the memory interface");
  expect(Tok::kSemi, "after the memory declaration");
  isa_.memory = std::move(m);
  isa_.items.push_back({ItemKind::kMemory, 0});
}

// ---- statements -------------------------------------------------------------------------------

std::vector<Stmt> Parser::parseBlock() {
  Nest nest(*this);
  expect(Tok::kLBrace, "before the statements");
  std::vector<Stmt> body;
  while (!accept(Tok::kRBrace)) {
    if (at(Tok::kEof)) expected("'}'");
    body.push_back(parseStmt());
  }
  return body;
}

Stmt Parser::parseStmt() {
  Stmt s;
  s.offset = tok_.begin;
  if (atKeyword("require") || atKeyword("cost")) {
    s.kind = atKeyword("require") ? StmtKind::kRequire : StmtKind::kCost;
    advance();
    s.expr = parseExpr();
    expect(Tok::kSemi, s.kind == StmtKind::kRequire ? "after the constraint" : "after the cost");
    return s;
  }
  if (acceptKeyword("set")) {
    s.kind = StmtKind::kSet;
    if (!at(Tok::kReg)) {
      std::string hint;
      if (at(Tok::kIdent)) hint = "registers are written with '$': set $" + std::string(tok_.text);
      expected("a register ($name)", hint);
    }
    s.name = Ident{std::string(tok_.text), tok_.begin};
    advance();
    expect(Tok::kAssign, "after the register");
    s.expr = parseExpr();
    expect(Tok::kSemi, "after the value");
    return s;
  }
  if (atKeyword("let")) {  // contextual: `let` may still name a value or an attribute elsewhere
    s.kind = StmtKind::kLet;
    advance();
    s.name = name("the name the let binds");
    expect(Tok::kAssign, "after the let's name");
    parseSliceStart(s);
    expect(Tok::kSemi, "after the let");
    return s;
  }
  if (atKeyword("reads")) return parseSlice(StmtKind::kReads);
  if (atKeyword("writes")) return parseSlice(StmtKind::kWrites);
  if (atKeyword("write")) return parseWrite();
  if (atKeyword("if")) return parseIf();
  if (atKeyword("repeat")) return parseRepeat();
  if (at(Tok::kValue)) return parseValueStmt();
  if (acceptKeyword("timing")) {
    s.kind = StmtKind::kTiming;
    s.name = name("an engine name");
    for (CallArg& a : parseSettings("the timing clause")) {
      const std::string& n = a.name.text;
      if (n != "interval" && n != "latency" && n != "bytes")
        lex_.fail(a.name.offset, "unknown timing setting '" + n + "'",
                  "a timing clause sets interval, latency and bytes");
      Expr& slot = n == "interval" ? s.expr : n == "latency" ? s.expr2 : s.expr3;
      if (!slot.empty()) lex_.fail(a.name.offset, "'" + a.name.text + "' is set twice");
      slot = std::move(a.value);
    }
    expect(Tok::kSemi, "after the timing clause");
    return s;
  }
  expected(
      "a statement (require, cost, timing, set, let, reads, writes, %value = ..., write, if "
      "or repeat)");
}

Stmt Parser::parseSlice(StmtKind kind) {
  Stmt s;
  s.kind = kind;
  s.offset = tok_.begin;
  advance();
  s.buffer = name("a buffer name");
  expect(Tok::kLSquare, "before the slice starts");
  s.starts = parseExprList(Tok::kRSquare);
  expect(Tok::kRSquare, "after the slice starts");
  expectKeyword("size", "after the slice starts");
  expect(Tok::kLSquare, "before the slice sizes");
  s.sizes = parseExprList(Tok::kRSquare);
  expect(Tok::kRSquare, "after the slice sizes");
  expect(Tok::kSemi, "after the slice");
  return s;
}

// `B[s_1, ..., s_k]`: the buffer and the starts of a read, a write or a let.
void Parser::parseSliceStart(Stmt& s) {
  s.buffer = name("a buffer name");
  expect(Tok::kLSquare, "before the starts");
  s.starts = parseExprList(Tok::kRSquare);
  expect(Tok::kRSquare, "after the starts");
}

Stmt Parser::parseWrite() {
  Stmt s;
  s.kind = StmtKind::kWrite;
  s.offset = tok_.begin;
  advance();
  parseSliceStart(s);
  expect(Tok::kAssign, "after the slice");
  if (!at(Tok::kValue)) expected("the value to write (%name)");
  s.name = Ident{std::string(tok_.text), tok_.begin};
  advance();
  expect(Tok::kSemi, "after the write");
  return s;
}

Stmt Parser::parseValueStmt() {
  Stmt s;
  s.offset = tok_.begin;
  s.name = Ident{std::string(tok_.text), tok_.begin};
  advance();
  if (accept(Tok::kColon)) {
    s.kind = StmtKind::kRead;
    s.type = parseType();
    expect(Tok::kAssign, "after the type");
    expectKeyword("read", "(a typed value is defined by a read: %v : T = read B[...])");
    parseSliceStart(s);
    expect(Tok::kSemi, "after the read");
    return s;
  }
  if (!at(Tok::kAssign)) expected("'=' or ':' after the value name");
  advance();
  s.type = parseType();
  parseOp(s);
  return s;
}

void Parser::parseOp(Stmt& s) {
  Token op = lex_.lexOpcode(tok_.begin);
  if (op.kind != Tok::kIdent) expected("an opcode");
  s.opcode = Ident{std::string(op.text), op.begin};
  tok_ = lex_.lex(op.end);
  if (s.opcode.text == "constant") {
    s.kind = StmtKind::kConstant;
    s.hlo_opcode = hlo::HloOpcode::kConstant;
    expect(Tok::kLParen, "after constant");
    s.literal = parseLiteral();
    expect(Tok::kRParen, "after the literal");
    expect(Tok::kSemi, "after the constant");
    return;
  }
  s.kind = StmtKind::kOp;
  std::optional<hlo::HloOpcode> code = hlo::parseOpcode(s.opcode.text);
  s.hlo_opcode = code.value_or(hlo::HloOpcode::kUnknown);
  expect(Tok::kLParen, "after the opcode");
  while (!at(Tok::kRParen)) {
    if (!s.operands.empty()) expect(Tok::kComma, "between operands");
    if (!at(Tok::kValue)) {
      std::string hint;
      if (at(Tok::kIdent) || at(Tok::kInt))
        hint = "operands are values (%name); integers enter through constant(...)";
      expected("an operand (%name)", hint);
    }
    s.operands.push_back(Ident{std::string(tok_.text), tok_.begin});
    advance();
  }
  advance();
  while (accept(Tok::kComma))
    s.attrs.push_back(parseOpAttr());
  expect(Tok::kSemi, "after the operation");
}

OpAttr Parser::parseOpAttr() {
  OpAttr a;
  a.name = name("an attribute name");
  expect(Tok::kAssign, "after the attribute name");
  a.value_offset = tok_.begin;
  if (!at(Tok::kLBrace)) {
    a.kind = OpAttr::Kind::kExpr;
    a.expr = parseExpr();
    return a;
  }
  Nest nest(*this);
  advance();
  if (at(Tok::kLSquare)) {
    a.kind = OpAttr::Kind::kRanges;
    do {
      a.ranges.push_back(parseRange());
    } while (accept(Tok::kComma));
  } else {
    a.kind = OpAttr::Kind::kList;
    a.list = parseExprList(Tok::kRBrace);
  }
  expect(Tok::kRBrace, "after the attribute value");
  return a;
}

RangeExpr Parser::parseRange() {
  RangeExpr r;
  r.offset = tok_.begin;
  expect(Tok::kLSquare, "before a range");
  r.start = parseExpr();
  expect(Tok::kColon, "in the range [start:limit]");
  r.limit = parseExpr();
  if (accept(Tok::kColon)) r.stride = parseExpr();
  expect(Tok::kRSquare, "after the range");
  return r;
}

LiteralValue Parser::parseLiteral() {
  LiteralValue v;
  v.offset = tok_.begin;
  if (at(Tok::kLBrace)) {
    Nest nest(*this);
    advance();
    v.kind = LiteralValue::Kind::kNested;
    while (!at(Tok::kRBrace)) {
      if (!v.elements.empty()) expect(Tok::kComma, "between literal elements");
      v.elements.push_back(parseLiteral());
    }
    advance();
    return v;
  }
  auto isFloatWord = [](const Token& t) { return t.isIdent("inf") || t.isIdent("nan"); };
  bool negative = false;
  if (at(Tok::kMinus)) {
    Token next = peek();
    if (next.kind == Tok::kFloat || isFloatWord(next)) {
      negative = true;
      advance();
    }
  }
  if (at(Tok::kFloat) || isFloatWord(tok_)) {
    v.kind = LiteralValue::Kind::kFloat;
    if (at(Tok::kFloat))
      v.number = tok_.float_value;
    else
      v.number = tok_.isIdent("inf") ? std::numeric_limits<double>::infinity()
                                     : std::numeric_limits<double>::quiet_NaN();
    if (negative) v.number = -v.number;
    advance();
    return v;
  }
  v.kind = LiteralValue::Kind::kExpr;
  v.expr = parseExpr();
  return v;
}

TypeExpr Parser::parseType() {
  TypeExpr t;
  t.offset = tok_.begin;
  t.dtype = parseDtype(&t.offset);
  expect(Tok::kLSquare, "after the element type");
  t.dims = parseExprList(Tok::kRSquare);
  expect(Tok::kRSquare, "after the dimensions");
  return t;
}

Stmt Parser::parseIf() {
  Stmt s;
  s.kind = StmtKind::kIf;
  s.offset = tok_.begin;
  advance();
  expect(Tok::kLParen, "after 'if'");
  s.expr = parseExpr();
  expect(Tok::kRParen, "after the condition");
  s.body = parseBlock();
  if (acceptKeyword("else")) {
    s.has_else = true;
    if (atKeyword("if")) {
      Nest nest(*this);
      s.else_is_if = true;
      s.else_body.push_back(parseIf());
    } else {
      s.else_body = parseBlock();
    }
  }
  return s;
}

Stmt Parser::parseRepeat() {
  Stmt s;
  s.kind = StmtKind::kRepeat;
  s.offset = tok_.begin;
  advance();
  s.name = name("a loop variable");
  expectKeyword("in", "after the loop variable");
  expect(Tok::kLSquare, "before the loop bounds");
  s.expr = parseExpr();
  expect(Tok::kComma, "between the loop bounds");
  s.expr2 = parseExpr();
  if (!at(Tok::kRParen))
    expected("')' after the loop bounds", "loops run over a half-open range: repeat i in [0, n)");
  advance();
  s.body = parseBlock();
  return s;
}

// ---- expressions ------------------------------------------------------------------------------

std::vector<Expr> Parser::parseExprList(Tok close) {
  std::vector<Expr> out;
  if (at(close)) return out;
  out.push_back(parseExpr());
  while (accept(Tok::kComma))
    out.push_back(parseExpr());
  return out;
}

Expr Parser::parseExpr() {
  uint32_t start = tok_.begin;
  Expr e = parseCond();
  if (e.nodes().size() > kMaxExprNodes)
    lex_.fail(start, "expression is too large (more than " + std::to_string(kMaxExprNodes) +
                         " operators and operands)");
  return e;
}

Expr Parser::parseCond() {
  Expr c = parseOr();
  if (!at(Tok::kQuestion)) return c;
  Nest nest(*this);
  uint32_t q = tok_.begin;
  advance();
  Expr t = parseCond();
  expect(Tok::kColon, "in the conditional c ? a : b");
  Expr f = parseCond();
  return Expr::cond(std::move(c), std::move(t), std::move(f), q);
}

Expr Parser::parseOr() {
  Expr l = parseAnd();
  while (at(Tok::kOrOr)) {
    uint32_t op = tok_.begin;
    advance();
    l = Expr::binary(ExprOp::kOr, std::move(l), parseAnd(), op);
  }
  return l;
}

Expr Parser::parseAnd() {
  Expr l = parseCmp();
  while (at(Tok::kAndAnd)) {
    uint32_t op = tok_.begin;
    advance();
    l = Expr::binary(ExprOp::kAnd, std::move(l), parseCmp(), op);
  }
  return l;
}

std::optional<ExprOp> comparisonOp(Tok k) {
  switch (k) {
    case Tok::kEq:
      return ExprOp::kEq;
    case Tok::kNe:
      return ExprOp::kNe;
    case Tok::kLt:
      return ExprOp::kLt;
    case Tok::kLe:
      return ExprOp::kLe;
    case Tok::kGt:
      return ExprOp::kGt;
    case Tok::kGe:
      return ExprOp::kGe;
    default:
      return std::nullopt;
  }
}

Expr Parser::parseCmp() {
  Expr l = parseSum();
  std::optional<ExprOp> op = comparisonOp(tok_.kind);
  if (!op) return l;
  uint32_t at_op = tok_.begin;
  advance();
  Expr r = parseSum();
  if (comparisonOp(tok_.kind)) failHere("comparisons do not chain", "write a < b && b < c");
  return Expr::binary(*op, std::move(l), std::move(r), at_op);
}

Expr Parser::parseSum() {
  Expr l = parseProd();
  while (at(Tok::kPlus) || at(Tok::kMinus)) {
    ExprOp op = at(Tok::kPlus) ? ExprOp::kAdd : ExprOp::kSub;
    uint32_t at_op = tok_.begin;
    advance();
    l = Expr::binary(op, std::move(l), parseProd(), at_op);
  }
  return l;
}

Expr Parser::parseProd() {
  Expr l = parseUnary();
  while (true) {
    ExprOp op;
    if (at(Tok::kStar)) {
      op = ExprOp::kMul;
    } else if (at(Tok::kSlash)) {
      op = ExprOp::kDiv;
    } else if (at(Tok::kSlashSlash)) {
      op = ExprOp::kFloorDiv;
    } else if (at(Tok::kPercent) || at(Tok::kValue)) {
      op = ExprOp::kMod;  // `n%4` lexes as a value name; in operator position it is modulo
    } else {
      return l;
    }
    uint32_t at_op = tok_.begin;
    tok_ = lex_.lex(at_op + (at(Tok::kSlashSlash) ? 2 : 1));
    l = Expr::binary(op, std::move(l), parseUnary(), at_op);
  }
}

Expr Parser::parseUnary() {
  if (at(Tok::kMinus) || at(Tok::kBang)) {
    Nest nest(*this);
    ExprOp op = at(Tok::kMinus) ? ExprOp::kNeg : ExprOp::kNot;
    uint32_t at_op = tok_.begin;
    advance();
    return Expr::unary(op, parseUnary(), at_op);
  }
  return parsePrimary();
}

Expr Parser::parsePrimary() {
  Token t = tok_;
  switch (t.kind) {
    case Tok::kInt:
      advance();
      return Expr::integer(t.int_value, t.begin);
    case Tok::kReg:
      advance();
      // A register reference; the checker fills in its slot.
      return Expr::ref(RefKind::kReg, -1, std::string(t.text), 0, t.begin);
    case Tok::kLParen: {
      Nest nest(*this);
      advance();
      Expr e = parseCond();
      expect(Tok::kRParen, "to close '('");
      return e;
    }
    case Tok::kIdent: {
      if (t.text == "true" || t.text == "false") {
        advance();
        return Expr::boolean(t.text == "true", t.begin);
      }
      if (t.text == "min" || t.text == "max") {
        Nest nest(*this);
        advance();
        expect(Tok::kLParen, "after " + std::string(t.text));
        Expr a = parseCond();
        expect(Tok::kComma, "between the arguments of " + std::string(t.text));
        Expr b = parseCond();
        expect(Tok::kRParen, "after the arguments of " + std::string(t.text));
        return Expr::binary(t.text == "min" ? ExprOp::kMin : ExprOp::kMax, std::move(a),
                            std::move(b), t.begin);
      }
      if (isKeyword(t.text))
        failHere("expected an expression, found the keyword '" + std::string(t.text) + "'");
      advance();
      return Expr::name(std::string(t.text), t.begin);
    }
    case Tok::kFloat:
      expected("an integer expression",
               "floating-point numbers are allowed only as constant(...) literals");
    case Tok::kValue:
      expected("an integer expression",
               "%values are tensors; expressions use attributes, parameters and registers");
    default:
      expected("an expression");
  }
}

}  // namespace

Isa parseIsa(std::string_view text, const std::string& filename) {
  if (text.size() >= kMaxSourceBytes)
    fail(filename, {}, "the spec is too large (the limit is 256 MiB)");
  Isa isa;
  isa.source = std::make_shared<SourceFile>(filename, std::string(text));
  Buffer hbm;
  hbm.name = Ident{"d0", 0};
  hbm.is_hbm = true;
  hbm.dtype = hlo::PrimitiveType::kU8;
  hbm.access = {kUnknownSize};
  isa.buffers.push_back(std::move(hbm));
  Parser parser(*isa.source, isa);
  parser.parseSpec();
  return isa;
}

}  // namespace tacit::taidl
