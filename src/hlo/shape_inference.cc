#include "hlo/shape_inference.h"

#include <algorithm>

#include "hlo/opcode.h"
#include "hlo/parser.h"
#include "support/strings.h"

namespace tacit::hlo {
namespace {

using O = HloOpcode;
using Shapes = std::span<const Shape* const>;

ShapeResult failure(std::string message) {
  ShapeResult r;
  r.error = std::move(message);
  return r;
}

ShapeResult success(Shape s) {
  s.clearLayouts();
  ShapeResult r;
  r.shape = std::move(s);
  return r;
}

std::string typeName(PrimitiveType t) {
  return std::string(primitiveTypeName(t));
}
std::string str(const Shape& s) {
  return s.shortStr();
}
std::string dimsStr(const std::vector<int64_t>& v) {
  return "{" + join(v, ",") + "}";
}

// Arithmetic on sizes that may come from hostile attributes: overflow is a diagnostic, not UB.
bool addOk(int64_t a, int64_t b, int64_t* out) {
  return !__builtin_add_overflow(a, b, out);
}
bool mulOk(int64_t a, int64_t b, int64_t* out) {
  return !__builtin_mul_overflow(a, b, out);
}

HloComputation* calledComputation(const HloAttributes& attrs, std::string_view name, size_t i = 0) {
  for (const CalledComputations& c : attrs.called) {
    if (c.attribute == name) return i < c.computations.size() ? c.computations[i] : nullptr;
  }
  return nullptr;
}

const CalledComputations* calledList(const HloAttributes& attrs, std::string_view name) {
  for (const CalledComputations& c : attrs.called) {
    if (c.attribute == name) return &c;
  }
  return nullptr;
}

// Checks the operand count; returns an error message or "".
std::string arity(std::string_view op, Shapes operands, size_t n) {
  if (operands.size() == n) return "";
  return std::string(op) + " expects " + plural(static_cast<int64_t>(n), "operand") + ", got " +
         std::to_string(operands.size());
}

std::string requireArray(std::string_view op, const Shape& s, std::string_view what) {
  if (s.isArray()) return "";
  return std::string(op) + ": " + std::string(what) + " must be an array, got " + str(s);
}

// Dimension numbers: each in [0, rank), no repeats.
std::string checkDimensionList(std::string_view op, std::string_view what,
                               const std::vector<int64_t>& dims, int64_t rank) {
  std::vector<bool> seen(static_cast<size_t>(rank), false);
  for (int64_t d : dims) {
    if (d < 0 || d >= rank) {
      return std::string(op) + ": " + std::string(what) + " " + std::to_string(d) +
             " is out of range for rank " + std::to_string(rank);
    }
    if (seen[static_cast<size_t>(d)]) {
      return std::string(op) + ": " + std::string(what) + " " + std::to_string(d) +
             " appears more than once";
    }
    seen[static_cast<size_t>(d)] = true;
  }
  return "";
}

bool isNumeric(PrimitiveType t) {
  return isInteger(t) || isFloat(t) || isComplex(t);
}

// ---- elementwise -------------------------------------------------------------------------------

ShapeResult unary(O op, Shapes operands) {
  std::string name(opcodeName(op));
  if (auto e = arity(name, operands, 1); !e.empty()) return failure(e);
  const Shape& x = *operands[0];
  if (op == O::kCopy || op == O::kOptBarrier) return success(x);
  if (auto e = requireArray(name, x, "the operand"); !e.empty()) return failure(e);
  PrimitiveType t = x.elementType();
  auto bad = [&](std::string_view need) {
    return failure(name + " expects " + std::string(need) + " operands, got " + typeName(t));
  };
  Shape out = x;
  switch (op) {
    case O::kNot:
      if (!isInteger(t) && t != PrimitiveType::kPred) return bad("pred or integer");
      break;
    case O::kPopcnt:
    case O::kCountLeadingZeros:
      if (!isInteger(t)) return bad("integer");
      break;
    case O::kIsFinite:
      if (!isFloat(t)) return bad("floating-point");
      out = Shape(PrimitiveType::kPred, x.dims());
      break;
    case O::kAbs:
    case O::kNegate:
    case O::kSign:
      if (!isNumeric(t)) return bad("numeric");
      if (op == O::kAbs && isComplex(t)) {
        out = Shape(t == PrimitiveType::kC64 ? PrimitiveType::kF32 : PrimitiveType::kF64, x.dims());
      }
      break;
    case O::kReal:
    case O::kImag:
      if (!isFloat(t) && !isComplex(t)) return bad("floating-point or complex");
      if (isComplex(t))
        out = Shape(t == PrimitiveType::kC64 ? PrimitiveType::kF32 : PrimitiveType::kF64, x.dims());
      break;
    case O::kFloor:
    case O::kCeil:
    case O::kRoundNearestAfz:
    case O::kRoundNearestEven:
      if (!isFloat(t)) return bad("floating-point");
      break;
    default:  // transcendental
      if (!isFloat(t) && !isComplex(t)) return bad("floating-point or complex");
      break;
  }
  return success(out);
}

std::string sameDims(std::string_view op, const Shape& a, const Shape& b, std::string_view an,
                     std::string_view bn) {
  if (a.dims() == b.dims()) return "";
  return std::string(op) + ": " + std::string(an) + " " + str(a) + " and " + std::string(bn) + " " +
         str(b) + " have different dimensions";
}

ShapeResult binary(O op, Shapes operands) {
  std::string name(opcodeName(op));
  if (auto e = arity(name, operands, 2); !e.empty()) return failure(e);
  const Shape& a = *operands[0];
  const Shape& b = *operands[1];
  if (auto e = requireArray(name, a, "lhs"); !e.empty()) return failure(e);
  if (auto e = requireArray(name, b, "rhs"); !e.empty()) return failure(e);
  if (auto e = sameDims(name, a, b, "lhs", "rhs"); !e.empty()) return failure(e);
  PrimitiveType t = a.elementType();
  if (t != b.elementType()) {
    return failure(name + ": operands have different element types " + typeName(t) + " and " +
                   typeName(b.elementType()));
  }
  auto bad = [&](std::string_view need) {
    return failure(name + " expects " + std::string(need) + " operands, got " + typeName(t));
  };
  switch (op) {
    case O::kAnd:
    case O::kOr:
    case O::kXor:
      if (!isInteger(t) && t != PrimitiveType::kPred) return bad("pred or integer");
      break;
    case O::kShiftLeft:
    case O::kShiftRightArithmetic:
    case O::kShiftRightLogical:
      if (!isInteger(t)) return bad("integer");
      break;
    case O::kAtan2:
      if (!isFloat(t) && !isComplex(t)) return bad("floating-point or complex");
      break;
    case O::kComplex:
      if (t != PrimitiveType::kF32 && t != PrimitiveType::kF64) return bad("f32 or f64");
      return success(
          Shape(t == PrimitiveType::kF32 ? PrimitiveType::kC64 : PrimitiveType::kC128, a.dims()));
    case O::kMaximum:
    case O::kMinimum:
      if (!isNumeric(t) && t != PrimitiveType::kPred) return bad("numeric");
      break;
    default:
      if (!isNumeric(t)) return bad("numeric");
      break;
  }
  return success(a);
}

ShapeResult compare(Shapes operands, const HloAttributes& attrs) {
  if (auto e = arity("compare", operands, 2); !e.empty()) return failure(e);
  const Shape& a = *operands[0];
  const Shape& b = *operands[1];
  if (auto e = requireArray("compare", a, "lhs"); !e.empty()) return failure(e);
  if (auto e = requireArray("compare", b, "rhs"); !e.empty()) return failure(e);
  if (auto e = sameDims("compare", a, b, "lhs", "rhs"); !e.empty()) return failure(e);
  PrimitiveType t = a.elementType();
  if (t != b.elementType()) {
    return failure("compare: operands have different element types " + typeName(t) + " and " +
                   typeName(b.elementType()));
  }
  if (!attrs.direction) return failure("compare requires a direction");
  if (attrs.comparison_type) {
    bool ok = true;
    switch (*attrs.comparison_type) {
      case ComparisonType::kFloat:
      case ComparisonType::kTotalOrder:
        ok = isFloat(t) || isComplex(t);
        break;
      case ComparisonType::kSigned:
        ok = isSignedInteger(t);
        break;
      case ComparisonType::kUnsigned:
        ok = isUnsignedInteger(t) || t == PrimitiveType::kPred;
        break;
    }
    if (!ok) {
      return failure("compare: comparison type " +
                     std::string(comparisonTypeName(*attrs.comparison_type)) +
                     " does not apply to " + typeName(t) + " operands");
    }
  }
  return success(Shape(PrimitiveType::kPred, a.dims()));
}

ShapeResult select(Shapes operands) {
  if (auto e = arity("select", operands, 3); !e.empty()) return failure(e);
  const Shape& p = *operands[0];
  const Shape& t = *operands[1];
  const Shape& f = *operands[2];
  if (!p.isArray() || p.elementType() != PrimitiveType::kPred) {
    return failure("select: the predicate must be a pred array, got " + str(p));
  }
  if (!t.compatible(f))
    return failure("select: on_true " + str(t) + " and on_false " + str(f) + " differ");
  if (!p.isScalar()) {
    if (!t.isArray() || p.dims() != t.dims()) {
      return failure("select: predicate " + str(p) +
                     " must be a scalar or have the dimensions of " + str(t));
    }
  }
  return success(t);
}

ShapeResult clamp(Shapes operands) {
  if (auto e = arity("clamp", operands, 3); !e.empty()) return failure(e);
  const Shape& lo = *operands[0];
  const Shape& x = *operands[1];
  const Shape& hi = *operands[2];
  for (const Shape* s : {&lo, &x, &hi}) {
    if (auto e = requireArray("clamp", *s, "every operand"); !e.empty()) return failure(e);
    if (s->elementType() != x.elementType()) {
      return failure("clamp: operands have different element types " + typeName(s->elementType()) +
                     " and " + typeName(x.elementType()));
    }
  }
  for (const Shape* s : {&lo, &hi}) {
    if (!s->isScalar() && s->dims() != x.dims()) {
      return failure("clamp: bound " + str(*s) +
                     " must be a scalar or have the dimensions of the operand " + str(x));
    }
  }
  return success(x);
}

// ---- conversions (the result shape comes from the text) ---------------------------------------

ShapeResult needDeclared(std::string_view op) {
  return failure(std::string(op) + " needs its result shape written (it cannot be inferred)");
}

ShapeResult convert(Shapes operands, const Shape* declared) {
  if (auto e = arity("convert", operands, 1); !e.empty()) return failure(e);
  const Shape& x = *operands[0];
  if (auto e = requireArray("convert", x, "the operand"); !e.empty()) return failure(e);
  if (!declared) return needDeclared("convert");
  if (!declared->isArray() || declared->dims() != x.dims()) {
    return failure("convert: result " + str(*declared) +
                   " must have the dimensions of the operand " + str(x));
  }
  return success(*declared);
}

ShapeResult bitcastConvert(Shapes operands, const Shape* declared) {
  if (auto e = arity("bitcast-convert", operands, 1); !e.empty()) return failure(e);
  const Shape& x = *operands[0];
  if (auto e = requireArray("bitcast-convert", x, "the operand"); !e.empty()) return failure(e);
  if (!declared) return needDeclared("bitcast-convert");
  if (!declared->isArray()) return failure("bitcast-convert: the result must be an array");
  int in_bits = bitWidth(x.elementType());
  int out_bits = bitWidth(declared->elementType());
  std::vector<int64_t> expect = x.dims();
  if (in_bits > out_bits) {
    if (in_bits % out_bits != 0) return failure("bitcast-convert: bit widths do not divide");
    expect.push_back(in_bits / out_bits);
  } else if (in_bits < out_bits) {
    if (out_bits % in_bits != 0 || x.rank() == 0 || x.dims().back() != out_bits / in_bits) {
      return failure("bitcast-convert: converting " + str(x) + " to the wider " +
                     typeName(declared->elementType()) + " needs a last dimension of size " +
                     std::to_string(out_bits / std::max(in_bits, 1)));
    }
    expect.pop_back();
  }
  if (declared->dims() != expect) {
    return failure("bitcast-convert: result " + str(*declared) + " should have dimensions " +
                   dimsStr(expect));
  }
  return success(*declared);
}

ShapeResult reducePrecision(Shapes operands, const HloAttributes& attrs) {
  if (auto e = arity("reduce-precision", operands, 1); !e.empty()) return failure(e);
  const Shape& x = *operands[0];
  if (!x.isArray() || !isFloat(x.elementType()))
    return failure("reduce-precision expects a floating-point operand");
  if (!attrs.exponent_bits || !attrs.mantissa_bits)
    return failure("reduce-precision needs exponent_bits and mantissa_bits");
  if (*attrs.exponent_bits < 1 || *attrs.mantissa_bits < 0) {
    return failure("reduce-precision: exponent_bits must be >= 1 and mantissa_bits >= 0");
  }
  return success(x);
}

// ---- shape manipulation -----------------------------------------------------------------------

ShapeResult broadcast(Shapes operands, const HloAttributes& attrs, const Shape* declared) {
  if (auto e = arity("broadcast", operands, 1); !e.empty()) return failure(e);
  const Shape& x = *operands[0];
  if (auto e = requireArray("broadcast", x, "the operand"); !e.empty()) return failure(e);
  std::vector<int64_t> dims = attrs.dimensions.value_or(std::vector<int64_t>{});
  if (!attrs.dimensions && !x.isScalar()) {
    return failure("broadcast of the non-scalar " + str(x) + " needs dimensions={...}");
  }
  if (static_cast<int64_t>(dims.size()) != x.rank()) {
    return failure("broadcast: dimensions " + dimsStr(dims) +
                   " must have one entry per operand dimension (" + std::to_string(x.rank()) + ")");
  }
  if (!declared) return needDeclared("broadcast");
  if (!declared->isArray() || declared->elementType() != x.elementType()) {
    return failure("broadcast: result " + str(*declared) +
                   " must have the element type of the operand " + str(x));
  }
  for (size_t i = 0; i < dims.size(); ++i) {
    int64_t d = dims[i];
    if (d < 0 || d >= declared->rank()) {
      return failure("broadcast: dimension " + std::to_string(d) +
                     " is out of range for the result " + str(*declared));
    }
    if (i > 0 && d <= dims[i - 1])
      return failure("broadcast: dimensions " + dimsStr(dims) + " must be increasing");
    if (declared->dim(d) != x.dim(static_cast<int64_t>(i))) {
      return failure("broadcast: operand dimension " + std::to_string(i) + " has size " +
                     std::to_string(x.dim(static_cast<int64_t>(i))) + " but result dimension " +
                     std::to_string(d) + " has size " + std::to_string(declared->dim(d)));
    }
  }
  return success(*declared);
}

ShapeResult reshape(Shapes operands, const Shape* declared) {
  if (auto e = arity("reshape", operands, 1); !e.empty()) return failure(e);
  const Shape& x = *operands[0];
  if (auto e = requireArray("reshape", x, "the operand"); !e.empty()) return failure(e);
  if (!declared) return needDeclared("reshape");
  if (!declared->isArray() || declared->elementType() != x.elementType()) {
    return failure("reshape: result " + str(*declared) +
                   " must have the element type of the operand " + str(x));
  }
  if (declared->elementCount() != x.elementCount()) {
    return failure("reshape: operand " + str(x) + " has " + std::to_string(x.elementCount()) +
                   " elements but result " + str(*declared) + " has " +
                   std::to_string(declared->elementCount()));
  }
  return success(*declared);
}

ShapeResult bitcast(Shapes operands, const Shape* declared) {
  if (auto e = arity("bitcast", operands, 1); !e.empty()) return failure(e);
  const Shape& x = *operands[0];
  if (!declared) return needDeclared("bitcast");
  if (x.isArray() && declared->isArray() && x.byteSize() != declared->byteSize()) {
    return failure("bitcast: operand " + str(x) + " has " + std::to_string(x.byteSize()) +
                   " bytes but result " + str(*declared) + " has " +
                   std::to_string(declared->byteSize()));
  }
  if (x.isArray() != declared->isArray())
    return failure("bitcast: operand and result must both be arrays");
  return success(*declared);
}

ShapeResult transpose(Shapes operands, const HloAttributes& attrs) {
  if (auto e = arity("transpose", operands, 1); !e.empty()) return failure(e);
  const Shape& x = *operands[0];
  if (auto e = requireArray("transpose", x, "the operand"); !e.empty()) return failure(e);
  if (!attrs.dimensions) return failure("transpose requires dimensions");
  const std::vector<int64_t>& perm = *attrs.dimensions;
  if (static_cast<int64_t>(perm.size()) != x.rank()) {
    return failure("transpose: dimensions " + dimsStr(perm) + " is not a permutation of the " +
                   std::to_string(x.rank()) + " dimensions of " + str(x));
  }
  if (auto e = checkDimensionList("transpose", "dimension", perm, x.rank()); !e.empty())
    return failure(e);
  std::vector<int64_t> dims;
  for (int64_t p : perm)
    dims.push_back(x.dim(p));
  return success(Shape(x.elementType(), dims));
}

ShapeResult reverse(Shapes operands, const HloAttributes& attrs) {
  if (auto e = arity("reverse", operands, 1); !e.empty()) return failure(e);
  const Shape& x = *operands[0];
  if (auto e = requireArray("reverse", x, "the operand"); !e.empty()) return failure(e);
  if (!attrs.dimensions) return failure("reverse requires dimensions");
  if (auto e = checkDimensionList("reverse", "dimension", *attrs.dimensions, x.rank()); !e.empty())
    return failure(e);
  return success(x);
}

ShapeResult slice(Shapes operands, const HloAttributes& attrs) {
  if (auto e = arity("slice", operands, 1); !e.empty()) return failure(e);
  const Shape& x = *operands[0];
  if (auto e = requireArray("slice", x, "the operand"); !e.empty()) return failure(e);
  if (!attrs.slice) return failure("slice requires slice={...}");
  const std::vector<SliceDim>& s = *attrs.slice;
  if (static_cast<int64_t>(s.size()) != x.rank()) {
    return failure("slice: " + plural(static_cast<int64_t>(s.size()), "range") +
                   " given for the rank-" + std::to_string(x.rank()) + " operand " + str(x));
  }
  std::vector<int64_t> dims;
  for (size_t i = 0; i < s.size(); ++i) {
    const SliceDim& d = s[i];
    int64_t size = x.dim(static_cast<int64_t>(i));
    if (d.start < 0 || d.start > d.limit || d.limit > size) {
      return failure("slice: range [" + std::to_string(d.start) + ":" + std::to_string(d.limit) +
                     "] of dimension " + std::to_string(i) +
                     " is outside [0:" + std::to_string(size) + "]");
    }
    if (d.stride < 1)
      return failure("slice: stride of dimension " + std::to_string(i) + " must be positive");
    dims.push_back((d.limit - d.start + d.stride - 1) / d.stride);
  }
  return success(Shape(x.elementType(), dims));
}

// Start indices of dynamic-slice / dynamic-update-slice: `rank` integral scalars of one type, or
// one integral vector of `rank` elements.
std::string checkStartIndices(std::string_view op, Shapes indices, int64_t rank) {
  if (indices.size() == 1 && indices[0]->isArray() && indices[0]->rank() == 1 && rank != 1) {
    if (!isInteger(indices[0]->elementType()) || indices[0]->dim(0) != rank) {
      return std::string(op) + ": the start-index vector must be an integer vector of " +
             std::to_string(rank) + " elements, got " + str(*indices[0]);
    }
    return "";
  }
  if (static_cast<int64_t>(indices.size()) != rank) {
    return std::string(op) + " needs one start index per operand dimension (" +
           std::to_string(rank) + "), got " + std::to_string(indices.size());
  }
  for (const Shape* s : indices) {
    if (!s->isScalar() || !isInteger(s->elementType())) {
      return std::string(op) + ": start indices must be integer scalars, got " + str(*s);
    }
    if (s->elementType() != indices[0]->elementType()) {
      return std::string(op) + ": start indices must all have the same type";
    }
  }
  return "";
}

ShapeResult dynamicSlice(Shapes operands, const HloAttributes& attrs) {
  if (operands.size() < 2) return failure("dynamic-slice expects an operand and start indices");
  const Shape& x = *operands[0];
  if (auto e = requireArray("dynamic-slice", x, "the operand"); !e.empty()) return failure(e);
  if (auto e = checkStartIndices("dynamic-slice", operands.subspan(1), x.rank()); !e.empty())
    return failure(e);
  if (!attrs.dynamic_slice_sizes) return failure("dynamic-slice requires dynamic_slice_sizes");
  const std::vector<int64_t>& sizes = *attrs.dynamic_slice_sizes;
  if (static_cast<int64_t>(sizes.size()) != x.rank()) {
    return failure("dynamic-slice: dynamic_slice_sizes " + dimsStr(sizes) +
                   " must have one entry per dimension of " + str(x));
  }
  for (size_t i = 0; i < sizes.size(); ++i) {
    if (sizes[i] < 0 || sizes[i] > x.dim(static_cast<int64_t>(i))) {
      return failure("dynamic-slice: slice size " + std::to_string(sizes[i]) + " of dimension " +
                     std::to_string(i) + " is outside [0, " +
                     std::to_string(x.dim(static_cast<int64_t>(i))) + "]");
    }
  }
  return success(Shape(x.elementType(), sizes));
}

ShapeResult dynamicUpdateSlice(Shapes operands) {
  if (operands.size() < 3)
    return failure("dynamic-update-slice expects an operand, an update and start indices");
  const Shape& x = *operands[0];
  const Shape& u = *operands[1];
  if (auto e = requireArray("dynamic-update-slice", x, "the operand"); !e.empty())
    return failure(e);
  if (auto e = requireArray("dynamic-update-slice", u, "the update"); !e.empty()) return failure(e);
  if (u.rank() != x.rank() || u.elementType() != x.elementType()) {
    return failure("dynamic-update-slice: update " + str(u) +
                   " must have the rank and element type of the operand " + str(x));
  }
  for (int64_t i = 0; i < x.rank(); ++i) {
    if (u.dim(i) > x.dim(i)) {
      return failure("dynamic-update-slice: update dimension " + std::to_string(i) + " has size " +
                     std::to_string(u.dim(i)) + ", larger than the operand's " +
                     std::to_string(x.dim(i)));
    }
  }
  if (auto e = checkStartIndices("dynamic-update-slice", operands.subspan(2), x.rank()); !e.empty())
    return failure(e);
  return success(x);
}

ShapeResult concatenate(Shapes operands, const HloAttributes& attrs) {
  if (operands.empty()) return failure("concatenate expects at least one operand");
  if (!attrs.dimensions || attrs.dimensions->size() != 1) {
    return failure("concatenate requires exactly one dimension in dimensions={d}");
  }
  const Shape& first = *operands[0];
  if (auto e = requireArray("concatenate", first, "every operand"); !e.empty()) return failure(e);
  int64_t d = (*attrs.dimensions)[0];
  if (d < 0 || d >= first.rank()) {
    return failure("concatenate: dimension " + std::to_string(d) + " is out of range for rank " +
                   std::to_string(first.rank()));
  }
  std::vector<int64_t> dims = first.dims();
  for (size_t i = 1; i < operands.size(); ++i) {
    const Shape& s = *operands[i];
    if (auto e = requireArray("concatenate", s, "every operand"); !e.empty()) return failure(e);
    if (s.elementType() != first.elementType()) {
      return failure("concatenate: operand " + std::to_string(i) + " has element type " +
                     typeName(s.elementType()) + " but operand 0 has " +
                     typeName(first.elementType()));
    }
    if (s.rank() != first.rank()) {
      return failure("concatenate: operand " + std::to_string(i) + " " + str(s) +
                     " has a different rank than " + str(first));
    }
    for (int64_t k = 0; k < s.rank(); ++k) {
      if (k != d && s.dim(k) != first.dim(k)) {
        return failure("concatenate: operand " + std::to_string(i) + " " + str(s) +
                       " differs from " + str(first) + " in dimension " + std::to_string(k));
      }
    }
    if (!addOk(dims[static_cast<size_t>(d)], s.dim(d), &dims[static_cast<size_t>(d)])) {
      return failure("concatenate: result is too large");
    }
  }
  if (dims[static_cast<size_t>(d)] > kMaxDimensionSize)
    return failure("concatenate: result is too large");
  return success(Shape(first.elementType(), dims));
}

ShapeResult pad(Shapes operands, const HloAttributes& attrs) {
  if (auto e = arity("pad", operands, 2); !e.empty()) return failure(e);
  const Shape& x = *operands[0];
  const Shape& v = *operands[1];
  if (auto e = requireArray("pad", x, "the operand"); !e.empty()) return failure(e);
  if (!v.isScalar() || v.elementType() != x.elementType()) {
    return failure("pad: the padding value must be a " + typeName(x.elementType()) +
                   " scalar, got " + str(v));
  }
  if (!attrs.padding) return failure("pad requires padding=");
  const std::vector<PadDim>& p = *attrs.padding;
  if (static_cast<int64_t>(p.size()) != x.rank()) {
    return failure("pad: padding has " + plural(static_cast<int64_t>(p.size()), "dimension") +
                   " but the operand " + str(x) + " has rank " + std::to_string(x.rank()));
  }
  std::vector<int64_t> dims;
  for (size_t i = 0; i < p.size(); ++i) {
    int64_t size = x.dim(static_cast<int64_t>(i));
    if (p[i].interior < 0) return failure("pad: interior padding must be non-negative");
    int64_t interior_total = 0, out = size;
    if (!mulOk(std::max<int64_t>(size - 1, 0), p[i].interior, &interior_total) ||
        !addOk(out, interior_total, &out) || !addOk(out, p[i].lo, &out) ||
        !addOk(out, p[i].hi, &out) || out > kMaxDimensionSize) {
      return failure("pad: dimension " + std::to_string(i) + " becomes too large");
    }
    if (out < 0)
      return failure("pad: dimension " + std::to_string(i) + " would have negative size " +
                     std::to_string(out));
    dims.push_back(out);
  }
  return success(Shape(x.elementType(), dims));
}

ShapeResult iota(Shapes operands, const HloAttributes& attrs, const Shape* declared) {
  if (auto e = arity("iota", operands, 0); !e.empty()) return failure(e);
  if (!declared) return needDeclared("iota");
  if (!declared->isArray() || declared->rank() == 0)
    return failure("iota: the result must be an array of rank >= 1");
  if (!attrs.iota_dimension) return failure("iota requires iota_dimension");
  if (*attrs.iota_dimension < 0 || *attrs.iota_dimension >= declared->rank()) {
    return failure("iota: iota_dimension " + std::to_string(*attrs.iota_dimension) +
                   " is out of range for " + str(*declared));
  }
  return success(*declared);
}

// ---- contractions -----------------------------------------------------------------------------

ShapeResult dot(Shapes operands, const HloAttributes& attrs, const Shape* declared) {
  if (auto e = arity("dot", operands, 2); !e.empty()) return failure(e);
  const Shape& l = *operands[0];
  const Shape& r = *operands[1];
  if (auto e = requireArray("dot", l, "lhs"); !e.empty()) return failure(e);
  if (auto e = requireArray("dot", r, "rhs"); !e.empty()) return failure(e);
  DotDims dd = attrs.dot_dims.value_or(DotDims{});
  if (dd.lhs_batch.size() != dd.rhs_batch.size()) {
    return failure("dot: lhs_batch_dims " + dimsStr(dd.lhs_batch) + " and rhs_batch_dims " +
                   dimsStr(dd.rhs_batch) + " have different lengths");
  }
  if (dd.lhs_contracting.size() != dd.rhs_contracting.size()) {
    return failure("dot: lhs_contracting_dims " + dimsStr(dd.lhs_contracting) +
                   " and rhs_contracting_dims " + dimsStr(dd.rhs_contracting) +
                   " have different lengths");
  }
  auto side = [&](const Shape& s, const std::vector<int64_t>& batch,
                  const std::vector<int64_t>& contracting, std::string_view name) -> std::string {
    std::vector<int64_t> all = batch;
    all.insert(all.end(), contracting.begin(), contracting.end());
    return checkDimensionList("dot", std::string(name) + " batch/contracting dimension", all,
                              s.rank());
  };
  if (auto e = side(l, dd.lhs_batch, dd.lhs_contracting, "lhs"); !e.empty()) return failure(e);
  if (auto e = side(r, dd.rhs_batch, dd.rhs_contracting, "rhs"); !e.empty()) return failure(e);
  for (size_t i = 0; i < dd.lhs_batch.size(); ++i) {
    if (l.dim(dd.lhs_batch[i]) != r.dim(dd.rhs_batch[i])) {
      return failure("dot: lhs batch dimension " + std::to_string(dd.lhs_batch[i]) + " has size " +
                     std::to_string(l.dim(dd.lhs_batch[i])) + " but rhs batch dimension " +
                     std::to_string(dd.rhs_batch[i]) + " has size " +
                     std::to_string(r.dim(dd.rhs_batch[i])));
    }
  }
  for (size_t i = 0; i < dd.lhs_contracting.size(); ++i) {
    if (l.dim(dd.lhs_contracting[i]) != r.dim(dd.rhs_contracting[i])) {
      return failure("dot: lhs contracting dimension " + std::to_string(dd.lhs_contracting[i]) +
                     " has size " + std::to_string(l.dim(dd.lhs_contracting[i])) +
                     " but rhs contracting dimension " + std::to_string(dd.rhs_contracting[i]) +
                     " has size " + std::to_string(r.dim(dd.rhs_contracting[i])));
    }
  }
  std::vector<int64_t> dims;
  for (int64_t b : dd.lhs_batch)
    dims.push_back(l.dim(b));
  auto freeDims = [&](const Shape& s, const std::vector<int64_t>& batch,
                      const std::vector<int64_t>& contracting) {
    for (int64_t i = 0; i < s.rank(); ++i) {
      if (std::find(batch.begin(), batch.end(), i) == batch.end() &&
          std::find(contracting.begin(), contracting.end(), i) == contracting.end()) {
        dims.push_back(s.dim(i));
      }
    }
  };
  freeDims(l, dd.lhs_batch, dd.lhs_contracting);
  freeDims(r, dd.rhs_batch, dd.rhs_contracting);
  PrimitiveType t = l.elementType();
  if (declared) {
    if (!declared->isArray()) return failure("dot: the result must be an array");
    t = declared->elementType();
  } else if (l.elementType() != r.elementType()) {
    return failure("dot: operand element types " + typeName(l.elementType()) + " and " +
                   typeName(r.elementType()) +
                   " differ; write the result shape to give the result type");
  }
  return success(Shape(t, dims));
}

// Output size of one windowed dimension (convolution, reduce-window); -1 on overflow/invalid.
int64_t windowedSize(int64_t input, const WindowDim& w, std::string* error, size_t i) {
  auto bad = [&](std::string msg) {
    *error = "window dimension " + std::to_string(i) + ": " + msg;
    return int64_t{-1};
  };
  if (w.size < 1) return bad("size must be positive");
  if (w.stride < 1) return bad("stride must be positive");
  if (w.lhs_dilation < 1 || w.rhs_dilation < 1) return bad("dilations must be positive");
  int64_t dilated_in = 0, padded = 0, dilated_window = 0;
  if (input > 0 &&
      (!mulOk(input - 1, w.lhs_dilation, &dilated_in) || !addOk(dilated_in, 1, &dilated_in))) {
    return bad("too large");
  }
  if (!addOk(dilated_in, w.pad_lo, &padded) || !addOk(padded, w.pad_hi, &padded))
    return bad("too large");
  if (!mulOk(w.size - 1, w.rhs_dilation, &dilated_window) ||
      !addOk(dilated_window, 1, &dilated_window)) {
    return bad("too large");
  }
  if (padded < 0) return bad("padding makes the input negative");
  if (padded < dilated_window) return 0;
  int64_t out = (padded - dilated_window) / w.stride + 1;
  if (out > kMaxDimensionSize) return bad("too large");
  return out;
}

ShapeResult convolution(Shapes operands, const HloAttributes& attrs, const Shape* declared) {
  if (auto e = arity("convolution", operands, 2); !e.empty()) return failure(e);
  const Shape& l = *operands[0];
  const Shape& r = *operands[1];
  if (auto e = requireArray("convolution", l, "lhs"); !e.empty()) return failure(e);
  if (auto e = requireArray("convolution", r, "rhs"); !e.empty()) return failure(e);
  if (!attrs.conv_dims) return failure("convolution requires dim_labels");
  const ConvDims& cd = *attrs.conv_dims;
  auto spatial = static_cast<int64_t>(cd.input_spatial.size());
  if (l.rank() != spatial + 2 || r.rank() != spatial + 2) {
    return failure("convolution: dim_labels describe rank-" + std::to_string(spatial + 2) +
                   " operands but lhs is " + str(l) + " and rhs is " + str(r));
  }
  std::vector<WindowDim> window = attrs.window.value_or(std::vector<WindowDim>{});
  if (static_cast<int64_t>(window.size()) != spatial) {
    return failure("convolution: window has " +
                   plural(static_cast<int64_t>(window.size()), "dimension") + " but there " +
                   (spatial == 1 ? "is 1 spatial dimension"
                                 : "are " + std::to_string(spatial) + " spatial dimensions"));
  }
  int64_t fgc = attrs.feature_group_count.value_or(1);
  int64_t bgc = attrs.batch_group_count.value_or(1);
  if (fgc < 1 || bgc < 1) return failure("convolution: group counts must be positive");
  if (fgc > 1 && bgc > 1)
    return failure("convolution: feature_group_count and batch_group_count cannot both exceed 1");
  int64_t in_features = l.dim(cd.input_feature);
  int64_t kernel_in = r.dim(cd.kernel_input_feature);
  int64_t kernel_out = r.dim(cd.kernel_output_feature);
  int64_t batch = l.dim(cd.input_batch);
  if (in_features % fgc != 0) {
    return failure("convolution: input feature size " + std::to_string(in_features) +
                   " is not a multiple of feature_group_count " + std::to_string(fgc));
  }
  if (in_features / fgc != kernel_in) {
    return failure("convolution: input feature size " + std::to_string(in_features) +
                   " / feature_group_count " + std::to_string(fgc) +
                   " does not match the kernel input feature size " + std::to_string(kernel_in));
  }
  if (kernel_out % fgc != 0 || kernel_out % bgc != 0) {
    return failure("convolution: kernel output feature size " + std::to_string(kernel_out) +
                   " is not a multiple of the group count");
  }
  if (batch % bgc != 0) {
    return failure("convolution: batch size " + std::to_string(batch) +
                   " is not a multiple of batch_group_count " + std::to_string(bgc));
  }
  std::vector<int64_t> dims(static_cast<size_t>(spatial + 2));
  dims[static_cast<size_t>(cd.output_batch)] = batch / bgc;
  dims[static_cast<size_t>(cd.output_feature)] = kernel_out;
  for (int64_t i = 0; i < spatial; ++i) {
    const WindowDim& w = window[static_cast<size_t>(i)];
    int64_t kernel_size = r.dim(cd.kernel_spatial[static_cast<size_t>(i)]);
    if (w.size != kernel_size) {
      return failure("convolution: window size " + std::to_string(w.size) +
                     " of spatial dimension " + std::to_string(i) +
                     " does not match the kernel's " + std::to_string(kernel_size));
    }
    std::string error;
    int64_t out = windowedSize(l.dim(cd.input_spatial[static_cast<size_t>(i)]), w, &error,
                               static_cast<size_t>(i));
    if (out < 0) return failure("convolution: " + error);
    dims[static_cast<size_t>(cd.output_spatial[static_cast<size_t>(i)])] = out;
  }
  PrimitiveType t = l.elementType();
  if (declared) {
    if (!declared->isArray()) return failure("convolution: the result must be an array");
    t = declared->elementType();
  } else if (l.elementType() != r.elementType()) {
    return failure("convolution: operand element types differ; write the result shape");
  }
  return success(Shape(t, dims));
}

// ---- higher-order -----------------------------------------------------------------------------

// Checks a reducer computation (reduce, reduce-window, scatter, all-reduce): 2N scalar parameters
// (accumulators then inputs, each of the given types) returning a scalar or an N-tuple.
std::string checkReducer(std::string_view op, const HloComputation* c,
                         const std::vector<PrimitiveType>& types) {
  if (!c) return std::string(op) + " requires to_apply";
  ProgramShape ps = programShape(*c);
  size_t n = types.size();
  std::string who = std::string(op) + ": to_apply computation '" + c->name() + "'";
  if (ps.parameters.size() != 2 * n) {
    return who + " takes " + plural(static_cast<int64_t>(ps.parameters.size()), "parameter") +
           " but needs " + std::to_string(2 * n);
  }
  for (size_t i = 0; i < 2 * n; ++i) {
    const Shape& p = ps.parameters[i];
    if (!p.isScalar() || p.elementType() != types[i % n]) {
      return who + " parameter " + std::to_string(i) + " is " + str(p) + " but must be " +
             typeName(types[i % n]) + "[]";
    }
  }
  std::vector<Shape> expect;
  for (PrimitiveType t : types)
    expect.emplace_back(t, std::vector<int64_t>{});
  Shape result = n == 1 ? expect[0] : Shape::tuple(expect);
  if (!ps.result.compatible(result)) {
    return who + " returns " + str(ps.result) + " but must return " + str(result);
  }
  return "";
}

// Splits reduce/reduce-window operands into inputs and inits.
std::string splitInputsInits(std::string_view op, Shapes operands,
                             std::vector<const Shape*>* inputs, std::vector<PrimitiveType>* types) {
  if (operands.empty() || operands.size() % 2 != 0) {
    return std::string(op) + " expects inputs followed by as many init values, got " +
           plural(static_cast<int64_t>(operands.size()), "operand");
  }
  size_t n = operands.size() / 2;
  for (size_t i = 0; i < n; ++i) {
    const Shape& in = *operands[i];
    const Shape& init = *operands[n + i];
    if (auto e = requireArray(op, in, "every input"); !e.empty()) return e;
    if (in.dims() != operands[0]->dims()) {
      return std::string(op) + ": input " + std::to_string(i) + " " + str(in) + " and input 0 " +
             str(*operands[0]) + " have different dimensions";
    }
    if (!init.isScalar())
      return std::string(op) + ": init value " + std::to_string(i) + " must be a scalar, got " +
             str(init);
    inputs->push_back(&in);
    types->push_back(init.elementType());
  }
  return "";
}

Shape tupleOrSingle(std::vector<Shape> shapes) {
  return shapes.size() == 1 ? shapes[0] : Shape::tuple(std::move(shapes));
}

ShapeResult reduce(Shapes operands, const HloAttributes& attrs) {
  std::vector<const Shape*> inputs;
  std::vector<PrimitiveType> types;
  if (auto e = splitInputsInits("reduce", operands, &inputs, &types); !e.empty()) return failure(e);
  if (!attrs.dimensions) return failure("reduce requires dimensions");
  const Shape& x = *inputs[0];
  if (auto e = checkDimensionList("reduce", "dimension", *attrs.dimensions, x.rank()); !e.empty())
    return failure(e);
  if (auto e = checkReducer("reduce", calledComputation(attrs, "to_apply"), types); !e.empty())
    return failure(e);
  std::vector<int64_t> dims;
  for (int64_t i = 0; i < x.rank(); ++i) {
    if (std::find(attrs.dimensions->begin(), attrs.dimensions->end(), i) ==
        attrs.dimensions->end()) {
      dims.push_back(x.dim(i));
    }
  }
  std::vector<Shape> results;
  for (PrimitiveType t : types)
    results.emplace_back(t, dims);
  return success(tupleOrSingle(std::move(results)));
}

ShapeResult reduceWindow(Shapes operands, const HloAttributes& attrs) {
  std::vector<const Shape*> inputs;
  std::vector<PrimitiveType> types;
  if (auto e = splitInputsInits("reduce-window", operands, &inputs, &types); !e.empty())
    return failure(e);
  const Shape& x = *inputs[0];
  std::vector<WindowDim> window = attrs.window.value_or(std::vector<WindowDim>{});
  if (static_cast<int64_t>(window.size()) != x.rank()) {
    return failure("reduce-window: window has " +
                   plural(static_cast<int64_t>(window.size()), "dimension") + " but the input " +
                   str(x) + " has rank " + std::to_string(x.rank()));
  }
  if (auto e = checkReducer("reduce-window", calledComputation(attrs, "to_apply"), types);
      !e.empty())
    return failure(e);
  std::vector<int64_t> dims;
  for (size_t i = 0; i < window.size(); ++i) {
    std::string error;
    int64_t out = windowedSize(x.dim(static_cast<int64_t>(i)), window[i], &error, i);
    if (out < 0) return failure("reduce-window: " + error);
    dims.push_back(out);
  }
  std::vector<Shape> results;
  for (PrimitiveType t : types)
    results.emplace_back(t, dims);
  return success(tupleOrSingle(std::move(results)));
}

// Parameters of `c` must be compatible with `args`; returns an error or "".
std::string checkCallee(std::string_view op, std::string_view attr, const HloComputation* c,
                        const std::vector<const Shape*>& args) {
  if (!c) return std::string(op) + " requires " + std::string(attr);
  ProgramShape ps = programShape(*c);
  std::string who = std::string(op) + ": " + std::string(attr) + " computation '" + c->name() + "'";
  if (ps.parameters.size() != args.size()) {
    return who + " takes " + plural(static_cast<int64_t>(ps.parameters.size()), "parameter") +
           " but is given " + plural(static_cast<int64_t>(args.size()), "operand");
  }
  for (size_t i = 0; i < args.size(); ++i) {
    if (!ps.parameters[i].compatible(*args[i])) {
      return who + " parameter " + std::to_string(i) + " is " + str(ps.parameters[i]) +
             " but the operand is " + str(*args[i]);
    }
  }
  return "";
}

ShapeResult call(O op, Shapes operands, const HloAttributes& attrs) {
  std::string_view attr = op == O::kFusion ? "calls" : "to_apply";
  HloComputation* c = calledComputation(attrs, attr);
  std::vector<const Shape*> args(operands.begin(), operands.end());
  if (auto e = checkCallee(opcodeName(op), attr, c, args); !e.empty()) return failure(e);
  return success(c->root()->shape());
}

ShapeResult map(Shapes operands, const HloAttributes& attrs) {
  if (operands.empty()) return failure("map expects at least one operand");
  const Shape& x = *operands[0];
  for (const Shape* s : operands) {
    if (auto e = requireArray("map", *s, "every operand"); !e.empty()) return failure(e);
    if (s->dims() != x.dims())
      return failure("map: operands " + str(x) + " and " + str(*s) + " have different dimensions");
  }
  if (attrs.dimensions) {
    std::vector<int64_t> all(static_cast<size_t>(x.rank()));
    for (int64_t i = 0; i < x.rank(); ++i)
      all[static_cast<size_t>(i)] = i;
    if (*attrs.dimensions != all) return failure("map: dimensions must be " + dimsStr(all));
  }
  std::vector<Shape> scalars;
  for (const Shape* s : operands)
    scalars.emplace_back(s->elementType(), std::vector<int64_t>{});
  std::vector<const Shape*> args;
  for (const Shape& s : scalars)
    args.push_back(&s);
  HloComputation* c = calledComputation(attrs, "to_apply");
  if (auto e = checkCallee("map", "to_apply", c, args); !e.empty()) return failure(e);
  const Shape& root = c->root()->shape();
  if (!root.isScalar())
    return failure("map: to_apply computation '" + c->name() + "' must return a scalar, got " +
                   str(root));
  return success(Shape(root.elementType(), x.dims()));
}

ShapeResult whileLoop(Shapes operands, const HloAttributes& attrs) {
  if (auto e = arity("while", operands, 1); !e.empty()) return failure(e);
  const Shape& init = *operands[0];
  std::vector<const Shape*> args = {&init};
  HloComputation* cond = calledComputation(attrs, "condition");
  HloComputation* body = calledComputation(attrs, "body");
  if (auto e = checkCallee("while", "condition", cond, args); !e.empty()) return failure(e);
  if (auto e = checkCallee("while", "body", body, args); !e.empty()) return failure(e);
  const Shape& cr = cond->root()->shape();
  if (!cr.isScalar() || cr.elementType() != PrimitiveType::kPred) {
    return failure("while: condition computation '" + cond->name() + "' must return pred[], got " +
                   str(cr));
  }
  if (!body->root()->shape().compatible(init)) {
    return failure("while: body computation '" + body->name() + "' returns " +
                   str(body->root()->shape()) + " but the loop state is " + str(init));
  }
  return success(init);
}

ShapeResult conditional(Shapes operands, const HloAttributes& attrs) {
  if (operands.empty()) return failure("conditional expects a branch index");
  const Shape& index = *operands[0];
  std::vector<HloComputation*> branches;
  if (const CalledComputations* list = calledList(attrs, "branch_computations")) {
    if (!index.isScalar() || index.elementType() != PrimitiveType::kS32) {
      return failure("conditional: with branch_computations the index must be s32[], got " +
                     str(index));
    }
    branches = list->computations;
  } else {
    if (!index.isScalar() || index.elementType() != PrimitiveType::kPred) {
      return failure("conditional: with true/false_computation the predicate must be pred[], got " +
                     str(index));
    }
    branches = {calledComputation(attrs, "true_computation"),
                calledComputation(attrs, "false_computation")};
    if (!branches[0] || !branches[1])
      return failure("conditional requires true_computation and false_computation");
  }
  if (branches.empty()) return failure("conditional needs at least one branch");
  if (operands.size() != branches.size() + 1) {
    return failure(
        "conditional: " + plural(static_cast<int64_t>(branches.size()), "branch", "branches") +
        " need " + std::to_string(branches.size()) + " branch operands, got " +
        std::to_string(operands.size() - 1));
  }
  for (size_t i = 0; i < branches.size(); ++i) {
    std::vector<const Shape*> args = {operands[i + 1]};
    if (auto e = checkCallee("conditional", "branch " + std::to_string(i), branches[i], args);
        !e.empty()) {
      return failure(e);
    }
    if (!branches[i]->root()->shape().compatible(branches[0]->root()->shape())) {
      return failure("conditional: branch " + std::to_string(i) + " returns " +
                     str(branches[i]->root()->shape()) + " but branch 0 returns " +
                     str(branches[0]->root()->shape()));
    }
  }
  return success(branches[0]->root()->shape());
}

ShapeResult sort(Shapes operands, const HloAttributes& attrs) {
  if (operands.empty()) return failure("sort expects at least one operand");
  const Shape& x = *operands[0];
  std::vector<Shape> results;
  std::vector<Shape> params;
  for (const Shape* s : operands) {
    if (auto e = requireArray("sort", *s, "every operand"); !e.empty()) return failure(e);
    if (s->dims() != x.dims())
      return failure("sort: operands " + str(x) + " and " + str(*s) + " have different dimensions");
    results.push_back(*s);
    params.emplace_back(s->elementType(), std::vector<int64_t>{});
    params.emplace_back(s->elementType(), std::vector<int64_t>{});
  }
  if (!attrs.dimensions || attrs.dimensions->size() != 1)
    return failure("sort requires exactly one dimension");
  if (auto e = checkDimensionList("sort", "dimension", *attrs.dimensions, x.rank()); !e.empty())
    return failure(e);
  std::vector<const Shape*> args;
  for (const Shape& s : params)
    args.push_back(&s);
  HloComputation* c = calledComputation(attrs, "to_apply");
  if (auto e = checkCallee("sort", "to_apply", c, args); !e.empty()) return failure(e);
  const Shape& root = c->root()->shape();
  if (!root.isScalar() || root.elementType() != PrimitiveType::kPred) {
    return failure("sort: comparator '" + c->name() + "' must return pred[], got " + str(root));
  }
  return success(tupleOrSingle(std::move(results)));
}

ShapeResult getTupleElement(Shapes operands, const HloAttributes& attrs) {
  if (auto e = arity("get-tuple-element", operands, 1); !e.empty()) return failure(e);
  const Shape& t = *operands[0];
  if (!t.isTuple()) return failure("get-tuple-element: the operand must be a tuple, got " + str(t));
  if (!attrs.index) return failure("get-tuple-element requires index");
  if (*attrs.index < 0 || *attrs.index >= static_cast<int64_t>(t.tupleShapes().size())) {
    return failure("get-tuple-element: index " + std::to_string(*attrs.index) +
                   " is out of range for " + str(t));
  }
  return success(t.tupleShapes()[static_cast<size_t>(*attrs.index)]);
}

ShapeResult infer(O op, Shapes operands, const HloAttributes& attrs, const Shape* declared) {
  if (isElementwiseUnary(op)) return unary(op, operands);
  if (isElementwiseBinary(op)) return binary(op, operands);
  switch (op) {
    case O::kOptBarrier:
      return unary(op, operands);
    case O::kCompare:
      return compare(operands, attrs);
    case O::kSelect:
      return select(operands);
    case O::kClamp:
      return clamp(operands);
    case O::kConvert:
      return convert(operands, declared);
    case O::kBitcastConvert:
      return bitcastConvert(operands, declared);
    case O::kReducePrecision:
      return reducePrecision(operands, attrs);
    case O::kBroadcast:
      return broadcast(operands, attrs, declared);
    case O::kReshape:
      return reshape(operands, declared);
    case O::kBitcast:
      return bitcast(operands, declared);
    case O::kTranspose:
      return transpose(operands, attrs);
    case O::kReverse:
      return reverse(operands, attrs);
    case O::kSlice:
      return slice(operands, attrs);
    case O::kDynamicSlice:
      return dynamicSlice(operands, attrs);
    case O::kDynamicUpdateSlice:
      return dynamicUpdateSlice(operands);
    case O::kConcatenate:
      return concatenate(operands, attrs);
    case O::kPad:
      return pad(operands, attrs);
    case O::kIota:
      return iota(operands, attrs, declared);
    case O::kDot:
      return dot(operands, attrs, declared);
    case O::kConvolution:
      return convolution(operands, attrs, declared);
    case O::kReduce:
      return reduce(operands, attrs);
    case O::kReduceWindow:
      return reduceWindow(operands, attrs);
    case O::kMap:
      return map(operands, attrs);
    case O::kCall:
    case O::kFusion:
      return call(op, operands, attrs);
    case O::kWhile:
      return whileLoop(operands, attrs);
    case O::kConditional:
      return conditional(operands, attrs);
    case O::kSort:
      return sort(operands, attrs);
    case O::kTuple: {
      std::vector<Shape> elements;
      for (const Shape* s : operands)
        elements.push_back(*s);
      return success(Shape::tuple(std::move(elements)));
    }
    case O::kGetTupleElement:
      return getTupleElement(operands, attrs);
    case O::kAfterAll:  // XLA accepts any operands (they only order side effects)
      return success(Shape::token());
    case O::kAddDependency:
      if (auto e = arity("add-dependency", operands, 2); !e.empty()) return failure(e);
      if (!operands[1]->isToken())
        return failure("add-dependency: the second operand must be a token");
      return success(*operands[0]);
    case O::kPartitionId:
    case O::kReplicaId:
      if (auto e = arity(opcodeName(op), operands, 0); !e.empty()) return failure(e);
      return success(Shape(PrimitiveType::kU32, {}));
    case O::kParameter:
    case O::kConstant:
      if (!declared) return needDeclared(opcodeName(op));
      return success(*declared);
    default: {
      if (!declared)
        return failure(std::string(opcodeName(op)) + " needs its result shape written");
      ShapeResult r;
      r.shape = *declared;
      r.checked = false;
      return r;
    }
  }
}

}  // namespace

ShapeResult inferShape(HloOpcode opcode, std::span<const Shape* const> operands,
                       const HloAttributes& attrs, const Shape* declared) {
  ShapeResult r = infer(opcode, operands, attrs, declared);
  if (!r.ok() || !declared || !r.checked) return r;
  if (!declared->compatible(*r.shape)) {
    return failure("declared shape " + str(*declared) + " does not match the inferred shape " +
                   str(*r.shape));
  }
  r.shape = *declared;
  return r;
}

bool resultShapeOptional(HloOpcode op) {
  switch (op) {
    case O::kConvert:
    case O::kBitcastConvert:
    case O::kBitcast:
    case O::kStochasticConvert:
    case O::kBroadcast:
    case O::kReshape:
    case O::kSlice:
    case O::kDynamicSlice:
    case O::kDynamicUpdateSlice:
    case O::kIota:
    case O::kParameter:
    case O::kConstant:
    case O::kFusion:
      return false;
    default:
      break;
  }
  if (isElementwiseUnary(op) || isElementwiseBinary(op)) return true;
  switch (op) {
    case O::kOptBarrier:
    case O::kCompare:
    case O::kSelect:
    case O::kClamp:
    case O::kReducePrecision:
    case O::kTranspose:
    case O::kReverse:
    case O::kConcatenate:
    case O::kPad:
    case O::kDot:
    case O::kConvolution:
    case O::kReduce:
    case O::kReduceWindow:
    case O::kMap:
    case O::kCall:
    case O::kWhile:
    case O::kConditional:
    case O::kSort:
    case O::kTuple:
    case O::kGetTupleElement:
    case O::kAfterAll:
    case O::kAddDependency:
    case O::kPartitionId:
    case O::kReplicaId:
      return true;
    default:
      return false;
  }
}

ProgramShape programShape(const HloComputation& computation) {
  ProgramShape ps;
  for (HloInstruction* p : computation.parameters()) {
    ps.parameters.push_back(p ? p->shape() : Shape::tuple({}));
  }
  if (computation.root()) ps.result = computation.root()->shape();
  return ps;
}

}  // namespace tacit::hlo
