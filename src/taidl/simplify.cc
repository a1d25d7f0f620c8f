#include "taidl/simplify.h"

namespace tacit::taidl {
namespace {

bool booleanOp(ExprOp op) {
  return isComparison(op) || op == ExprOp::kAnd || op == ExprOp::kOr || op == ExprOp::kNot;
}

class Simplifier {
 public:
  Simplifier(const Expr& e, const std::function<std::string(Var)>& name) : e_(e), name_(name) {}

  Expr run() { return node(e_.rootIndex()); }

 private:
  Expr canonical(Expr x) {
    if (x.root().op == ExprOp::kInt || x.root().op == ExprOp::kRef) return x;
    std::optional<Poly> p = toPoly(x);
    if (!p) return x;
    return polyToExpr(*p, name_);
  }

  Expr node(int32_t i) {
    const ExprNode& n = e_.node(i);
    switch (n.op) {
      case ExprOp::kInt:
        return Expr::integer(n.value);
      case ExprOp::kRef:
        if (n.ref == RefKind::kParam || n.ref == RefKind::kConst) return Expr::integer(n.value);
        return Expr::ref(n.ref, n.slot, e_.refName(n), n.value, n.offset);
      case ExprOp::kNeg:
      case ExprOp::kNot: {
        Expr a = node(n.a);
        if (auto v = a.constantValue()) {
          int64_t out = 0;
          std::string why;
          if (applyUnary(n.op, *v, &out, &why)) return Expr::integer(out);
        }
        return canonical(Expr::unary(n.op, std::move(a), n.op_offset));
      }
      case ExprOp::kCond: {
        Expr c = node(n.a);
        if (auto v = c.constantValue()) return node(*v != 0 ? n.b : n.c);
        return Expr::cond(std::move(c), node(n.b), node(n.c), n.op_offset);
      }
      case ExprOp::kAnd:
      case ExprOp::kOr:
        return logical(n);
      default:
        return binary(n);
    }
  }

  Expr logical(const ExprNode& n) {
    Expr a = node(n.a);
    bool is_and = n.op == ExprOp::kAnd;
    if (auto v = a.constantValue()) {
      // false && x = 0, true || x = 1; true && x = (x != 0), false || x = (x != 0).
      if ((*v != 0) != is_and) return Expr::integer(is_and ? 0 : 1);
      Expr b = node(n.b);
      if (auto w = b.constantValue()) return Expr::integer(*w != 0 ? 1 : 0);
      if (isBooleanValued(b)) return b;
      return Expr::binary(ExprOp::kNe, std::move(b), Expr::integer(0));
    }
    Expr b = node(n.b);
    if (auto w = b.constantValue()) {
      if ((*w != 0) != is_and) return Expr::integer(is_and ? 0 : 1);
      if (isBooleanValued(a)) return a;
      return Expr::binary(ExprOp::kNe, std::move(a), Expr::integer(0));
    }
    return Expr::binary(n.op, std::move(a), std::move(b), n.op_offset);
  }

  Expr binary(const ExprNode& n) {
    Expr a = node(n.a);
    Expr b = node(n.b);
    auto va = a.constantValue(), vb = b.constantValue();
    if (va && vb) {
      int64_t out = 0;
      std::string why;
      if (applyBinary(n.op, *va, *vb, &out, &why)) return Expr::integer(out);
    }
    if (isComparison(n.op)) {
      // Decide comparisons whose difference is a constant polynomial.
      auto pa = toPoly(a), pb = toPoly(b);
      if (pa && pb && pa->add(*pb, -1)) {
        if (auto d = pa->constantValue()) {
          int64_t out = 0;
          std::string why;
          if (applyBinary(n.op, *d, 0, &out, &why)) return Expr::integer(out);
        }
      }
      return Expr::binary(n.op, std::move(a), std::move(b), n.op_offset);
    }
    return canonical(Expr::binary(n.op, std::move(a), std::move(b), n.op_offset));
  }

  const Expr& e_;
  const std::function<std::string(Var)>& name_;
};

}  // namespace

bool isBooleanValued(const Expr& e) {
  if (e.empty()) return false;
  const ExprNode& r = e.root();
  if (booleanOp(r.op)) return true;
  return r.op == ExprOp::kInt && (r.value == 0 || r.value == 1);
}

Expr simplify(const Expr& e, const std::function<std::string(Var)>& name) {
  if (e.empty()) return e;
  return Simplifier(e, name).run();
}

}  // namespace tacit::taidl
