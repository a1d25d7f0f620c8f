// Attribute bounds from constraints (docs/taidl.md section 4.1): interval propagation over the
// conjuncts of the requires. A comparison that is linear in an attribute with a constant
// coefficient bounds that attribute by the interval of the rest; `a || b` bounds by the hull of
// what each side implies. Iterated to a fixpoint (a few rounds), so `stride >= tiles * DIM` with
// `tiles >= 1` gives stride >= DIM.
#include <algorithm>

#include "taidl/check.h"

namespace tacit::taidl {
namespace {

int64_t floorDiv(int64_t a, int64_t b) {
  int64_t q = a / b;
  if (a % b != 0 && ((a < 0) != (b < 0))) --q;
  return q;
}
int64_t ceilDiv(int64_t a, int64_t b) {
  return -floorDiv(-a, b);
}

bool isAttr(const Var& v) {
  return v.kind == RefKind::kAlpha || v.kind == RefKind::kBeta;
}

// `p <= 0` tightens the bound of every attribute that appears in p linearly with a constant
// coefficient.
bool tightenLinear(const Poly& p, std::vector<Interval>& bounds) {
  bool changed = false;
  VarBounds vb = [&](Var v) {
    return isAttr(v) ? bounds[static_cast<size_t>(v.slot)] : Interval::all();
  };
  for (const Var& v : p.vars()) {
    if (!isAttr(v)) continue;
    auto it = p.terms().find(Monomial{v});
    if (it == p.terms().end()) continue;
    int64_t c = it->second;
    Poly rest = p;
    if (!rest.add(Poly::var(v), -c)) continue;
    std::vector<Var> others = rest.vars();
    if (std::find(others.begin(), others.end(), v) != others.end()) continue;  // v*w: not linear
    Interval r = boundPoly(rest, vb);
    if (!r.hasLo() || r.lo == Interval::kNegInf + 1) continue;
    Interval& b = bounds[static_cast<size_t>(v.slot)];
    Interval old = b;
    if (c > 0) {
      b.hi = std::min(b.hi, floorDiv(-r.lo, c));
    } else {
      b.lo = std::max(b.lo, ceilDiv(-r.lo, c));
    }
    changed |= !(b == old);
  }
  return changed;
}

bool tighten(const Expr& e, int32_t i, std::vector<Interval>& bounds);

// `p != 0` with p = c * v + k: v != -k / c shrinks an end of v's interval that equals it.
bool excludeValue(const Poly& p, std::vector<Interval>& bounds) {
  std::vector<Var> vars = p.vars();
  if (vars.size() != 1 || !isAttr(vars[0]) || p.degree() != 1) return false;
  int64_t c = p.terms().at(Monomial{vars[0]});
  int64_t k = p.terms().count(Monomial{}) ? p.terms().at(Monomial{}) : 0;
  if ((c == -1 && k == INT64_MIN) || k % c != 0) return false;
  int64_t excluded = -k / c;
  Interval& b = bounds[static_cast<size_t>(vars[0].slot)];
  Interval old = b;
  if (b.hasLo() && b.lo == excluded) ++b.lo;
  if (b.hasHi() && b.hi == excluded) --b.hi;
  return !(b == old);
}

bool tightenComparison(const Expr& e, const ExprNode& n, std::vector<Interval>& bounds) {
  std::optional<Poly> l = toPoly(e, n.a);
  std::optional<Poly> r = toPoly(e, n.b);
  if (!l || !r) return false;
  Poly lr = *l, rl = *r;  // l - r and r - l
  if (!lr.add(*r, -1) || !rl.add(*l, -1)) return false;
  auto plusOne = [](Poly p) {
    return p.add(Poly::constant(1)) ? std::optional<Poly>(p) : std::nullopt;
  };
  std::vector<std::optional<Poly>> forms;  // each must be <= 0
  switch (n.op) {
    case ExprOp::kLe:
      forms = {lr};
      break;
    case ExprOp::kLt:
      forms = {plusOne(lr)};
      break;
    case ExprOp::kGe:
      forms = {rl};
      break;
    case ExprOp::kGt:
      forms = {plusOne(rl)};
      break;
    case ExprOp::kEq:
      forms = {lr, rl};
      break;
    case ExprOp::kNe:
      return excludeValue(lr, bounds);
    default:
      return false;
  }
  bool changed = false;
  for (const auto& f : forms) {
    if (f) changed |= tightenLinear(*f, bounds);
  }
  return changed;
}

bool tighten(const Expr& e, int32_t i, std::vector<Interval>& bounds) {
  const ExprNode& n = e.node(i);
  if (n.op == ExprOp::kAnd) {
    bool a = tighten(e, n.a, bounds);
    bool b = tighten(e, n.b, bounds);
    return a || b;
  }
  if (n.op == ExprOp::kOr) {
    std::vector<Interval> left = bounds, right = bounds;
    tighten(e, n.a, left);
    tighten(e, n.b, right);
    bool changed = false;
    for (size_t k = 0; k < bounds.size(); ++k) {
      Interval m = intervalMeet(bounds[k], intervalHull(left[k], right[k]));
      changed |= !(m == bounds[k]);
      bounds[k] = m;
    }
    return changed;
  }
  if (isComparison(n.op)) return tightenComparison(e, n, bounds);
  return false;
}

}  // namespace

void splitConjuncts(const Expr& e, std::vector<Expr>& out) {
  if (e.empty()) return;
  const ExprNode& r = e.root();
  if (r.op != ExprOp::kAnd) {
    out.push_back(e);
    return;
  }
  splitConjuncts(e.subtree(r.a), out);
  splitConjuncts(e.subtree(r.b), out);
}

std::vector<Expr> attributeConstraints(const Instruction& inst) {
  std::vector<Expr> all, out;
  for (const Stmt* r : inst.requires_)
    splitConjuncts(r->expr, all);
  for (Expr& e : all) {
    if (!e.uses(RefKind::kReg) && !e.uses(RefKind::kLoop)) out.push_back(std::move(e));
  }
  return out;
}

std::vector<Interval> inferBounds(const std::vector<Expr>& constraints, int32_t num_attrs) {
  std::vector<Interval> bounds(static_cast<size_t>(num_attrs), Interval::all());
  for (int round = 0; round < 8; ++round) {
    bool changed = false;
    for (const Expr& c : constraints) {
      if (c.uses(RefKind::kReg) || c.uses(RefKind::kLoop)) continue;
      changed |= tighten(c, c.rootIndex(), bounds);
    }
    if (!changed) break;
  }
  return bounds;
}

}  // namespace tacit::taidl
