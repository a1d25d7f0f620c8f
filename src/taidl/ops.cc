#include "taidl/ops.h"

#include <cmath>

#include "hlo/dtype.h"

namespace tacit::taidl {

using hlo::HloOpcode;

hlo::Shape evalType(const TypeExpr& t, const EvalEnv& env) {
  std::vector<int64_t> dims;
  dims.reserve(t.dims.size());
  for (const Expr& d : t.dims) {
    int64_t v = evalExpr(d, env);
    if (v < 0) throw ExprError{d.offset(), "dimension " + std::to_string(v) + " is negative"};
    dims.push_back(v);
  }
  return hlo::Shape(t.dtype, std::move(dims));
}

HloOpcode reducerOpcode(std::string_view name) {
  if (name == "add") return HloOpcode::kAdd;
  if (name == "multiply") return HloOpcode::kMultiply;
  if (name == "maximum") return HloOpcode::kMaximum;
  if (name == "minimum") return HloOpcode::kMinimum;
  if (name == "and") return HloOpcode::kAnd;
  if (name == "or") return HloOpcode::kOr;
  return HloOpcode::kXor;
}

namespace {

std::vector<int64_t> evalList(const std::vector<Expr>& list, const EvalEnv& env) {
  std::vector<int64_t> out;
  out.reserve(list.size());
  for (const Expr& e : list)
    out.push_back(evalExpr(e, env));
  return out;
}

hlo::ComparisonDirection direction(std::string_view s) {
  using D = hlo::ComparisonDirection;
  if (s == "EQ") return D::kEq;
  if (s == "NE") return D::kNe;
  if (s == "LT") return D::kLt;
  if (s == "LE") return D::kLe;
  if (s == "GT") return D::kGt;
  return D::kGe;
}

hlo::ComparisonType comparisonType(std::string_view s) {
  using T = hlo::ComparisonType;
  if (s == "FLOAT") return T::kFloat;
  if (s == "TOTALORDER") return T::kTotalOrder;
  if (s == "SIGNED") return T::kSigned;
  return T::kUnsigned;
}

std::string_view enumName(const OpAttr& a) {
  return a.expr.refName(a.expr.root());
}

}  // namespace

hlo::HloAttributes evalOpAttrs(HloOpcode opcode, const std::vector<OpAttr>& attrs,
                               const EvalEnv& env, hlo::PrimitiveType reduce_type,
                               const ReducerFn& reducer) {
  hlo::HloAttributes out;
  if (opcode == HloOpcode::kDot) out.dot_dims = hlo::DotDims{};
  for (const OpAttr& a : attrs) {
    const std::string& n = a.name.text;
    if (n == "dimensions") {
      out.dimensions = evalList(a.list, env);
    } else if (n == "dynamic_slice_sizes") {
      out.dynamic_slice_sizes = evalList(a.list, env);
    } else if (n == "iota_dimension") {
      out.iota_dimension = evalExpr(a.expr, env);
    } else if (n == "slice") {
      out.slice.emplace();
      for (const RangeExpr& r : a.ranges) {
        int64_t stride = r.stride.empty() ? 1 : evalExpr(r.stride, env);
        out.slice->push_back({evalExpr(r.start, env), evalExpr(r.limit, env), stride});
      }
    } else if (n == "padding") {
      out.padding.emplace();
      for (const RangeExpr& r : a.ranges) {
        int64_t interior = r.stride.empty() ? 0 : evalExpr(r.stride, env);
        out.padding->push_back({evalExpr(r.start, env), evalExpr(r.limit, env), interior});
      }
    } else if (n == "lhs_batch_dims") {
      out.dot_dims->lhs_batch = evalList(a.list, env);
    } else if (n == "lhs_contracting_dims") {
      out.dot_dims->lhs_contracting = evalList(a.list, env);
    } else if (n == "rhs_batch_dims") {
      out.dot_dims->rhs_batch = evalList(a.list, env);
    } else if (n == "rhs_contracting_dims") {
      out.dot_dims->rhs_contracting = evalList(a.list, env);
    } else if (n == "direction") {
      out.direction = direction(enumName(a));
    } else if (n == "type") {
      out.comparison_type = comparisonType(enumName(a));
    } else if (n == "to_apply") {
      hlo::HloComputation* c = reducer(reducerOpcode(enumName(a)), reduce_type);
      out.called.push_back(hlo::CalledComputations{"to_apply", {c}, false});
    }
  }
  return out;
}

namespace {

// Walks the literal against the shape; `leaf(index, value)` receives each element in row-major
// order (index -1 for a splat).
template <typename Leaf>
void walkLiteral(const LiteralValue& v, const hlo::Shape& shape, size_t depth, int64_t* index,
                 const Leaf& leaf) {
  if (v.kind != LiteralValue::Kind::kNested) {
    if (depth != static_cast<size_t>(shape.rank())) {
      throw ExprError{v.offset, "literal element at depth " + std::to_string(depth) + " of " +
                                    shape.shortStr() + " must be a list {...}"};
    }
    leaf((*index)++, v);
    return;
  }
  if (depth >= static_cast<size_t>(shape.rank()))
    throw ExprError{
        v.offset, "literal has more levels of braces than " + shape.shortStr() + " has dimensions"};
  int64_t want = shape.dim(static_cast<int64_t>(depth));
  if (static_cast<int64_t>(v.elements.size()) != want)
    throw ExprError{v.offset, "literal has " + std::to_string(v.elements.size()) +
                                  " elements at depth " + std::to_string(depth) + ", but " +
                                  shape.shortStr() + " needs " + std::to_string(want)};
  for (const LiteralValue& e : v.elements)
    walkLiteral(e, shape, depth + 1, index, leaf);
}

bool isSplat(const LiteralValue& v) {
  return v.kind != LiteralValue::Kind::kNested;
}

double scalarValue(const LiteralValue& v, const EvalEnv& env) {
  return v.kind == LiteralValue::Kind::kFloat ? v.number
                                              : static_cast<double>(evalExpr(v.expr, env));
}

void checkRange(const LiteralValue& v, hlo::PrimitiveType t, const EvalEnv& env) {
  if (v.kind != LiteralValue::Kind::kExpr) return;
  int64_t x = evalExpr(v.expr, env);
  if (t == hlo::PrimitiveType::kPred && x != 0 && x != 1)
    throw ExprError{v.offset, "pred literal must be 0 or 1, got " + std::to_string(x)};
}

}  // namespace

void checkLiteral(const LiteralValue& v, const hlo::Shape& shape, const EvalEnv& env) {
  if (shape.elementCount() > kMaxConstantElements)
    throw ExprError{v.offset, "constant of " + shape.shortStr() + " has more than 2^26 elements"};
  if (isSplat(v)) {
    checkRange(v, shape.elementType(), env);
    return;
  }
  int64_t index = 0;
  walkLiteral(v, shape, 0, &index,
              [&](int64_t, const LiteralValue& e) { checkRange(e, shape.elementType(), env); });
}

hlo::Literal evalLiteral(const LiteralValue& v, const hlo::Shape& shape, const EvalEnv& env) {
  checkLiteral(v, shape, env);
  hlo::Literal lit(shape);
  bool integral = !hlo::isFloat(shape.elementType());
  auto set = [&](int64_t i, const LiteralValue& e) {
    if (integral)
      lit.setInt64(i, evalExpr(e.expr, env));
    else
      lit.setDouble(i, scalarValue(e, env));
  };
  if (isSplat(v)) {
    if (integral) {
      int64_t x = evalExpr(v.expr, env);
      for (int64_t i = 0; i < shape.elementCount(); ++i)
        lit.setInt64(i, x);
    } else {
      double x = scalarValue(v, env);
      for (int64_t i = 0; i < shape.elementCount(); ++i)
        lit.setDouble(i, x);
    }
    return lit;
  }
  int64_t index = 0;
  walkLiteral(v, shape, 0, &index, set);
  return lit;
}

}  // namespace tacit::taidl
