// Python expressions of TAIDL specs (constraints, updates, backquoted dims, IF conditions, v2
// address lists) parsed into a small AST and printed in .taidl syntax.
#include <array>
#include <cctype>
#include <charconv>

#include "import/importer_internal.h"

namespace tacit::importer {

[[noreturn]] void fail(int line, std::string message) {
  throw ImportError{line, std::move(message)};
}

ExprPtr makeInt(int64_t v) {
  auto e = std::make_shared<Expr>();
  e->kind = Expr::Kind::kInt;
  e->value = v;
  return e;
}

ExprPtr makeBinary(std::string op, ExprPtr a, ExprPtr b) {
  auto e = std::make_shared<Expr>();
  e->kind = Expr::Kind::kBinary;
  e->op = std::move(op);
  e->kids = {std::move(a), std::move(b)};
  return e;
}

namespace {

ExprPtr makeRef(char prefix, std::string name) {
  auto e = std::make_shared<Expr>();
  e->kind = Expr::Kind::kRef;
  e->prefix = prefix;
  e->name = std::move(name);
  return e;
}

ExprPtr makeUnary(std::string op, ExprPtr a) {
  auto e = std::make_shared<Expr>();
  e->kind = Expr::Kind::kUnary;
  e->op = std::move(op);
  e->kids = {std::move(a)};
  return e;
}

bool isIdentStart(char c) {
  return std::isalpha(static_cast<unsigned char>(c)) || c == '_';
}
bool isIdentChar(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
}

// Recursive-descent parser for the Python expression subset TAIDL specs use.
class PyParser {
 public:
  PyParser(std::string_view text, int line) : text_(text), line_(line) {}

  ExprPtr parseAll() {
    ExprPtr e = test();
    skip();
    if (pos_ != text_.size()) error("unexpected '" + std::string(text_.substr(pos_, 12)) + "'");
    return e;
  }

 private:
  [[noreturn]] void error(const std::string& what) const {
    std::string shown = concreteText(text_);
    if (shown.size() > 80) shown = shown.substr(0, 77) + "...";
    fail(line_, "in Python expression '" + shown + "': " + what);
  }

  void skip() {
    while (pos_ < text_.size() &&
           (text_[pos_] == ' ' || text_[pos_] == '\t' || text_[pos_] == '`' ||
            text_[pos_] == '\n' || text_[pos_] == '\r')) {
      ++pos_;
    }
  }

  bool peekWord(std::string_view w) {
    skip();
    if (text_.substr(pos_, w.size()) != w) return false;
    size_t end = pos_ + w.size();
    return end >= text_.size() || !isIdentChar(text_[end]);
  }

  bool acceptWord(std::string_view w) {
    if (!peekWord(w)) return false;
    pos_ += w.size();
    return true;
  }

  bool accept(std::string_view op) {
    skip();
    if (text_.substr(pos_, op.size()) != op) return false;
    pos_ += op.size();
    return true;
  }

  // Nesting deeper than this is not a spec anyone writes; it would only exhaust the stack.
  static constexpr int kMaxDepth = 100;

  // Counts the recursion depth of the parser for the lifetime of one call.
  struct Depth {
    explicit Depth(PyParser& p) : parser(p) {
      if (++parser.depth_ > kMaxDepth) parser.error("expression nested too deeply");
    }
    ~Depth() { --parser.depth_; }
    Depth(const Depth&) = delete;
    Depth& operator=(const Depth&) = delete;
    PyParser& parser;
  };

  ExprPtr test() {
    Depth guard(*this);
    return conditional();
  }

  ExprPtr conditional() {
    ExprPtr e = orTest();
    if (acceptWord("if")) {
      ExprPtr cond = orTest();
      if (!acceptWord("else")) error("expected 'else'");
      ExprPtr other = test();
      auto t = std::make_shared<Expr>();
      t->kind = Expr::Kind::kTernary;
      t->kids = {cond, e, other};
      return t;
    }
    return e;
  }

  ExprPtr orTest() {
    ExprPtr e = andTest();
    while (acceptWord("or") || accept("||"))
      e = makeBinary("||", e, andTest());
    return e;
  }

  ExprPtr andTest() {
    ExprPtr e = notTest();
    while (acceptWord("and") || accept("&&"))
      e = makeBinary("&&", e, notTest());
    return e;
  }

  ExprPtr notTest() {
    Depth guard(*this);
    if (acceptWord("not")) return makeUnary("!", notTest());
    return comparison();
  }

  std::optional<std::string> compareOp() {
    static constexpr std::array<std::string_view, 6> kOps = {"==", "!=", "<=", ">=", "<", ">"};
    skip();
    for (std::string_view op : kOps) {
      if (text_.substr(pos_, op.size()) == op) {
        pos_ += op.size();
        return std::string(op);
      }
    }
    return std::nullopt;
  }

  ExprPtr comparison() {
    ExprPtr left = arith();
    ExprPtr result;
    while (auto op = compareOp()) {
      ExprPtr right = arith();
      ExprPtr cmp = makeBinary(*op, left, right);
      result = result ? makeBinary("&&", result, cmp) : cmp;  // a < b < c == a < b and b < c
      left = right;
    }
    return result ? result : left;
  }

  ExprPtr arith() {
    ExprPtr e = term();
    while (true) {
      skip();
      if (accept("+"))
        e = makeBinary("+", e, term());
      else if (pos_ < text_.size() && text_[pos_] == '-' && text_.substr(pos_, 2) != "->") {
        ++pos_;
        e = makeBinary("-", e, term());
      } else {
        return e;
      }
    }
  }

  ExprPtr term() {
    ExprPtr e = factor();
    while (true) {
      if (accept("//"))
        e = makeBinary("//", e, factor());
      else if (accept("/"))
        e = makeBinary("/", e, factor());
      else if (accept("%"))
        e = makeBinary("%", e, factor());
      else if (peekStar())
        e = makeBinary("*", e, factor());
      else
        return e;
    }
  }

  bool peekStar() {
    skip();
    if (pos_ < text_.size() && text_[pos_] == '*') {
      if (text_.substr(pos_, 2) == "**") error("'**' is not supported; write the product");
      ++pos_;
      return true;
    }
    return false;
  }

  ExprPtr factor() {
    Depth guard(*this);
    if (accept("-")) {
      ExprPtr k = factor();
      if (k->kind == Expr::Kind::kInt) return makeInt(-k->value);
      return makeUnary("-", k);
    }
    if (accept("+")) return factor();
    return atom();
  }

  ExprPtr marker() {
    size_t mid = text_.find('\x1d', pos_);
    size_t end = text_.find('\x1f', pos_);
    if (mid == std::string_view::npos || end == std::string_view::npos || mid > end)
      error("bad marker");
    ExprPtr inner = PyParser(text_.substr(pos_ + 1, mid - pos_ - 1), line_).parseAll();
    pos_ = end + 1;
    return inner;
  }

  ExprPtr number() {
    size_t start = pos_;
    bool is_float = false;
    if (text_.substr(pos_, 2) == "0x" || text_.substr(pos_, 2) == "0X") {
      pos_ += 2;
      while (pos_ < text_.size() && std::isxdigit(static_cast<unsigned char>(text_[pos_])))
        ++pos_;
      try {
        return makeInt(static_cast<int64_t>(
            std::stoull(std::string(text_.substr(start + 2, pos_ - start - 2)), nullptr, 16)));
      } catch (const std::exception&) {
        error("bad hexadecimal literal");
      }
    }
    while (pos_ < text_.size()) {
      char c = text_[pos_];
      if (std::isdigit(static_cast<unsigned char>(c)) || c == '_') {
        ++pos_;
      } else if (c == '.' || ((c == 'e' || c == 'E') && pos_ + 1 < text_.size() &&
                              (std::isdigit(static_cast<unsigned char>(text_[pos_ + 1])) ||
                               text_[pos_ + 1] == '-' || text_[pos_ + 1] == '+'))) {
        is_float = true;
        pos_ += (c == '.') ? 1 : 2;
      } else {
        break;
      }
    }
    std::string lit;
    for (char c : text_.substr(start, pos_ - start)) {
      if (c != '_') lit += c;
    }
    if (is_float) {
      auto e = std::make_shared<Expr>();
      e->kind = Expr::Kind::kFloat;
      e->text = lit;
      return e;
    }
    try {
      return makeInt(std::stoll(lit));
    } catch (const std::exception&) {
      error("integer literal '" + lit + "' does not fit in 64 bits");
    }
  }

  ExprPtr reference() {
    char prefix = text_[pos_ + 1];
    if (std::string_view("acsl").find(prefix) == std::string_view::npos ||
        pos_ + 2 >= text_.size() || text_[pos_ + 2] != '.') {
      error("unknown reference '" + std::string(text_.substr(pos_, 4)) +
            "' (expected @a., @c., @s. or @l.)");
    }
    pos_ += 3;
    size_t start = pos_;
    while (pos_ < text_.size() && isIdentChar(text_[pos_]))
      ++pos_;
    if (start == pos_) error("a reference needs a name");
    return makeRef(prefix, std::string(text_.substr(start, pos_ - start)));
  }

  ExprPtr call(const std::string& name) {
    std::vector<ExprPtr> args;
    if (!accept(")")) {
      do {
        args.push_back(test());
      } while (accept(","));
      if (!accept(")")) error("expected ')'");
    }
    if ((name == "min" || name == "max") && args.size() == 2) {
      auto e = std::make_shared<Expr>();
      e->kind = Expr::Kind::kCall;
      e->op = name;
      e->kids = args;
      return e;
    }
    if (name == "int" && args.size() == 1) {
      // int(a / b) truncates toward zero; on the non-negative sizes TAIDL uses, floor division.
      const Expr& a = *args[0];
      if (a.kind == Expr::Kind::kBinary && a.op == "/")
        return makeBinary("//", a.kids[0], a.kids[1]);
      return args[0];
    }
    error("call of '" + name + "' is not supported (only min, max and int)");
  }

  ExprPtr atom() {
    skip();
    if (pos_ >= text_.size()) error("unexpected end");
    char c = text_[pos_];
    if (c == '\x1e') return marker();
    if (c == '(') {
      ++pos_;
      ExprPtr e = test();
      if (!accept(")")) error("expected ')'");
      return e;
    }
    if (std::isdigit(static_cast<unsigned char>(c)) || (c == '.' && pos_ + 1 < text_.size()))
      return number();
    if (c == '@') return reference();
    if (isIdentStart(c)) {
      size_t start = pos_;
      while (pos_ < text_.size() && isIdentChar(text_[pos_]))
        ++pos_;
      std::string name(text_.substr(start, pos_ - start));
      if (name == "True") return makeInt(1);
      if (name == "False") return makeInt(0);
      if (accept("(")) return call(name);
      if (name.rfind("__p", 0) == 0) return makeRef('p', name);
      return makeRef('n', name);
    }
    error("unexpected '" + std::string(1, c) + "'");
  }

  std::string_view text_;
  int line_;
  size_t pos_ = 0;
  int depth_ = 0;
};

int precedence(const Expr& e) {
  switch (e.kind) {
    case Expr::Kind::kTernary:
      return 0;
    case Expr::Kind::kUnary:
      return 6;
    case Expr::Kind::kBinary:
      if (e.op == "||") return 1;
      if (e.op == "&&") return 2;
      if (e.op == "+" || e.op == "-") return 4;
      if (e.op == "*" || e.op == "/" || e.op == "//" || e.op == "%") return 5;
      return 3;  // comparisons
    default:
      return 7;
  }
}

std::string printAt(const Expr& e, const Naming& naming, int min_prec);

std::string printRef(const Expr& e, const Naming& naming) {
  // A name no map renames stands as written, unless .taidl reads it otherwise: a keyword (a
  // spec's Python may name a variable `macro`) gets safeIdent's '_', like a declaration of it
  // would, and so do `inf` and `nan`, float words of .taidl's literals (OpConverter::literal
  // writes a constant's own inf and nan).
  auto lookup = [](const std::map<std::string, std::string>& m, const std::string& k) {
    auto it = m.find(k);
    if (it != m.end()) return it->second;
    return isKeyword(k) || k == "inf" || k == "nan" ? k + "_" : k;
  };
  switch (e.prefix) {
    case 's':
      return "$" + safeIdent(e.name);  // as the register's declaration spells it
    case 'p':
      return lookup(naming.params, e.name);
    case 'l':
      return lookup(naming.loops, e.name);
    default:
      return lookup(naming.attrs, e.name);
  }
}

std::string printBinary(const Expr& e, const Naming& naming) {
  int p = precedence(e);
  // Left-associative operators: the right operand needs parentheses at equal precedence;
  // comparisons are not associative at all in .taidl.
  int left_min = p == 3 ? 4 : p;
  int right_min = p == 3 ? 4 : p + 1;
  return printAt(*e.kids[0], naming, left_min) + " " + e.op + " " +
         printAt(*e.kids[1], naming, right_min);
}

std::string printAt(const Expr& e, const Naming& naming, int min_prec) {
  std::string out;
  switch (e.kind) {
    case Expr::Kind::kInt:
      out = std::to_string(e.value);
      break;
    case Expr::Kind::kFloat:
      out = e.text;
      break;
    case Expr::Kind::kRef:
      out = printRef(e, naming);
      break;
    case Expr::Kind::kUnary:
      out = e.op + printAt(*e.kids[0], naming, 6);
      break;
    case Expr::Kind::kBinary:
      out = printBinary(e, naming);
      break;
    case Expr::Kind::kTernary:
      out = printAt(*e.kids[0], naming, 1) + " ? " + printAt(*e.kids[1], naming, 0) + " : " +
            printAt(*e.kids[2], naming, 0);
      break;
    case Expr::Kind::kCall:
      out =
          e.op + "(" + printAt(*e.kids[0], naming, 0) + ", " + printAt(*e.kids[1], naming, 0) + ")";
      break;
  }
  // A negative literal is a unary minus in .taidl: parenthesise it where a unary cannot stand.
  bool negative = e.kind == Expr::Kind::kInt && e.value < 0;
  if (precedence(e) < min_prec || (negative && min_prec > 6)) return "(" + out + ")";
  return out;
}

int64_t floorDiv(int64_t a, int64_t b) {
  int64_t q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
  return q;
}

std::optional<int64_t> evalBinary(const std::string& op, int64_t a, int64_t b) {
  if (op == "+") return a + b;
  if (op == "-") return a - b;
  if (op == "*") return a * b;
  if (op == "/") {
    if (b == 0 || a % b != 0) return std::nullopt;
    return a / b;
  }
  if (op == "//") return b == 0 ? std::nullopt : std::optional<int64_t>(floorDiv(a, b));
  if (op == "%") return b == 0 ? std::nullopt : std::optional<int64_t>(a - floorDiv(a, b) * b);
  if (op == "==") return a == b;
  if (op == "!=") return a != b;
  if (op == "<") return a < b;
  if (op == "<=") return a <= b;
  if (op == ">") return a > b;
  if (op == ">=") return a >= b;
  if (op == "&&") return (a != 0) && (b != 0);
  if (op == "||") return (a != 0) || (b != 0);
  return std::nullopt;
}

}  // namespace

bool hasFloat(const Expr& e) {
  return e.kind == Expr::Kind::kFloat ||
         std::any_of(e.kids.begin(), e.kids.end(), [](const ExprPtr& k) { return hasFloat(*k); });
}

std::string floatText(std::string_view python_text) {
  double v = std::strtod(std::string(python_text).c_str(), nullptr);
  char buf[64];
  std::string out(buf, std::to_chars(buf, buf + sizeof(buf), v).ptr);
  if (out.find_first_of(".eIn") == std::string::npos) out += ".0";  // inf and nan have an 'n'
  return out;
}

namespace {

// How deep the .taidl parser will find `e` nested as printExpr writes it (at least min_prec):
// each unary operator (a negative literal is one), parenthesis, min/max call and the branches of
// a conditional are one level (taidl/parser.cc, Nest), mirroring printAt's parentheses.
int printedNesting(const Expr& e, int min_prec) {
  int inner = 0;
  switch (e.kind) {
    case Expr::Kind::kInt:
      inner = e.value < 0 ? 1 : 0;
      break;
    case Expr::Kind::kFloat:
      inner = !e.text.empty() && e.text[0] == '-' ? 1 : 0;
      break;
    case Expr::Kind::kRef:
      break;
    case Expr::Kind::kUnary:
      inner = 1 + printedNesting(*e.kids[0], 6);
      break;
    case Expr::Kind::kBinary: {
      int p = precedence(e);
      inner = std::max(printedNesting(*e.kids[0], p == 3 ? 4 : p),
                       printedNesting(*e.kids[1], p == 3 ? 4 : p + 1));
      break;
    }
    case Expr::Kind::kTernary:
      inner = std::max(printedNesting(*e.kids[0], 1),
                       1 + std::max(printedNesting(*e.kids[1], 0), printedNesting(*e.kids[2], 0)));
      break;
    case Expr::Kind::kCall:
      inner = 1 + std::max(printedNesting(*e.kids[0], 0), printedNesting(*e.kids[1], 0));
      break;
  }
  bool negative = e.kind == Expr::Kind::kInt && e.value < 0;
  bool parenthesised = precedence(e) < min_prec || (negative && min_prec > 6);
  return inner + (parenthesised ? 1 : 0);
}

}  // namespace

ExprPtr parsePyExpr(std::string_view text, int line, FloatLiterals floats) {
  std::string_view trimmed = text;
  while (!trimmed.empty() && (trimmed.front() == ' ' || trimmed.front() == '`'))
    trimmed.remove_prefix(1);
  while (!trimmed.empty() && (trimmed.back() == ' ' || trimmed.back() == '`'))
    trimmed.remove_suffix(1);
  if (trimmed.empty()) fail(line, "empty expression");
  ExprPtr e = PyParser(trimmed, line).parseAll();
  // The .taidl parser reads at most 64 levels of nesting, the blocks around an expression
  // included (taidl/isa.h, kMaxNesting): what the importer writes must load.
  if (int depth = printedNesting(*e, 0); depth > kMaxExprNesting) {
    fail(line, "'" + concreteText(trimmed) + "' nests " + std::to_string(depth) +
                   " levels of operators and parentheses deep in .taidl; the limit is " +
                   std::to_string(kMaxExprNesting));
  }
  if (floats == FloatLiterals::kRejected && hasFloat(*e)) {
    fail(line, "a floating-point number in '" + concreteText(trimmed) +
                   "', where .taidl needs an integer expression");
  }
  return e;
}

std::string printExpr(const Expr& e, const Naming& naming) {
  return printAt(e, naming, 0);
}

void collectAttrs(const Expr& e, std::set<std::string>& out) {
  if (e.kind == Expr::Kind::kRef && (e.prefix == 'a' || e.prefix == 'c')) out.insert(e.name);
  for (const ExprPtr& k : e.kids)
    collectAttrs(*k, out);
}

std::optional<int64_t> evalExpr(const Expr& e, const std::map<std::string, int64_t>& env) {
  switch (e.kind) {
    case Expr::Kind::kInt:
      return e.value;
    case Expr::Kind::kFloat:
      return std::nullopt;
    case Expr::Kind::kRef: {
      auto it = env.find(std::string(1, e.prefix) + ":" + e.name);
      if (it == env.end()) return std::nullopt;
      return it->second;
    }
    case Expr::Kind::kUnary: {
      auto a = evalExpr(*e.kids[0], env);
      if (!a) return std::nullopt;
      return e.op == "-" ? -*a : static_cast<int64_t>(*a == 0);
    }
    case Expr::Kind::kBinary: {
      auto a = evalExpr(*e.kids[0], env);
      auto b = evalExpr(*e.kids[1], env);
      if (!a || !b) return std::nullopt;
      return evalBinary(e.op, *a, *b);
    }
    case Expr::Kind::kTernary: {
      auto c = evalExpr(*e.kids[0], env);
      if (!c) return std::nullopt;
      return evalExpr(*e.kids[*c != 0 ? 1 : 2], env);
    }
    case Expr::Kind::kCall: {
      auto a = evalExpr(*e.kids[0], env);
      auto b = evalExpr(*e.kids[1], env);
      if (!a || !b) return std::nullopt;
      return e.op == "min" ? std::min(*a, *b) : std::max(*a, *b);
    }
  }
  return std::nullopt;
}

std::string concreteText(std::string_view text) {
  std::string out;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t start = text.find('\x1e', pos);
    size_t mid = start == std::string_view::npos ? start : text.find('\x1d', start);
    size_t end = mid == std::string_view::npos ? mid : text.find('\x1f', mid);
    if (end == std::string_view::npos) {
      out += text.substr(pos);
      break;
    }
    out += text.substr(pos, start - pos);
    out += text.substr(mid + 1, end - mid - 1);
    pos = end + 1;
  }
  return out;
}

size_t skipOpaque(std::string_view text, size_t i, int line) {
  if (text[i] != '`' && text[i] != '\x1e') return i;
  size_t end = text[i] == '`' ? text.find('`', i + 1) : text.find('\x1f', i);
  if (end == std::string_view::npos) {
    fail(line, text[i] == '`' ? "unterminated backquote in '" + concreteText(text) + "'"
                              : std::string("bad parameter marker (not closed)"));
  }
  return end;
}

bool hasMarker(std::string_view text) {
  return text.find('\x1e') != std::string_view::npos;
}

bool isDtype(std::string_view s) {
  static const std::set<std::string_view> kTypes = {
      "pred", "s8", "s16", "s32", "s64", "u8", "u16", "u32", "u64", "f16", "bf16", "f32", "f64"};
  return kTypes.count(s) != 0;
}

int dtypeBytes(std::string_view dtype) {
  if (dtype == "s8" || dtype == "u8") return 1;
  if (dtype == "s16" || dtype == "u16" || dtype == "f16" || dtype == "bf16") return 2;
  if (dtype == "s32" || dtype == "u32" || dtype == "f32") return 4;
  if (dtype == "s64" || dtype == "u64" || dtype == "f64") return 8;
  return 0;
}

bool isKeyword(std::string_view s) {
  static const std::set<std::string_view> kKeywords = {
      "isa",   "param",  "const",  "buffer", "of",    "reg",   "instruction", "macro",
      "reads", "writes", "size",   "read",   "write", "set",   "require",     "cost",
      "if",    "else",   "repeat", "in",     "true",  "false", "min",         "max"};
  return kKeywords.count(s) != 0;
}

std::string safeIdent(std::string_view s) {
  std::string out;
  for (char c : s)
    out += isIdentChar(c) ? c : '_';
  if (out.empty() || !isIdentStart(out[0])) out = "_" + out;
  if (isKeyword(out)) out += "_";
  return out;
}

std::string safeValueName(std::string_view s) {
  std::string out;
  for (char c : s)
    out += isIdentChar(c) || c == '.' ? c : '_';
  return out.empty() ? "_" : out;
}

}  // namespace tacit::importer
