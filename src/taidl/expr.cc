#include "taidl/expr.h"

#include <cstring>
#include <limits>

namespace tacit::taidl {

// ---- construction -----------------------------------------------------------------------------

int32_t Expr::push(ExprNode n) {
  nodes_.push_back(n);
  return static_cast<int32_t>(nodes_.size()) - 1;
}

int32_t Expr::addName(std::string name) {
  for (size_t i = 0; i < names_.size(); ++i) {
    if (names_[i] == name) return static_cast<int32_t>(i);
  }
  names_.push_back(std::move(name));
  return static_cast<int32_t>(names_.size()) - 1;
}

int32_t Expr::append(const Expr& other) {
  auto base = static_cast<int32_t>(nodes_.size());
  for (ExprNode n : other.nodes_) {
    if (n.a >= 0) n.a += base;
    if (n.b >= 0) n.b += base;
    if (n.c >= 0) n.c += base;
    if (n.op == ExprOp::kRef) n.name = static_cast<uint32_t>(addName(other.names_[n.name]));
    nodes_.push_back(n);
  }
  return static_cast<int32_t>(nodes_.size()) - 1;
}

Expr Expr::integer(int64_t v, uint32_t offset) {
  Expr e;
  ExprNode n;
  n.value = v;
  n.offset = n.op_offset = offset;
  e.push(n);
  return e;
}

Expr Expr::boolean(bool v, uint32_t offset) {
  Expr e = integer(v ? 1 : 0, offset);
  e.nodes_.back().is_bool = true;
  return e;
}

Expr Expr::name(std::string name, uint32_t offset) {
  return ref(RefKind::kUnresolved, -1, std::move(name), 0, offset);
}

Expr Expr::ref(RefKind kind, int32_t slot, std::string name, int64_t value, uint32_t offset) {
  Expr e;
  ExprNode n;
  n.op = ExprOp::kRef;
  n.ref = kind;
  n.slot = slot;
  n.value = value;
  n.offset = n.op_offset = offset;
  n.name = static_cast<uint32_t>(e.addName(std::move(name)));
  e.push(n);
  return e;
}

Expr Expr::unary(ExprOp op, Expr x, uint32_t op_offset) {
  ExprNode n;
  n.op = op;
  n.a = x.rootIndex();
  n.offset = n.op_offset = op_offset;
  x.push(n);
  return x;
}

Expr Expr::binary(ExprOp op, Expr lhs, Expr rhs, uint32_t op_offset) {
  ExprNode n;
  n.op = op;
  n.a = lhs.rootIndex();
  n.b = lhs.append(rhs);
  // min(a, b) starts at `min`; infix operators start at their left operand.
  n.offset = (op == ExprOp::kMin || op == ExprOp::kMax) ? op_offset : lhs.node(n.a).offset;
  n.op_offset = op_offset;
  lhs.push(n);
  return lhs;
}

Expr Expr::cond(Expr c, Expr t, Expr f, uint32_t op_offset) {
  ExprNode n;
  n.op = ExprOp::kCond;
  n.a = c.rootIndex();
  n.b = c.append(t);
  n.c = c.append(f);
  n.offset = c.node(n.a).offset;
  n.op_offset = op_offset;
  c.push(n);
  return c;
}

// ---- queries ----------------------------------------------------------------------------------

bool Expr::isConstant() const {
  return constantValue().has_value();
}

std::optional<int64_t> Expr::constantValue() const {
  for (const ExprNode& n : nodes_) {
    if (n.op == ExprOp::kRef && n.ref != RefKind::kParam && n.ref != RefKind::kConst)
      return std::nullopt;
  }
  if (nodes_.empty()) return std::nullopt;
  try {
    return evalExpr(*this, EvalEnv{});
  } catch (const ExprError&) {
    return std::nullopt;
  }
}

bool Expr::uses(RefKind kind) const {
  for (const ExprNode& n : nodes_) {
    if (n.op == ExprOp::kRef && n.ref == kind) return true;
  }
  return false;
}

bool Expr::usesSlot(RefKind kind, int32_t slot) const {
  for (const ExprNode& n : nodes_) {
    if (n.op == ExprOp::kRef && n.ref == kind && n.slot == slot) return true;
  }
  return false;
}

Expr Expr::subtree(int32_t i) const {
  // Copies the nodes reachable from i, preserving post-order.
  Expr out;
  std::function<int32_t(int32_t)> copy = [&](int32_t k) -> int32_t {
    ExprNode n = node(k);
    if (n.a >= 0) n.a = copy(n.a);
    if (n.b >= 0) n.b = copy(n.b);
    if (n.c >= 0) n.c = copy(n.c);
    if (n.op == ExprOp::kRef) n.name = static_cast<uint32_t>(out.addName(names_[n.name]));
    return out.push(n);
  };
  copy(i);
  return out;
}

Expr Expr::substitute(
    const std::function<std::optional<Expr>(const Expr&, const ExprNode&)>& fn) const {
  Expr out;
  std::vector<int32_t> map(nodes_.size(), -1);
  for (size_t i = 0; i < nodes_.size(); ++i) {
    ExprNode n = nodes_[i];
    if (n.op == ExprOp::kRef) {
      if (std::optional<Expr> r = fn(*this, n)) {
        map[i] = out.append(*r);
        continue;
      }
      n.name = static_cast<uint32_t>(out.addName(names_[n.name]));
    }
    if (n.a >= 0) n.a = map[static_cast<size_t>(n.a)];
    if (n.b >= 0) n.b = map[static_cast<size_t>(n.b)];
    if (n.c >= 0) n.c = map[static_cast<size_t>(n.c)];
    map[i] = out.push(n);
  }
  // Appended replacements may leave the root elsewhere than last: re-root by copying.
  if (!out.nodes_.empty() && map.back() != out.rootIndex()) return out.subtree(map.back());
  return out;
}

namespace {

bool sameNode(const Expr& x, int32_t i, const Expr& y, int32_t j) {
  const ExprNode& a = x.node(i);
  const ExprNode& b = y.node(j);
  if (a.op != b.op) return false;
  switch (a.op) {
    case ExprOp::kInt:
      return a.value == b.value;
    case ExprOp::kRef:
      if (a.ref != b.ref) return false;
      if (a.ref == RefKind::kUnresolved) return x.refName(a) == y.refName(b);
      if (a.ref == RefKind::kParam || a.ref == RefKind::kConst) return a.value == b.value;
      return a.slot == b.slot;
    default:
      break;
  }
  if ((a.a >= 0) != (b.a >= 0) || (a.b >= 0) != (b.b >= 0) || (a.c >= 0) != (b.c >= 0))
    return false;
  return (a.a < 0 || sameNode(x, a.a, y, b.a)) && (a.b < 0 || sameNode(x, a.b, y, b.b)) &&
         (a.c < 0 || sameNode(x, a.c, y, b.c));
}

size_t hashNode(const Expr& e, int32_t i) {
  const ExprNode& n = e.node(i);
  size_t h = static_cast<size_t>(n.op) * 0x9e3779b97f4a7c15ULL;
  auto mix = [&h](size_t v) { h ^= v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2); };
  if (n.op == ExprOp::kInt) mix(static_cast<size_t>(n.value));
  if (n.op == ExprOp::kRef) {
    mix(static_cast<size_t>(n.ref));
    if (n.ref == RefKind::kParam || n.ref == RefKind::kConst)
      mix(static_cast<size_t>(n.value));
    else if (n.ref == RefKind::kUnresolved)
      mix(std::hash<std::string>()(e.refName(n)));
    else
      mix(static_cast<size_t>(n.slot));
  }
  if (n.a >= 0) mix(hashNode(e, n.a));
  if (n.b >= 0) mix(hashNode(e, n.b));
  if (n.c >= 0) mix(hashNode(e, n.c));
  return h;
}

}  // namespace

bool Expr::sameAs(const Expr& other) const {
  if (empty() || other.empty()) return empty() == other.empty();
  return sameNode(*this, rootIndex(), other, other.rootIndex());
}

size_t Expr::hash() const {
  return empty() ? 0 : hashNode(*this, rootIndex());
}

// ---- semantics --------------------------------------------------------------------------------

bool applyUnary(ExprOp op, int64_t a, int64_t* out, std::string* why) {
  if (op == ExprOp::kNot) {
    *out = a == 0 ? 1 : 0;
    return true;
  }
  if (a == std::numeric_limits<int64_t>::min()) {
    *why = "integer overflow in -(" + std::to_string(a) + ")";
    return false;
  }
  *out = -a;
  return true;
}

bool applyBinary(ExprOp op, int64_t a, int64_t b, int64_t* out, std::string* why) {
  auto overflow = [&](std::string_view sym) {
    *why = "integer overflow in " + std::to_string(a) + " " + std::string(sym) + " " +
           std::to_string(b);
    return false;
  };
  auto byZero = [&](std::string_view sym) {
    *why = "division by zero in " + std::to_string(a) + " " + std::string(sym) + " 0";
    return false;
  };
  constexpr int64_t kMin = std::numeric_limits<int64_t>::min();
  switch (op) {
    case ExprOp::kAdd:
      return !__builtin_add_overflow(a, b, out) || overflow("+");
    case ExprOp::kSub:
      return !__builtin_sub_overflow(a, b, out) || overflow("-");
    case ExprOp::kMul:
      return !__builtin_mul_overflow(a, b, out) || overflow("*");
    case ExprOp::kDiv:
      if (b == 0) return byZero("/");
      if (a == kMin && b == -1) return overflow("/");
      if (a % b != 0) {
        *why = "inexact division " + std::to_string(a) + " / " + std::to_string(b) +
               " (`/` is exact; use `//` to round down)";
        return false;
      }
      *out = a / b;
      return true;
    case ExprOp::kFloorDiv: {
      if (b == 0) return byZero("//");
      if (a == kMin && b == -1) return overflow("//");
      int64_t q = a / b;
      if (a % b != 0 && ((a < 0) != (b < 0))) --q;
      *out = q;
      return true;
    }
    case ExprOp::kMod: {
      if (b == 0) return byZero("%");
      if (b == -1) {
        *out = 0;
        return true;
      }
      int64_t r = a % b;
      if (r != 0 && ((r < 0) != (b < 0))) r += b;
      *out = r;
      return true;
    }
    case ExprOp::kEq:
      *out = a == b;
      return true;
    case ExprOp::kNe:
      *out = a != b;
      return true;
    case ExprOp::kLt:
      *out = a < b;
      return true;
    case ExprOp::kLe:
      *out = a <= b;
      return true;
    case ExprOp::kGt:
      *out = a > b;
      return true;
    case ExprOp::kGe:
      *out = a >= b;
      return true;
    case ExprOp::kAnd:
      *out = (a != 0 && b != 0);
      return true;
    case ExprOp::kOr:
      *out = (a != 0 || b != 0);
      return true;
    case ExprOp::kMin:
      *out = a < b ? a : b;
      return true;
    case ExprOp::kMax:
      *out = a < b ? b : a;
      return true;
    default:
      *why = "not a binary operator";
      return false;
  }
}

int64_t evalNode(const Expr& e, int32_t i, const EvalEnv& env) {
  const ExprNode& n = e.node(i);
  switch (n.op) {
    case ExprOp::kInt:
      return n.value;
    case ExprOp::kRef:
      switch (n.ref) {
        case RefKind::kParam:
        case RefKind::kConst:
          return n.value;
        case RefKind::kAlpha:
        case RefKind::kBeta:
          return env.attrs[static_cast<size_t>(n.slot)];
        case RefKind::kReg:
          return env.regs[static_cast<size_t>(n.slot)];
        case RefKind::kLoop:
          return env.loops[static_cast<size_t>(n.slot)];
        case RefKind::kLet:
          return env.lets[static_cast<size_t>(n.slot)];
        case RefKind::kUnresolved:
          break;
      }
      throw ExprError{n.offset, "unresolved name '" + e.refName(n) + "'"};
    case ExprOp::kAnd:
      return evalNode(e, n.a, env) != 0 && evalNode(e, n.b, env) != 0;
    case ExprOp::kOr:
      return evalNode(e, n.a, env) != 0 || evalNode(e, n.b, env) != 0;
    case ExprOp::kCond:
      return evalNode(e, n.a, env) != 0 ? evalNode(e, n.b, env) : evalNode(e, n.c, env);
    case ExprOp::kNeg:
    case ExprOp::kNot: {
      int64_t out = 0;
      std::string why;
      if (!applyUnary(n.op, evalNode(e, n.a, env), &out, &why)) throw ExprError{n.op_offset, why};
      return out;
    }
    default: {
      int64_t a = evalNode(e, n.a, env);
      int64_t b = evalNode(e, n.b, env);
      int64_t out = 0;
      std::string why;
      if (!applyBinary(n.op, a, b, &out, &why)) throw ExprError{n.op_offset, why};
      return out;
    }
  }
}

int64_t evalExpr(const Expr& e, const EvalEnv& env) {
  return evalNode(e, e.rootIndex(), env);
}

// ---- printing ---------------------------------------------------------------------------------

std::string_view exprOpSpelling(ExprOp op) {
  switch (op) {
    case ExprOp::kNeg:
      return "-";
    case ExprOp::kNot:
      return "!";
    case ExprOp::kAdd:
      return "+";
    case ExprOp::kSub:
      return "-";
    case ExprOp::kMul:
      return "*";
    case ExprOp::kDiv:
      return "/";
    case ExprOp::kFloorDiv:
      return "//";
    case ExprOp::kMod:
      return "%";
    case ExprOp::kEq:
      return "==";
    case ExprOp::kNe:
      return "!=";
    case ExprOp::kLt:
      return "<";
    case ExprOp::kLe:
      return "<=";
    case ExprOp::kGt:
      return ">";
    case ExprOp::kGe:
      return ">=";
    case ExprOp::kAnd:
      return "&&";
    case ExprOp::kOr:
      return "||";
    case ExprOp::kCond:
      return "?";
    case ExprOp::kMin:
      return "min";
    case ExprOp::kMax:
      return "max";
    default:
      return "";
  }
}

bool isComparison(ExprOp op) {
  return op == ExprOp::kEq || op == ExprOp::kNe || op == ExprOp::kLt || op == ExprOp::kLe ||
         op == ExprOp::kGt || op == ExprOp::kGe;
}

namespace {

// Binding strength, as in the grammar: ?: 1, || 2, && 3, comparisons 4, + - 5, * / // % 6,
// unary 7, primaries 8.
int precedence(const ExprNode& n) {
  switch (n.op) {
    case ExprOp::kCond:
      return 1;
    case ExprOp::kOr:
      return 2;
    case ExprOp::kAnd:
      return 3;
    case ExprOp::kAdd:
    case ExprOp::kSub:
      return 5;
    case ExprOp::kMul:
    case ExprOp::kDiv:
    case ExprOp::kFloorDiv:
    case ExprOp::kMod:
      return 6;
    case ExprOp::kNeg:
    case ExprOp::kNot:
      return 7;
    case ExprOp::kInt:
      return n.value < 0 ? 7 : 8;
    default:
      return isComparison(n.op) ? 4 : 8;
  }
}

void print(const Expr& e, int32_t i, int min_prec, std::string& out) {
  const ExprNode& n = e.node(i);
  int prec = precedence(n);
  bool parens = prec < min_prec;
  if (parens) out += '(';
  switch (n.op) {
    case ExprOp::kInt:
      if (n.is_bool)
        out += n.value ? "true" : "false";
      else
        out += std::to_string(n.value);
      break;
    case ExprOp::kRef:
      if (n.ref == RefKind::kReg) out += '$';
      out += e.refName(n);
      break;
    case ExprOp::kNeg:
    case ExprOp::kNot:
      out += exprOpSpelling(n.op);
      print(e, n.a, 7, out);
      break;
    case ExprOp::kMin:
    case ExprOp::kMax:
      out += exprOpSpelling(n.op);
      out += '(';
      print(e, n.a, 1, out);
      out += ", ";
      print(e, n.b, 1, out);
      out += ')';
      break;
    case ExprOp::kCond:
      print(e, n.a, 2, out);
      out += " ? ";
      print(e, n.b, 1, out);
      out += " : ";
      print(e, n.c, 1, out);
      break;
    default: {
      // Left-associative binary operators; comparisons do not chain.
      bool cmp = prec == 4;
      print(e, n.a, cmp ? 5 : prec, out);
      out += ' ';
      out += exprOpSpelling(n.op);
      out += ' ';
      print(e, n.b, cmp ? 5 : prec + 1, out);
      break;
    }
  }
  if (parens) out += ')';
}

}  // namespace

std::string exprText(const Expr& e, int32_t node) {
  std::string out;
  print(e, node, 1, out);
  return out;
}

std::string exprText(const Expr& e) {
  return e.empty() ? std::string() : exprText(e, e.rootIndex());
}

}  // namespace tacit::taidl
