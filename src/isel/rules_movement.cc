// IR→IR rules for data movement the view pass (passes.h) does not decide: a slice of a
// broadcast, and byte-flattenings, transposes and reshapes of concatenations.
#include "isel/rules_shared.h"

#include <algorithm>
#include <numeric>

namespace tacit::isel {
namespace {

using namespace rules_shared;

// slice(broadcast(x)) = broadcast(reshape(slice(x))): the slice of a replication is the
// replication of the slice of the replicated dims; operand dims left with extent 1 are dropped
// (their result dim has extent 1 either way). Pure data movement, exact for every type. It turns
// a block of a row-broadcast matrix into the broadcast of one scalar, which instructions that
// broadcast from a register or memory (AVX-512's vbroadcastss) compute.
class SliceOfBroadcast : public IrRule {
 public:
  SliceOfBroadcast()
      : IrRule({.name = "slice-of-broadcast",
                .identity =
                    "slice(broadcast(x, dims)) = broadcast(reshape(slice(x)), dims of extent > 1)",
                .lhs_ops = {HloOpcode::kSlice, HloOpcode::kBroadcast},
                .rhs_ops = {HloOpcode::kBroadcast, HloOpcode::kReshape, HloOpcode::kSlice}}) {}
  std::vector<Rewrite> rewrites(IrBuilder& b, const IsaNeeds&) const override {
    PatternBuilder pb(b.ir().lang());
    auto x = pb.var("x");
    auto bc = pb.node(b.ir().opFor(HloOpcode::kBroadcast), AttrMatch::bind("b"), {x});
    Pattern p = pb.build(pb.node(b.ir().opFor(HloOpcode::kSlice), AttrMatch::bind("s"), {bc}));
    Pattern keep = p;
    return {Rewrite(name(), std::move(p),
                    [&b, keep](EGraph&, ClassId, const Subst& s) -> std::optional<ClassId> {
                      return sliceBroadcast(b, bound(b, keep, s, "s"), bound(b, keep, s, "b"),
                                            s[keep.var("x")]);
                    })
                .reads(egraph::ApplierReads::kMatch)};
  }
  std::vector<std::string> examples() const override {
    return {entryModule(R"(
  a = f32[14] parameter(0)
  b = f32[14,32] broadcast(a), dimensions={0}
  ROOT s = f32[1,16] slice(b), slice={[3:4], [16:32]}
)"),
            entryModule(R"(
  a = s8[6,5] parameter(0)
  b = s8[6,4,5] broadcast(a), dimensions={0,2}
  ROOT s = s8[2,4,2] slice(b), slice={[1:5:2], [0:4], [1:5:2]}
)")};
  }

 private:
  static std::optional<ClassId> sliceBroadcast(IrBuilder& b, const OpDesc& slice,
                                               const OpDesc& bcast, ClassId x) {
    const std::vector<hlo::SliceDim>& sl = *slice.attrs.slice;
    const std::vector<int64_t>& dims = *bcast.attrs.dimensions;
    std::vector<hlo::SliceDim> xs;
    std::vector<int64_t> kept_shape, kept_dims;
    for (size_t i = 0; i < dims.size(); ++i) {
      xs.push_back(sl[static_cast<size_t>(dims[i])]);
      int64_t extent = slice.shape.dim(dims[i]);
      if (extent == 1) continue;
      kept_shape.push_back(extent);
      kept_dims.push_back(dims[i]);
    }
    if (slice.shape == bcast.shape) return std::nullopt;  // an identity slice: nothing to do
    ClassId part = b.reshape(b.slice(x, xs), kept_shape);
    return b.broadcast(part, slice.shape.dims(), kept_dims);
  }
};

// bflat(concatenate(x_i)) = concatenate of the parts' bytes: along dimension 0 each part is a
// contiguous run of bytes; along a later dimension each row of leading indices is (and the bytes
// of a row are the concatenation of the parts' rows).
class FlattenOverConcat : public IrRule {
 public:
  static constexpr int64_t kMaxPieces = 1024;
  FlattenOverConcat()
      : IrRule(
            {.name = "flatten-over-concat",
             .identity = "bflat(concatenate_d(x_i)) = concatenate(bflat(row of x_i) ...) in "
                         "row-major order",
             .lhs_ops = {HloOpcode::kReshape, HloOpcode::kBitcastConvert, HloOpcode::kConcatenate},
             .rhs_ops = {HloOpcode::kReshape, HloOpcode::kBitcastConvert, HloOpcode::kConcatenate,
                         HloOpcode::kSlice}}) {}
  std::vector<Rewrite> rewrites(IrBuilder& b, const IsaNeeds&) const override {
    std::vector<Rewrite> out;
    // bytes = reshape(x) for 1-byte types, or reshape(bitcast-convert(x)).
    for (bool bitcast : {false, true}) {
      PatternBuilder pb(b.ir().lang());
      auto x = pb.var("x");
      auto inner =
          bitcast ? pb.node(b.ir().opFor(HloOpcode::kBitcastConvert), AttrMatch::any(), {x}) : x;
      Pattern p =
          pb.build(pb.node(b.ir().opFor(HloOpcode::kReshape), AttrMatch::bind("r"), {inner}));
      Pattern keep = p;
      out.emplace_back(
             name() + (bitcast ? "-bitcast" : ""), std::move(p),
             [&b, keep](EGraph&, ClassId, const Subst& s) -> std::optional<ClassId> {
               const OpDesc& r = bound(b, keep, s, "r");
               if (r.shape.elementType() != hlo::PrimitiveType::kU8 || r.shape.rank() != 1)
                 return std::nullopt;
               return byteConcat(b, s[keep.var("x")]);
             })
          .reads(egraph::ApplierReads::kSubstNodes);  // whether x is a concatenation
    }
    return out;
  }
  std::vector<std::string> examples() const override {
    return {entryModule(R"(
  a = bf16[2,3] parameter(0)
  b = bf16[2,5] parameter(1)
  c = bf16[2,8] concatenate(a, b), dimensions={1}
  u = u8[2,8,2] bitcast-convert(c)
  ROOT r = u8[32] reshape(u)
)"),
            entryModule(R"(
  a = s8[3,4] parameter(0)
  b = s8[1,4] parameter(1)
  c = s8[4,4] concatenate(a, b), dimensions={0}
  u = u8[4,4] bitcast-convert(c)
  ROOT r = u8[16] reshape(u)
)")};
  }

  static std::optional<ClassId> byteConcat(IrBuilder& b, ClassId x) {
    std::optional<Cut> cut = concatOf(b, x);
    if (!cut) return std::nullopt;
    const hlo::Shape s = b.shape(x);  // a copy: adding nodes may move the analysis data
    int64_t rows = 1;
    for (int64_t i = 0; i < cut->dim; ++i)
      rows *= s.dim(i);
    // A concatenation of many narrow parts (64 transposed rows: columns of one element) would
    // flatten to thousands of element-sized pieces, none of which a unit moves; skipping it kept
    // QKV's [64,64]x[64,128] product from filling the e-graph (86k e-nodes, 2.3 s).
    if (rows * static_cast<int64_t>(cut->parts.size()) > kMaxPieces) return std::nullopt;
    std::vector<ClassId> pieces;
    if (cut->dim == 0 || rows == 1) {
      for (ClassId part : cut->parts)
        pieces.push_back(b.flatten(part));
    } else {
      // One row of leading indices at a time: the parts' slices at that row, in order.
      std::vector<int64_t> lead(static_cast<size_t>(cut->dim), 0);
      for (int64_t r = 0; r < rows; ++r) {
        for (ClassId part : cut->parts) {
          std::vector<hlo::SliceDim> sl = fullSlice(b.shape(part));
          for (size_t k = 0; k < lead.size(); ++k)
            sl[k] = {lead[k], lead[k] + 1, 1};
          pieces.push_back(b.flatten(b.slice(part, sl)));
        }
        for (size_t k = lead.size(); k-- > 0;) {
          if (++lead[k] < s.dim(static_cast<int64_t>(k))) break;
          lead[k] = 0;
        }
      }
    }
    return pieces.size() == 1 ? pieces[0] : b.concatenate(pieces, 0);
  }
};

// A transpose or reshape of a concatenation is a concatenation of the parts' transposes or
// reshapes when each part stays one block: transpose always (the concatenation dimension moves to
// its new position); reshape when the dimensions before the concatenation dimension keep their
// product and the next result dimension counts the (equal-sized) parts. Pure data movement, exact
// for every type. It lets a tiled result layout (`{1,0:T(16,16)}`) of a tiled computation be
// written tile by tile.
class MovementOverConcat : public IrRule {
 public:
  MovementOverConcat()
      : IrRule({.name = "movement-over-concat",
                .identity = "transpose(concatenate_d(x_i)) = concatenate_e(transpose(x_i)), "
                            "perm[e] = d; reshape(concatenate_d(x_i)) = "
                            "concatenate_e(reshape(x_i)) when the parts stay blocks",
                .lhs_ops = {HloOpcode::kTranspose, HloOpcode::kReshape, HloOpcode::kConcatenate},
                .rhs_ops = {HloOpcode::kTranspose, HloOpcode::kReshape, HloOpcode::kConcatenate}}) {
  }
  std::vector<Rewrite> rewrites(IrBuilder& b, const IsaNeeds&) const override {
    std::vector<Rewrite> out;
    for (HloOpcode m : {HloOpcode::kTranspose, HloOpcode::kReshape}) {
      PatternBuilder pb(b.ir().lang());
      auto x = pb.var("x");
      Pattern p = pb.build(pb.node(b.ir().opFor(m), AttrMatch::bind("m"), {x}));
      Pattern keep = p;
      out.emplace_back(rewriteName(m), std::move(p),
                       [&b, keep, m](EGraph&, ClassId, const Subst& s) -> std::optional<ClassId> {
                         OpDesc move = bound(b, keep, s, "m");  // a copy: nodes are added below
                         ClassId in = s[keep.var("x")];
                         std::optional<Cut> cut = concatOf(b, in);
                         if (!cut) return std::nullopt;
                         return m == HloOpcode::kTranspose ? overTranspose(b, move, *cut)
                                                           : overReshape(b, move, *cut);
                       })
          .reads(egraph::ApplierReads::kSubstNodes);  // whether x is a concatenation
    }
    return out;
  }
  std::vector<std::string> examples() const override {
    return {entryModule(R"(
  a = s32[4,3,2] parameter(0)
  b = s32[4,5,2] parameter(1)
  c = s32[4,8,2] concatenate(a, b), dimensions={1}
  ROOT t = s32[2,4,8] transpose(c), dimensions={2,0,1}
)"),
            entryModule(R"(
  a = bf16[6,4] parameter(0)
  b = bf16[6,4] parameter(1)
  c = bf16[6,4] parameter(2)
  k = bf16[6,12] concatenate(a, b, c), dimensions={1}
  r = bf16[2,3,3,4] reshape(k)
  ROOT t = bf16[2,3,3,4] transpose(r), dimensions={0,2,1,3}
)")};
  }

 private:
  static std::optional<ClassId> overTranspose(IrBuilder& b, const OpDesc& t, const Cut& cut) {
    const std::vector<int64_t>& perm = *t.attrs.dimensions;
    auto at = std::find(perm.begin(), perm.end(), cut.dim);
    std::vector<ClassId> parts;
    for (ClassId part : cut.parts)
      parts.push_back(b.transpose(part, perm));
    return b.concatenate(parts, at - perm.begin());
  }

  static std::optional<ClassId> overReshape(IrBuilder& b, const OpDesc& r, const Cut& cut) {
    const int64_t n = static_cast<int64_t>(cut.parts.size());
    const int64_t size = cut.bounds[1] - cut.bounds[0];
    for (int64_t i = 1; i < n; ++i) {
      if (cut.bounds[static_cast<size_t>(i + 1)] - cut.bounds[static_cast<size_t>(i)] != size)
        return std::nullopt;
    }
    hlo::Shape whole = b.shape(cut.parts[0]);  // copies: nodes are added below
    int64_t prefix = 1;
    for (int64_t i = 0; i < cut.dim; ++i)
      prefix *= whole.dim(i);
    std::vector<int64_t> dims = r.shape.dims();
    int64_t acc = 1;
    for (size_t e = 0; e < dims.size(); ++e) {
      if (acc == prefix && dims[e] == n) {
        dims[e] = 1;
        std::vector<ClassId> parts;
        for (ClassId part : cut.parts)
          parts.push_back(b.reshape(part, dims));
        return b.concatenate(parts, static_cast<int64_t>(e));
      }
      acc *= dims[e];
      if (acc > prefix) break;
    }
    return std::nullopt;
  }
};

}  // namespace

std::unique_ptr<IrRule> makeSliceOfBroadcast() {
  return std::make_unique<SliceOfBroadcast>();
}
std::unique_ptr<IrRule> makeFlattenOverConcat() {
  return std::make_unique<FlattenOverConcat>();
}
std::unique_ptr<IrRule> makeMovementOverConcat() {
  return std::make_unique<MovementOverConcat>();
}

}  // namespace tacit::isel
