#include "isel/value_range.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "egraph/id_table.h"
#include "hlo/dtype.h"

namespace tacit::isel {
namespace {

using hlo::HloOpcode;
using hlo::PrimitiveType;

ValueRange intersect(const ValueRange& a, const ValueRange& b) {
  return {std::max(a.lo, b.lo), std::min(a.hi, b.hi), a.nan && b.nan, a.integral || b.integral};
}

ValueRange unite(const ValueRange& a, const ValueRange& b) {
  return {std::min(a.lo, b.lo), std::max(a.hi, b.hi), a.nan || b.nan, a.integral && b.integral};
}

// A value of type t rounded to nearest even, as a double (the bounds of an int -> float convert
// stay bounds: rounding is monotone). nullopt for types not modelled here.
std::optional<double> roundTo(PrimitiveType t, double v) {
  if (t == PrimitiveType::kF64) return v;
  if (t == PrimitiveType::kF32) return static_cast<double>(static_cast<float>(v));
  return std::nullopt;
}

class RangeFinder {
 public:
  RangeFinder(const egraph::EGraph& g, const IrLanguage& ir, const ShapeAnalysis& shapes,
              std::vector<RangeMemo::Entry>* memo = nullptr)
      : g_(g), ir_(ir), shapes_(shapes), memo_(memo) {}

  ValueRange ofClass(ClassId c, int depth) {
    c = g_.find(c);
    if (depth <= 0) return fullRange(c);
    if (memo_ && c.value < memo_->size() && (*memo_)[c.value].depth >= depth)
      return (*memo_)[c.value].range;
    const uint32_t hash = static_cast<uint32_t>(egraph::detail::hashFinish(c.value));
    const uint32_t at = index_.find(hash, [&](uint32_t i) { return seen_[i].cls == c.value; });
    if (at != egraph::detail::IdTable::kEmpty)  // its range, or (still on the stack) a cycle
      return seen_[at].done ? seen_[at].range : fullRange(c);
    const uint32_t self = static_cast<uint32_t>(seen_.size());
    seen_.push_back({c.value, false, {}});
    index_.insert(hash, self);
    // The type's range, narrowed by each e-node (ofNode only reads the e-graph, so the walk over
    // the class's node list may recurse; a vector of the nodes per class showed in profiles).
    ValueRange r = fullRange(c);
    g_.forEachNode(c, [&](NodeId n) { r = intersect(r, ofNode(g_.node(n), depth)); });
    seen_[self] = {c.value, true, r};  // a range cut short on a cycle is wider: still sound
    if (memo_) {
      if (c.value >= memo_->size()) memo_->resize(c.value + 1);
      if ((*memo_)[c.value].depth < depth) (*memo_)[c.value] = {r, depth};
    }
    return r;
  }

 private:
  ValueRange ofNode(const egraph::ENode& e, int depth) {
    auto opcode = ir_.opcodeOf(e.op());
    if (!opcode) return {};
    const OpDesc& d = ir_.opDesc(e.attr());
    PrimitiveType t = d.shape.elementType();
    ValueRange full = ValueRange::of(t);
    auto kid = [&](size_t i) { return ofClass(e.child(i), depth - 1); };
    switch (*opcode) {
      case HloOpcode::kConstant:
        return ofLiteral(*d.literal);
      case HloOpcode::kReshape:
      case HloOpcode::kTranspose:
      case HloOpcode::kSlice:
      case HloOpcode::kBroadcast:
      case HloOpcode::kReverse:
      case HloOpcode::kCopy:
        return kid(0);
      case HloOpcode::kConcatenate:
      case HloOpcode::kPad: {
        ValueRange r = kid(0);
        for (size_t i = 1; i < e.arity(); ++i)
          r = unite(r, kid(i));
        return r;
      }
      case HloOpcode::kSelect:
        return unite(kid(1), kid(2));
      case HloOpcode::kMaximum:
      case HloOpcode::kMinimum:
        return extreme(*opcode == HloOpcode::kMaximum, kid(0), kid(1));
      case HloOpcode::kClamp:  // minimum(hi, maximum(lo, x))
        return extreme(false, kid(2), extreme(true, kid(0), kid(1)));
      case HloOpcode::kRoundNearestEven:
      case HloOpcode::kRoundNearestAfz:
      case HloOpcode::kFloor:
      case HloOpcode::kCeil: {
        if (!hlo::isFloat(t)) return full;
        ValueRange x = kid(0);
        // Monotone, and each moves a value by less than 1 to an integer.
        x.lo = std::floor(x.lo);
        x.hi = std::ceil(x.hi);
        x.integral = true;
        return x;
      }
      case HloOpcode::kConvert:
        return convert(t, classType(e.child(0)), kid(0));
      default:
        return full;
    }
  }

  // The full range of the class's element type.
  ValueRange fullRange(ClassId c) const { return ValueRange::of(classType(c)); }

  // The element type of every e-node of c (the shape analysis keeps one type per class; walking
  // the class's nodes for it showed in profiles).
  PrimitiveType classType(ClassId c) const { return shapes_.data(c).elementType(); }

  // maximum/minimum of operands in ranges a and b (IEEE: NaN if either is NaN).
  static ValueRange extreme(bool max, const ValueRange& a, const ValueRange& b) {
    ValueRange r;
    r.lo = max ? std::max(a.lo, b.lo) : std::min(a.lo, b.lo);
    r.hi = max ? std::max(a.hi, b.hi) : std::min(a.hi, b.hi);
    r.nan = a.nan || b.nan;
    r.integral = a.integral && b.integral;
    return r;
  }

  static ValueRange convert(PrimitiveType to, PrimitiveType from, const ValueRange& x) {
    ValueRange full = ValueRange::of(to);
    if (hlo::isFloat(to)) {
      // From an integer (x.nan is false) or a float: exact or rounded to nearest, monotone.
      auto lo = roundTo(to, x.lo), hi = roundTo(to, x.hi);
      if (!lo || !hi) return full;
      return {*lo, *hi, x.nan, x.integral};
    }
    if (!hlo::isInteger(to)) return full;
    if (!hlo::isFloat(from)) {  // int -> int: the low bits, the value itself if it fits
      return x.within(full.lo, full.hi) ? ValueRange{x.lo, x.hi, false, true} : full;
    }
    // float -> int: truncated toward zero and saturated; NaN -> 0.
    ValueRange r{std::clamp(std::trunc(x.lo), full.lo, full.hi),
                 std::clamp(std::trunc(x.hi), full.lo, full.hi), false, true};
    if (x.nan) {
      r.lo = std::min(r.lo, 0.0);
      r.hi = std::max(r.hi, 0.0);
    }
    return r;
  }

  static ValueRange ofLiteral(const hlo::Literal& lit) {
    PrimitiveType t = lit.shape().elementType();
    ValueRange full = ValueRange::of(t);
    // (64-bit integers may not be exact as doubles.)
    if (!(hlo::isFloat(t) || hlo::isInteger(t)) || (hlo::isInteger(t) && hlo::bitWidth(t) > 32))
      return full;
    ValueRange r{std::numeric_limits<double>::infinity(), -std::numeric_limits<double>::infinity(),
                 false, true};
    for (int64_t i = 0, n = lit.shape().elementCount(); i < n; ++i) {
      double v = lit.getDouble(i);
      if (std::isnan(v)) {
        r.nan = true;
        continue;
      }
      r.lo = std::min(r.lo, v);
      r.hi = std::max(r.hi, v);
      r.integral &= !std::isfinite(v) || std::nearbyint(v) == v;
    }
    return r;
  }

  const egraph::EGraph& g_;
  const IrLanguage& ir_;
  const ShapeAnalysis& shapes_;
  // The classes this query reached: on the stack (not done) or with their range, found through
  // an open-addressing index (std::unordered_map/set lookups were most of the queries' time).
  struct Seen {
    uint32_t cls = 0;
    bool done = false;
    ValueRange range;
  };
  std::vector<Seen> seen_;
  egraph::detail::IdTable index_;
  std::vector<RangeMemo::Entry>* memo_;
};

}  // namespace

ValueRange ValueRange::of(PrimitiveType t) {
  if (t == PrimitiveType::kPred) return {0, 1, false, true};
  if (hlo::isInteger(t)) {
    int bits = hlo::bitWidth(t);
    if (hlo::isUnsignedInteger(t)) return {0, std::ldexp(1.0, bits) - 1, false, true};
    return {-std::ldexp(1.0, bits - 1), std::ldexp(1.0, bits - 1) - 1, false, true};
  }
  return {};
}

ValueRange valueRange(const egraph::EGraph& g, const IrLanguage& ir, const ShapeAnalysis& shapes,
                      ClassId c, int depth) {
  return RangeFinder(g, ir, shapes).ofClass(c, depth);
}

ValueRange RangeMemo::of(const egraph::EGraph& g, const IrLanguage& ir, const ShapeAnalysis& shapes,
                         ClassId c, int depth) {
  if (generation_ != g.indexGeneration()) {
    entries_.clear();
    generation_ = g.indexGeneration();
  }
  return RangeFinder(g, ir, shapes, &entries_).ofClass(c, depth);
}

}  // namespace tacit::isel
