// Algebraic simplification of resolved expressions: constant folding (parameters and constants
// become numbers), short-circuiting of constant conditions, and canonical polynomial form for
// arithmetic (so `(d + 0) * 1` prints as `d` and equal addresses compare equal structurally).
// The result has the same value as the input wherever the input evaluates without error;
// subexpressions that would fail (x / 0) are kept as written.
#pragma once

#include <functional>
#include <string>

#include "taidl/expr.h"
#include "taidl/poly.h"

namespace tacit::taidl {

// `name(v)` spells a variable when a polynomial is rebuilt.
Expr simplify(const Expr& e, const std::function<std::string(Var)>& name);

// True if the value of `e` is always 0 or 1 (a comparison, a logical operator, a boolean).
bool isBooleanValued(const Expr& e);

}  // namespace tacit::taidl
