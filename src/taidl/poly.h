// Symbolic integer reasoning over .taidl expressions: canonical polynomials, affine forms and
// interval bounds.
//
// * Poly: a canonical sum of monomials over variables (attributes, registers, loop variables;
//   parameters and constants are folded numbers). Two polynomial expressions are equal for every
//   value of their variables iff their Polys are equal; shapes are compared this way.
// * Affine: a Poly split as `constant + sum coeff_i * v_i` over the variables of one kind (beta
//   for the addresses of ACT's h_theta), the coefficients being Polys in the other variables.
// * Interval: sound lower/upper bounds of an expression given bounds of its variables; used for
//   alpha ranges, slice-fits proofs and constant-condition warnings.
#pragma once

#include <compare>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "taidl/expr.h"

namespace tacit::taidl {

struct Var {
  RefKind kind = RefKind::kAlpha;
  int32_t slot = 0;
  friend auto operator<=>(const Var&, const Var&) = default;
};

// A product of variables, sorted, with repetition for powers ([x, x, y] = x^2 y).
using Monomial = std::vector<Var>;

class Poly {
 public:
  Poly() = default;
  static Poly constant(int64_t c);
  static Poly var(Var v);

  const std::map<Monomial, int64_t>& terms() const { return terms_; }
  bool isZero() const { return terms_.empty(); }
  std::optional<int64_t> constantValue() const;  // the value if there is no variable
  int degree() const;
  bool uses(RefKind kind) const;
  std::vector<Var> vars() const;

  // Arithmetic; false on int64 overflow of a coefficient (the result is then unspecified).
  bool add(const Poly& other, int64_t scale = 1);
  bool mul(const Poly& other);
  // Divides every coefficient by c if each is a multiple of c.
  bool divideExact(int64_t c);

  // Value for concrete variable values.
  std::optional<int64_t> eval(const std::function<int64_t(Var)>& value) const;

  friend bool operator==(const Poly&, const Poly&) = default;

 private:
  std::map<Monomial, int64_t> terms_;  // coefficients are never 0
};

// The polynomial of `e`, or nullopt if it involves /, //, % (except an exact `/` by a constant
// dividing every coefficient), comparisons, logic, ?:, min, max, an unresolved name, or
// overflows.
std::optional<Poly> toPoly(const Expr& e);
std::optional<Poly> toPoly(const Expr& e, int32_t node);

// Builds a canonical expression for `p`; `name(v)` spells each variable.
Expr polyToExpr(const Poly& p, const std::function<std::string(Var)>& name);

struct AffineTerm {
  Var var;
  Poly coeff;  // free of variables of the decomposed kind
};
struct Affine {
  Poly constant;
  std::vector<AffineTerm> terms;  // sorted by variable, non-zero coefficients
};
// p as constant + sum coeff_i * v_i over variables of `kind`; nullopt if a monomial has two such
// factors (non-affine).
std::optional<Affine> affineIn(const Poly& p, RefKind kind);

// A closed integer interval; the sentinels stand for -inf / +inf.
struct Interval {
  static constexpr int64_t kNegInf = INT64_MIN;
  static constexpr int64_t kPosInf = INT64_MAX;
  int64_t lo = kNegInf;
  int64_t hi = kPosInf;

  static Interval point(int64_t v) { return {v, v}; }
  static Interval all() { return {}; }
  bool hasLo() const { return lo != kNegInf; }
  bool hasHi() const { return hi != kPosInf; }
  bool isPoint() const { return hasLo() && lo == hi; }
  bool empty() const { return lo > hi; }
  bool contains(int64_t v) const { return lo <= v && v <= hi; }
  friend bool operator==(const Interval&, const Interval&) = default;
};

using VarBounds = std::function<Interval(Var)>;

Interval boundExpr(const Expr& e, const VarBounds& bounds);
Interval boundNode(const Expr& e, int32_t node, const VarBounds& bounds);
Interval boundPoly(const Poly& p, const VarBounds& bounds);

// Interval arithmetic (saturating at the infinities).
Interval intervalAdd(Interval a, Interval b);
Interval intervalMul(Interval a, Interval b);
Interval intervalNeg(Interval a);
Interval intervalHull(Interval a, Interval b);
Interval intervalMeet(Interval a, Interval b);

std::string intervalText(const Interval& i);

}  // namespace tacit::taidl
