// Concrete pieces of an operation statement for given attribute values: its result shape, its
// typed HLO attributes and its constant literal. Shared by the checker (type-checking at
// instantiation points), specialisation (the oracle) and instantiation of symbolic semantics
// (the selector), so the three agree on what an operation means.
//
// Every function throws ExprError (offset + message) for a mistake that depends on the values:
// a negative dimension, a division by zero in an attribute, a literal of the wrong structure.
#pragma once

#include <functional>

#include "hlo/instruction.h"
#include "hlo/literal.h"
#include "taidl/ast.h"
#include "taidl/expr.h"

namespace tacit::taidl {

// Elements of one constant(...) at most (a splat is materialised when specialised).
inline constexpr int64_t kMaxConstantElements = int64_t{1} << 26;

hlo::Shape evalType(const TypeExpr& t, const EvalEnv& env);

// Supplies the scalar reducer computation for `to_apply` (opcode in the reduce's element type);
// may throw DiagnosticError if the reducer is not valid for that type.
using ReducerFn = std::function<hlo::HloComputation*(hlo::HloOpcode, hlo::PrimitiveType)>;

// The reducer opcode named by to_apply=NAME (add, multiply, maximum, minimum, and, or, xor).
hlo::HloOpcode reducerOpcode(std::string_view name);

// Typed attributes of `opcode` from `attrs`; `reduce_type` is the element type of a reduce's init
// value (the reducer's type).
hlo::HloAttributes evalOpAttrs(hlo::HloOpcode opcode, const std::vector<OpAttr>& attrs,
                               const EvalEnv& env, hlo::PrimitiveType reduce_type,
                               const ReducerFn& reducer);

// Checks the literal's structure against `shape` (nested braces match the dimensions, or a
// scalar splat) and evaluates its expressions, without building it.
void checkLiteral(const LiteralValue& v, const hlo::Shape& shape, const EvalEnv& env);
// Builds the literal (a splat fills every element).
hlo::Literal evalLiteral(const LiteralValue& v, const hlo::Shape& shape, const EvalEnv& env);

}  // namespace tacit::taidl
