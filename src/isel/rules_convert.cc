// IR→IR rules for conversions (rules.h): data movement moved through a convert, clamps as
// maximum/minimum, and the float→integer and integer-narrowing converts rewritten into the forms
// x86-style conversion instructions compute, under value-range preconditions (value_range.h).
#include "isel/rules_shared.h"

#include <algorithm>
#include "isel/value_range.h"
#include "taidl/ops.h"

namespace tacit::isel {
namespace {

using namespace rules_shared;

// A scalar constant of type t broadcast to `dims`.
ClassId splat(IrBuilder& b, hlo::PrimitiveType t, double value, const std::vector<int64_t>& dims) {
  hlo::Literal lit{hlo::Shape(t, {})};
  lit.setDouble(0, value);
  return b.broadcast(b.constant(std::move(lit)), dims, {});
}

// M(convert(x)) = convert(M(x)) for a data movement M: conversion is elementwise.
class MovementThroughConvert : public IrRule {
 public:
  MovementThroughConvert()
      : IrRule({.name = "movement-through-convert",
                .identity = "M(convert(x)) = convert(M(x)) for M in transpose, slice, reshape, "
                            "broadcast, reverse",
                .lhs_ops = {HloOpcode::kConvert, HloOpcode::kTranspose},
                .rhs_ops = {HloOpcode::kConvert}}) {}
  std::vector<Rewrite> rewrites(IrBuilder& b, const IsaNeeds&) const override {
    std::vector<Rewrite> out;
    for (HloOpcode m : {HloOpcode::kTranspose, HloOpcode::kSlice, HloOpcode::kReshape,
                        HloOpcode::kBroadcast, HloOpcode::kReverse}) {
      PatternBuilder pb(b.ir().lang());
      auto x = pb.var("x");
      auto conv = pb.node(b.ir().opFor(HloOpcode::kConvert), AttrMatch::bind("c"), {x});
      Pattern p = pb.build(pb.node(b.ir().opFor(m), AttrMatch::bind("m"), {conv}));
      Pattern keep = p;
      out.emplace_back(rewriteName(m), std::move(p),
                       [&b, keep](EGraph&, ClassId, const Subst& s) -> std::optional<ClassId> {
                         OpDesc move = bound(b, keep, s, "m");
                         ClassId in = s[keep.var("x")];
                         hlo::PrimitiveType to = move.shape.elementType();
                         move.shape = hlo::Shape(b.shape(in).elementType(), move.shape.dims());
                         ClassId kids[] = {in};
                         return b.convert(b.add(std::move(move), kids), to);
                       })
          .reads(egraph::ApplierReads::kMatch);
    }
    return out;
  }
  std::vector<std::string> examples() const override {
    return {entryModule(R"(
  a = s8[4,6] parameter(0)
  c = s32[4,6] convert(a)
  ROOT t = s32[6,4] transpose(c), dimensions={1,0}
)"),
            entryModule(R"(
  a = bf16[4,6] parameter(0)
  c = f32[4,6] convert(a)
  ROOT s = f32[2,3] slice(c), slice={[1:3], [0:6:2]}
)")};
  }
};

// clamp(lo, x, hi) = minimum(hi, maximum(lo, x)) in that operand order (the definition: XLA's
// EmitElementalClamp, docs/numerics.md), scalar bounds broadcast: exact for every type.
class ClampMinMax : public IrRule {
 public:
  ClampMinMax()
      : IrRule({.name = "clamp-min-max",
                .identity = "clamp(lo, x, hi) = minimum(broadcast(hi), maximum(broadcast(lo), x))",
                .lhs_ops = {HloOpcode::kClamp},
                .rhs_ops = {HloOpcode::kMaximum, HloOpcode::kMinimum, HloOpcode::kBroadcast}}) {}
  std::vector<Rewrite> rewrites(IrBuilder& b, const IsaNeeds& needs) const override {
    if (!needs.ops.count(HloOpcode::kMaximum) && !needs.ops.count(HloOpcode::kMinimum)) return {};
    return {elementwiseRewrite(
        b, name(), HloOpcode::kClamp, egraph::ApplierReads::kMatch,
        [&b](const OpDesc& e, ClassId, std::vector<ClassId> xs) -> std::optional<ClassId> {
          std::vector<int64_t> dims = e.shape.dims();
          auto full = [&](ClassId c) {
            return b.shape(c).rank() == 0 && !dims.empty() ? b.broadcast(c, dims, {}) : c;
          };
          ClassId lo = full(xs[0]), hi = full(xs[2]);
          return b.binary(HloOpcode::kMinimum, hi, b.binary(HloOpcode::kMaximum, lo, xs[1]));
        })};
  }
  std::vector<std::string> examples() const override {
    return {entryModule(R"(
  a = f32[4,16] parameter(0)
  lo = f32[] constant(-0.5)
  hi = f32[] constant(0.25)
  ROOT k = f32[4,16] clamp(lo, a, hi)
)"),
            entryModule(R"(
  lo = s8[3,5] parameter(0)
  a = s8[3,5] parameter(1)
  hi = s8[3,5] parameter(2)
  ROOT k = s8[3,5] clamp(lo, a, hi)
)"),
            entryModule(R"(
  a = f32[8] parameter(0)
  b = f32[8] parameter(1)
  z = f32[] constant(0)
  ROOT k = f32[8] clamp(z, a, b)
)")};
  }
  IsaNeeds exampleNeeds() const override {
    IsaNeeds n;
    n.ops = {HloOpcode::kMaximum, HloOpcode::kMinimum};
    return n;
  }
};

// A float -> narrow integer convert of a value known to be in the target type's range or NaN
// (value_range.h) equals the same convert of the guarded s32 conversion that x86's VCVTPS2DQ and
// VCVTTPS2DQ model (docs/numerics.md):
//   convert<N>(x) = convert<N>(select(and(x >= -2^31, x < 2^31), convert<s32>(x), -2^31))
// For x in [MIN_N, MAX_N] both sides truncate x toward zero to a value of N (the guard holds and
// nothing saturates); for NaN the left side is 0 and the right side truncates 0x80000000 to N's
// low bits, also 0 (N is narrower than 32 bits). Without the range precondition the two differ
// (x = 300: 255 against 44 for u8). Only for ISAs whose units compute select, compare and `and`.
class ConvertGuardedS32 : public IrRule {
 public:
  ConvertGuardedS32()
      : IrRule({.name = "convert-guarded-s32",
                .identity = "convert<N>(x) = convert<N>(select(x >= -2^31 and x < 2^31, "
                            "convert<s32>(x), -2^31)) for f32/f64 x in [MIN_N, MAX_N] or NaN, N an "
                            "integer type narrower than 32 bits",
                .lhs_ops = {HloOpcode::kConvert},
                .rhs_ops = {HloOpcode::kConvert, HloOpcode::kSelect, HloOpcode::kCompare,
                            HloOpcode::kAnd, HloOpcode::kConstant, HloOpcode::kBroadcast}}) {}
  std::vector<Rewrite> rewrites(IrBuilder& b, const IsaNeeds& needs) const override {
    for (HloOpcode op : {HloOpcode::kSelect, HloOpcode::kCompare, HloOpcode::kAnd}) {
      if (!needs.ops.count(op)) return {};
    }
    return {elementwiseRewrite(
        b, name(), HloOpcode::kConvert, egraph::ApplierReads::kAnything,
        [&b](const OpDesc& e, ClassId matched, std::vector<ClassId> xs) -> std::optional<ClassId> {
          using hlo::PrimitiveType;
          PrimitiveType to = e.shape.elementType();
          ClassId x = xs[0];
          PrimitiveType from = b.shape(x).elementType();
          if (!hlo::isInteger(to) || hlo::bitWidth(to) >= 32 ||
              (from != PrimitiveType::kF32 && from != PrimitiveType::kF64))
            return std::nullopt;
          std::vector<int64_t> dims = e.shape.dims();
          auto guarded = [&]() -> ClassId {
            auto cmp = [&](double bound, hlo::ComparisonDirection dir) {
              OpDesc c;
              c.opcode = HloOpcode::kCompare;
              c.attrs.direction = dir;
              ClassId kids[] = {x, splat(b, from, bound, dims)};
              return b.add(std::move(c), kids);
            };
            const double limit = 2147483648.0;
            ClassId ok = b.binary(HloOpcode::kAnd, cmp(-limit, hlo::ComparisonDirection::kGe),
                                  cmp(limit, hlo::ComparisonDirection::kLt));
            OpDesc sel;
            sel.opcode = HloOpcode::kSelect;
            ClassId kids[] = {ok, b.convert(x, PrimitiveType::kS32),
                              splat(b, PrimitiveType::kS32, -limit, dims)};
            return b.convert(b.add(std::move(sel), kids), to);
          };
          // Applied in an earlier iteration: the guarded form is the matched class already, so
          // the application changes nothing whatever the range is (the range is the costly part:
          // every iteration matches every convert again).
          if (std::optional<ClassId> done = b.probe(guarded);
              done && b.egraph().same(*done, matched))
            return std::nullopt;
          ValueRange target = ValueRange::of(to);
          if (!b.valueRange(x).within(target.lo, target.hi)) return std::nullopt;
          return guarded();
        })};
  }
  std::vector<std::string> examples() const override {
    // oneDNN's requantisation tail, a signed variant through maximum/minimum, and a value rounded
    // after the clamp (still in range: rounding stays within the integer bounds).
    return {entryModule(R"(
  a = f32[4,16] parameter(0)
  k = f32[] constant(300)
  s = f32[4,16] broadcast(k), dimensions={}
  x = f32[4,16] multiply(a, s)
  lo = f32[] constant(0)
  hi = f32[] constant(255)
  c = f32[4,16] clamp(lo, x, hi)
  r = f32[4,16] round-nearest-even(c)
  ROOT q = u8[4,16] convert(r)
)"),
            entryModule(R"(
  a = f32[2,8] parameter(0)
  k = f32[] constant(200)
  s = f32[2,8] broadcast(k), dimensions={}
  x = f32[2,8] multiply(a, s)
  lo = f32[] constant(-128)
  los = f32[2,8] broadcast(lo), dimensions={}
  hi = f32[] constant(127)
  his = f32[2,8] broadcast(hi), dimensions={}
  m = f32[2,8] maximum(x, los)
  c = f32[2,8] minimum(his, m)
  ROOT q = s8[2,8] convert(c)
)"),
            entryModule(R"(
  a = f64[6] parameter(0)
  k = f64[] constant(70000)
  s = f64[6] broadcast(k), dimensions={}
  x = f64[6] multiply(a, s)
  lo = f64[] constant(0)
  hi = f64[] constant(65535)
  c = f64[6] clamp(lo, x, hi)
  r = f64[6] floor(c)
  ROOT q = u16[6] convert(r)
)")};
  }
  IsaNeeds exampleNeeds() const override {
    IsaNeeds n;
    n.ops = {HloOpcode::kSelect, HloOpcode::kCompare, HloOpcode::kAnd, HloOpcode::kConvert};
    return n;
  }
};

// A float value whose finite elements are integers (value_range.h) is its own rounding to nearest
// even: x = round-nearest-even(x) (±0, ±inf and NaN stay; a signalling NaN would come back quiet,
// which no float -> integer convert can tell). The node joins x's own class, so a conversion
// that rounds first (x86's VCVTPS2DQ) can take a value the kernel rounded before clamping it, or
// one converted from an integer. Applied to the operands of float -> integer converts.
class RoundIntegral : public IrRule {
 public:
  RoundIntegral()
      : IrRule({.name = "round-integral",
                .identity = "x = round-nearest-even(x) for float x whose finite elements are "
                            "integers (x the operand of a float -> integer convert)",
                .lhs_ops = {HloOpcode::kConvert},
                .rhs_ops = {HloOpcode::kRoundNearestEven}}) {}
  std::vector<Rewrite> rewrites(IrBuilder& b, const IsaNeeds& needs) const override {
    if (!needs.ops.count(HloOpcode::kRoundNearestEven)) return {};
    return {elementwiseRewrite(
        b, name(), HloOpcode::kConvert, egraph::ApplierReads::kAnything,
        [&b](const OpDesc& e, ClassId, std::vector<ClassId> xs) -> std::optional<ClassId> {
          ClassId x = xs[0];
          if (!hlo::isInteger(e.shape.elementType()) || !hlo::isFloat(b.shape(x).elementType()))
            return std::nullopt;
          bool rounded = false;  // already its own rounding (or rounded by the kernel)
          b.egraph().forEachNode(x, [&](NodeId n) {
            rounded |= b.ir().opcodeOf(b.egraph().node(n).op()) == HloOpcode::kRoundNearestEven;
          });
          if (rounded || !b.valueRange(x).integral) return std::nullopt;
          b.egraph().unite(b.unary(HloOpcode::kRoundNearestEven, x), x);
          return std::nullopt;
        })};
  }
  std::vector<std::string> examples() const override {
    return {entryModule(R"(
  a = f32[4,16] parameter(0)
  r = f32[4,16] round-nearest-even(a)
  lo = f32[] constant(0)
  hi = f32[] constant(255)
  c = f32[4,16] clamp(lo, r, hi)
  ROOT q = u8[4,16] convert(c)
)"),
            entryModule(R"(
  a = f32[2,8] parameter(0)
  f = f32[2,8] floor(a)
  b = s8[2,8] parameter(1)
  w = f32[2,8] convert(b)
  m = f32[2,8] maximum(f, w)
  ROOT q = s32[2,8] convert(m)
)")};
  }
  IsaNeeds exampleNeeds() const override {
    IsaNeeds n;
    n.ops = {HloOpcode::kRoundNearestEven, HloOpcode::kConvert};
    return n;
  }
};

// An integer -> narrower integer convert keeps the low bits, whatever the signedness of the
// result: convert<uN>(x) = bitcast-convert<uN>(convert<sN>(x)) and the reverse. Exact. Only
// towards a type some unit converts to (AVX-512's VPMOVDB truncates to s8, the kernel asks u8).
class ConvertNarrowSignedness : public IrRule {
 public:
  ConvertNarrowSignedness()
      : IrRule({.name = "convert-narrow-signedness",
                .identity = "convert<uN>(x) = bitcast-convert<uN>(convert<sN>(x)) (and sN/uN "
                            "swapped) for integer x wider than N bits",
                .lhs_ops = {HloOpcode::kConvert},
                .rhs_ops = {HloOpcode::kConvert, HloOpcode::kBitcastConvert}}) {}
  std::vector<Rewrite> rewrites(IrBuilder& b, const IsaNeeds& needs) const override {
    std::set<hlo::PrimitiveType> targets;
    for (const auto& entry : needs.elementwise) {
      if (entry.first.first == HloOpcode::kConvert) targets.insert(entry.first.second);
    }
    if (targets.empty()) return {};
    return {elementwiseRewrite(
        b, name(), HloOpcode::kConvert, egraph::ApplierReads::kMatch,
        [&b, targets](const OpDesc& e, ClassId, std::vector<ClassId> xs) -> std::optional<ClassId> {
          hlo::PrimitiveType to = e.shape.elementType(), from = b.shape(xs[0]).elementType();
          if (!hlo::isInteger(to) || !hlo::isInteger(from) ||
              hlo::bitWidth(to) >= hlo::bitWidth(from))
            return std::nullopt;
          std::optional<hlo::PrimitiveType> other = otherSignedness(to);
          if (!other || !targets.count(*other)) return std::nullopt;
          return b.bitcastConvert(b.convert(xs[0], *other), e.shape);
        })};
  }
  std::vector<std::string> examples() const override {
    return {entryModule(R"(
  a = s32[4,16] parameter(0)
  ROOT q = u8[4,16] convert(a)
)"),
            entryModule(R"(
  a = u8[3,5] parameter(0)
  b = u8[3,5] parameter(1)
  w = u16[3,5] convert(a)
  v = u16[3,5] convert(b)
  p = u16[3,5] multiply(w, v)
  ROOT q = s8[3,5] convert(p)
)")};
  }
  IsaNeeds exampleNeeds() const override {
    IsaNeeds n;
    n.ops = {HloOpcode::kConvert};
    n.elementwise[{HloOpcode::kConvert, hlo::PrimitiveType::kS8}] = IsaNeeds::Extents{{1}, {16}};
    n.elementwise[{HloOpcode::kConvert, hlo::PrimitiveType::kU8}] = IsaNeeds::Extents{{1}, {16}};
    return n;
  }

 private:
  static std::optional<hlo::PrimitiveType> otherSignedness(hlo::PrimitiveType t) {
    using hlo::PrimitiveType;
    switch (t) {
      case PrimitiveType::kS8:
        return PrimitiveType::kU8;
      case PrimitiveType::kU8:
        return PrimitiveType::kS8;
      case PrimitiveType::kS16:
        return PrimitiveType::kU16;
      case PrimitiveType::kU16:
        return PrimitiveType::kS16;
      case PrimitiveType::kS32:
        return PrimitiveType::kU32;
      case PrimitiveType::kU32:
        return PrimitiveType::kS32;
      default:
        return std::nullopt;
    }
  }
};

}  // namespace

std::unique_ptr<IrRule> makeMovementThroughConvert() {
  return std::make_unique<MovementThroughConvert>();
}
std::unique_ptr<IrRule> makeClampMinMax() {
  return std::make_unique<ClampMinMax>();
}
std::unique_ptr<IrRule> makeRoundIntegral() {
  return std::make_unique<RoundIntegral>();
}
std::unique_ptr<IrRule> makeConvertGuardedS32() {
  return std::make_unique<ConvertGuardedS32>();
}
std::unique_ptr<IrRule> makeConvertNarrowSignedness() {
  return std::make_unique<ConvertNarrowSignedness>();
}

}  // namespace tacit::isel
