#include "taidl/poly.h"

#include <algorithm>

namespace tacit::taidl {

// ---- Poly -------------------------------------------------------------------------------------

Poly Poly::constant(int64_t c) {
  Poly p;
  if (c != 0) p.terms_[{}] = c;
  return p;
}

Poly Poly::var(Var v) {
  Poly p;
  p.terms_[{v}] = 1;
  return p;
}

std::optional<int64_t> Poly::constantValue() const {
  if (terms_.empty()) return 0;
  if (terms_.size() == 1 && terms_.begin()->first.empty()) return terms_.begin()->second;
  return std::nullopt;
}

int Poly::degree() const {
  size_t d = 0;
  for (const auto& [m, c] : terms_)
    d = std::max(d, m.size());
  return static_cast<int>(d);
}

bool Poly::uses(RefKind kind) const {
  for (const auto& [m, c] : terms_) {
    for (const Var& v : m) {
      if (v.kind == kind) return true;
    }
  }
  return false;
}

std::vector<Var> Poly::vars() const {
  std::vector<Var> out;
  for (const auto& [m, c] : terms_)
    out.insert(out.end(), m.begin(), m.end());
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

bool Poly::add(const Poly& other, int64_t scale) {
  for (const auto& [m, c] : other.terms_) {
    int64_t scaled = 0;
    if (__builtin_mul_overflow(c, scale, &scaled)) return false;
    int64_t& slot = terms_[m];
    if (__builtin_add_overflow(slot, scaled, &slot)) return false;
    if (slot == 0) terms_.erase(m);
  }
  return true;
}

bool Poly::mul(const Poly& other) {
  Poly out;
  for (const auto& [m1, c1] : terms_) {
    for (const auto& [m2, c2] : other.terms_) {
      Monomial m = m1;
      m.insert(m.end(), m2.begin(), m2.end());
      std::sort(m.begin(), m.end());
      int64_t c = 0;
      if (__builtin_mul_overflow(c1, c2, &c)) return false;
      int64_t& slot = out.terms_[m];
      if (__builtin_add_overflow(slot, c, &slot)) return false;
      if (slot == 0) out.terms_.erase(m);
    }
  }
  *this = std::move(out);
  return true;
}

bool Poly::divideExact(int64_t c) {
  if (c == 0) return false;
  for (const auto& [m, k] : terms_) {
    if (k % c != 0 || (k == INT64_MIN && c == -1)) return false;
  }
  for (auto& [m, k] : terms_)
    k /= c;
  return true;
}

std::optional<int64_t> Poly::eval(const std::function<int64_t(Var)>& value) const {
  int64_t sum = 0;
  for (const auto& [m, c] : terms_) {
    int64_t t = c;
    for (const Var& v : m) {
      if (__builtin_mul_overflow(t, value(v), &t)) return std::nullopt;
    }
    if (__builtin_add_overflow(sum, t, &sum)) return std::nullopt;
  }
  return sum;
}

std::optional<Poly> toPoly(const Expr& e, int32_t i) {
  const ExprNode& n = e.node(i);
  switch (n.op) {
    case ExprOp::kInt:
      return Poly::constant(n.value);
    case ExprOp::kRef:
      if (n.ref == RefKind::kParam || n.ref == RefKind::kConst) return Poly::constant(n.value);
      if (n.ref == RefKind::kUnresolved) return std::nullopt;
      return Poly::var(Var{n.ref, n.slot});
    case ExprOp::kNeg: {
      auto a = toPoly(e, n.a);
      if (!a) return std::nullopt;
      Poly out;
      if (!out.add(*a, -1)) return std::nullopt;
      return out;
    }
    case ExprOp::kAdd:
    case ExprOp::kSub:
    case ExprOp::kMul:
    case ExprOp::kDiv: {
      auto a = toPoly(e, n.a);
      auto b = toPoly(e, n.b);
      if (!a || !b) return std::nullopt;
      bool ok = true;
      if (n.op == ExprOp::kAdd) ok = a->add(*b);
      if (n.op == ExprOp::kSub) ok = a->add(*b, -1);
      if (n.op == ExprOp::kMul) ok = a->mul(*b);
      if (n.op == ExprOp::kDiv) {
        std::optional<int64_t> c = b->constantValue();
        ok = c && a->divideExact(*c);
      }
      if (!ok) return std::nullopt;
      return a;
    }
    default:
      return std::nullopt;
  }
}

std::optional<Poly> toPoly(const Expr& e) {
  if (e.empty()) return std::nullopt;
  return toPoly(e, e.rootIndex());
}

Expr polyToExpr(const Poly& p, const std::function<std::string(Var)>& name) {
  // Higher-degree monomials first, then by variable order; the constant term last.
  std::vector<std::pair<Monomial, int64_t>> terms(p.terms().begin(), p.terms().end());
  std::stable_sort(terms.begin(), terms.end(),
                   [](const auto& x, const auto& y) { return x.first.size() > y.first.size(); });
  Expr out;
  for (const auto& [m, c] : terms) {
    int64_t mag = c < 0 && c != INT64_MIN ? -c : c;
    bool negate = c < 0 && c != INT64_MIN;
    Expr term;
    if (mag != 1 || m.empty()) term = Expr::integer(mag);
    for (const Var& v : m) {
      Expr r = Expr::ref(v.kind, v.slot, name(v));
      term = term.empty() ? r : Expr::binary(ExprOp::kMul, std::move(term), std::move(r));
    }
    if (out.empty()) {
      out = negate ? Expr::unary(ExprOp::kNeg, std::move(term)) : std::move(term);
    } else {
      out = Expr::binary(negate ? ExprOp::kSub : ExprOp::kAdd, std::move(out), std::move(term));
    }
  }
  return out.empty() ? Expr::integer(0) : out;
}

std::optional<Affine> affineIn(const Poly& p, RefKind kind) {
  Affine out;
  std::map<Var, Poly> coeffs;
  for (const auto& [m, c] : p.terms()) {
    Monomial rest;
    std::optional<Var> found;
    for (const Var& v : m) {
      if (v.kind != kind) {
        rest.push_back(v);
      } else if (found) {
        return std::nullopt;
      } else {
        found = v;
      }
    }
    Poly term;
    Poly unit = Poly::constant(c);
    for (const Var& v : rest) {
      if (!unit.mul(Poly::var(v))) return std::nullopt;
    }
    term = unit;
    if (found) {
      if (!coeffs[*found].add(term)) return std::nullopt;
    } else if (!out.constant.add(term)) {
      return std::nullopt;
    }
  }
  for (auto& [v, c] : coeffs) {
    if (!c.isZero()) out.terms.push_back(AffineTerm{v, std::move(c)});
  }
  return out;
}

// ---- Interval ---------------------------------------------------------------------------------

namespace {

__extension__ typedef __int128 Wide;  // __extension__: -Wpedantic knows no __int128
constexpr Wide kInf = Wide(1) << 100;

Wide lo128(const Interval& i) {
  return i.hasLo() ? Wide(i.lo) : -kInf;
}
Wide hi128(const Interval& i) {
  return i.hasHi() ? Wide(i.hi) : kInf;
}

int64_t clampLo(Wide v) {
  if (v <= Wide(Interval::kNegInf)) return Interval::kNegInf;
  if (v >= Wide(Interval::kPosInf)) return Interval::kPosInf - 1;
  return static_cast<int64_t>(v);
}
int64_t clampHi(Wide v) {
  if (v >= Wide(Interval::kPosInf)) return Interval::kPosInf;
  if (v <= Wide(Interval::kNegInf)) return Interval::kNegInf + 1;
  return static_cast<int64_t>(v);
}

Interval make(Wide lo, Wide hi) {
  return Interval{clampLo(lo), clampHi(hi)};
}

Wide satMul(Wide a, Wide b) {
  if (a == 0 || b == 0) return 0;
  bool neg = (a < 0) != (b < 0);
  Wide ma = a < 0 ? -a : a;
  Wide mb = b < 0 ? -b : b;
  if (ma >= kInf || mb >= kInf || ma > kInf / mb) return neg ? -kInf : kInf;
  return neg ? -(ma * mb) : ma * mb;
}

Wide floorDiv(Wide a, Wide b) {
  if (a <= -kInf || a >= kInf) return ((a < 0) != (b < 0)) ? -kInf : kInf;
  Wide q = a / b;
  if (a % b != 0 && ((a < 0) != (b < 0))) --q;
  return q;
}

Interval divide(Interval a, Interval b) {
  Wide bl = lo128(b), bh = hi128(b);
  if (bl <= 0 && bh >= 0) return Interval::all();  // the divisor may be zero
  Wide c[4] = {floorDiv(lo128(a), bl), floorDiv(lo128(a), bh), floorDiv(hi128(a), bl),
               floorDiv(hi128(a), bh)};
  // Infinite divisors make the quotient tend to 0 or -1 (floor): keep the hull sound.
  Wide lo = *std::min_element(c, c + 4), hi = *std::max_element(c, c + 4);
  if (bl <= -kInf || bh >= kInf) {
    lo = std::min(lo, Wide(-1));
    hi = std::max(hi, Wide(0));
  }
  return make(lo, hi);
}

Interval modulo(Interval a, Interval b) {
  Wide bl = lo128(b), bh = hi128(b);
  if (bl > 0) {
    if (lo128(a) >= 0 && hi128(a) < bl) return a;  // a % b == a
    return make(0, bh >= kInf ? kInf : bh - 1);
  }
  if (bh < 0) return make(bl <= -kInf ? -kInf : bl + 1, 0);
  return Interval::all();
}

Interval boolean(bool can_be_false, bool can_be_true) {
  return Interval{can_be_false ? 0 : 1, can_be_true ? 1 : 0};
}

Interval compare(ExprOp op, Interval a, Interval b) {
  Wide al = lo128(a), ah = hi128(a), bl = lo128(b), bh = hi128(b);
  switch (op) {
    case ExprOp::kLt:
      return boolean(!(ah < bl), al < bh);
    case ExprOp::kLe:
      return boolean(!(ah <= bl), al <= bh);
    case ExprOp::kGt:
      return boolean(!(al > bh), ah > bl);
    case ExprOp::kGe:
      return boolean(!(al >= bh), ah >= bl);
    case ExprOp::kEq: {
      bool always = a.isPoint() && b.isPoint() && a.lo == b.lo;
      bool never = ah < bl || bh < al;
      return boolean(!always, !never);
    }
    case ExprOp::kNe: {
      bool always = ah < bl || bh < al;
      bool never = a.isPoint() && b.isPoint() && a.lo == b.lo;
      return boolean(!always, !never);
    }
    default:
      return Interval{0, 1};
  }
}

bool mayBeTrue(Interval i) {
  return i.lo != 0 || i.hi != 0;
}
bool mayBeFalse(Interval i) {
  return i.contains(0);
}

}  // namespace

Interval intervalAdd(Interval a, Interval b) {
  return make(lo128(a) + lo128(b), hi128(a) + hi128(b));
}

Interval intervalNeg(Interval a) {
  return make(-hi128(a), -lo128(a));
}

Interval intervalMul(Interval a, Interval b) {
  Wide c[4] = {satMul(lo128(a), lo128(b)), satMul(lo128(a), hi128(b)), satMul(hi128(a), lo128(b)),
               satMul(hi128(a), hi128(b))};
  return make(*std::min_element(c, c + 4), *std::max_element(c, c + 4));
}

Interval intervalHull(Interval a, Interval b) {
  if (a.empty()) return b;
  if (b.empty()) return a;
  return Interval{std::min(a.lo, b.lo), std::max(a.hi, b.hi)};
}

Interval intervalMeet(Interval a, Interval b) {
  return Interval{std::max(a.lo, b.lo), std::min(a.hi, b.hi)};
}

Interval boundNode(const Expr& e, int32_t i, const VarBounds& bounds) {
  const ExprNode& n = e.node(i);
  auto sub = [&](int32_t k) { return boundNode(e, k, bounds); };
  switch (n.op) {
    case ExprOp::kInt:
      return Interval::point(n.value);
    case ExprOp::kRef:
      if (n.ref == RefKind::kParam || n.ref == RefKind::kConst) return Interval::point(n.value);
      if (n.ref == RefKind::kUnresolved) return Interval::all();
      return bounds(Var{n.ref, n.slot});
    case ExprOp::kNeg:
      return intervalNeg(sub(n.a));
    case ExprOp::kNot: {
      Interval a = sub(n.a);
      return boolean(mayBeTrue(a), mayBeFalse(a));
    }
    case ExprOp::kAdd:
      return intervalAdd(sub(n.a), sub(n.b));
    case ExprOp::kSub:
      return intervalAdd(sub(n.a), intervalNeg(sub(n.b)));
    case ExprOp::kMul:
      return intervalMul(sub(n.a), sub(n.b));
    case ExprOp::kDiv:
    case ExprOp::kFloorDiv:
      return divide(sub(n.a), sub(n.b));
    case ExprOp::kMod:
      return modulo(sub(n.a), sub(n.b));
    case ExprOp::kAnd: {
      Interval a = sub(n.a), b = sub(n.b);
      return boolean(mayBeFalse(a) || mayBeFalse(b), mayBeTrue(a) && mayBeTrue(b));
    }
    case ExprOp::kOr: {
      Interval a = sub(n.a), b = sub(n.b);
      return boolean(mayBeFalse(a) && mayBeFalse(b), mayBeTrue(a) || mayBeTrue(b));
    }
    case ExprOp::kCond: {
      Interval c = sub(n.a);
      if (!mayBeFalse(c)) return sub(n.b);
      if (!mayBeTrue(c)) return sub(n.c);
      return intervalHull(sub(n.b), sub(n.c));
    }
    case ExprOp::kMin: {
      Interval a = sub(n.a), b = sub(n.b);
      return Interval{std::min(a.lo, b.lo), std::min(a.hi, b.hi)};
    }
    case ExprOp::kMax: {
      Interval a = sub(n.a), b = sub(n.b);
      return Interval{std::max(a.lo, b.lo), std::max(a.hi, b.hi)};
    }
    default:
      return compare(n.op, sub(n.a), sub(n.b));
  }
}

Interval boundExpr(const Expr& e, const VarBounds& bounds) {
  if (e.empty()) return Interval::all();
  return boundNode(e, e.rootIndex(), bounds);
}

Interval boundPoly(const Poly& p, const VarBounds& bounds) {
  Interval sum = Interval::point(0);
  for (const auto& [m, c] : p.terms()) {
    Interval term = Interval::point(c);
    // Even powers of one variable are non-negative: bound x^2 by [0, max(lo^2, hi^2)].
    for (size_t k = 0; k < m.size();) {
      size_t j = k;
      while (j < m.size() && m[j] == m[k])
        ++j;
      Interval v = bounds(m[k]);
      Interval power = Interval::point(1);
      for (size_t r = k; r < j; ++r)
        power = intervalMul(power, v);
      if ((j - k) % 2 == 0 && power.lo < 0) power.lo = 0;
      term = intervalMul(term, power);
      k = j;
    }
    sum = intervalAdd(sum, term);
  }
  return sum;
}

std::string intervalText(const Interval& i) {
  std::string lo = i.hasLo() ? std::to_string(i.lo) : "-inf";
  std::string hi = i.hasHi() ? std::to_string(i.hi) : "+inf";
  return "[" + lo + ", " + hi + "]";
}

}  // namespace tacit::taidl
