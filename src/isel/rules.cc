#include "isel/rules.h"

#include <algorithm>
#include <numeric>

#include "egraph/pattern.h"
#include "hlo/attributes.h"
#include "isel/value_range.h"
#include "taidl/ops.h"

namespace tacit::isel {
namespace {

using egraph::AttrMatch;
using egraph::EGraph;
using egraph::Pattern;
using egraph::PatternBuilder;
using egraph::Rewrite;
using egraph::Subst;
using hlo::HloOpcode;

// ---- shared helpers --------------------------------------------------------------------------

const OpDesc& bound(IrBuilder& b, const Pattern& p, const Subst& s, std::string_view var) {
  return b.ir().opDesc(s[p.attrVar(var)]);
}

// A rule example: an HLO module whose entry computation is `body` (instruction lines, each after a
// newline), so each example lists only its instructions.
std::string entryModule(std::string_view body) {
  return "HloModule e\nENTRY m {" + std::string(body) + "}";
}

// The largest tile size below `extent` that divides it, if any.
std::optional<int64_t> tileBelow(const std::set<int64_t>& sizes, int64_t extent) {
  std::optional<int64_t> best;
  for (int64_t s : sizes) {
    if (s > 0 && s < extent && extent % s == 0 && (!best || s > *best)) best = s;
  }
  return best;
}

std::vector<hlo::SliceDim> fullSlice(const hlo::Shape& s) {
  std::vector<hlo::SliceDim> out;
  for (int64_t d : s.dims())
    out.push_back({0, d, 1});
  return out;
}

ClassId sliceDim(IrBuilder& b, ClassId x, int64_t dim, int64_t start, int64_t limit) {
  std::vector<hlo::SliceDim> sl = fullSlice(b.shape(x));
  sl[static_cast<size_t>(dim)] = {start, limit, 1};
  return b.slice(x, sl);
}

// concatenate_dim(part(0, tile), part(tile, 2*tile), ...) over [0, extent), each part also united
// with the same slice of `whole` (so units can match a tile wherever the kernel slices it).
ClassId tiled(IrBuilder& b, ClassId whole, int64_t dim, int64_t extent, int64_t tile,
              const std::function<ClassId(int64_t, int64_t)>& part) {
  std::vector<ClassId> parts;
  for (int64_t at = 0; at < extent; at += tile) {
    ClassId p = part(at, at + tile);
    b.egraph().unite(p, sliceDim(b, whole, dim, at, at + tile));
    parts.push_back(p);
  }
  return b.concatenate(parts, dim);
}

bool plainMatrixDot(const OpDesc& d, const hlo::Shape& a, const hlo::Shape& bshape) {
  const hlo::DotDims& dd = *d.attrs.dot_dims;
  return dd.lhs_batch.empty() && dd.rhs_batch.empty() && dd.lhs_contracting.size() == 1 &&
         dd.rhs_contracting.size() == 1 && a.rank() == 2 && bshape.rank() == 2;
}

// A dot over the same dimension numbers with other operands.
ClassId redot(IrBuilder& b, const OpDesc& d, ClassId lhs, ClassId rhs) {
  return b.dot(lhs, rhs, *d.attrs.dot_dims, d.shape.elementType());
}

Rewrite dotRewrite(
    IrBuilder& b, std::string name,
    std::function<std::optional<ClassId>(const OpDesc&, ClassId, ClassId, ClassId)> apply) {
  PatternBuilder pb(b.ir().lang());
  auto a = pb.var("a"), c = pb.var("b");
  Pattern p = pb.build(pb.node(b.ir().opFor(HloOpcode::kDot), AttrMatch::bind("d"), {a, c}));
  Pattern keep = p;
  // The dot rules read only their match and the operands' types.
  return Rewrite(
             std::move(name), std::move(p),
             [&b, keep, apply](EGraph&, ClassId matched, const Subst& s) -> std::optional<ClassId> {
               const OpDesc& d = bound(b, keep, s, "d");
               return apply(d, matched, s[keep.var("a")], s[keep.var("b")]);
             })
      .reads(egraph::ApplierReads::kMatch);
}

// The operand count of an elementwise operator the IR supports (0: not elementwise).
int elementwiseArity(HloOpcode op) {
  if (op == HloOpcode::kClamp || op == HloOpcode::kSelect) return 3;
  if (op == HloOpcode::kCompare || (hlo::isElementwiseBinary(op) && iselSupports(op))) return 2;
  if (op == HloOpcode::kConvert ||
      (hlo::isElementwiseUnary(op) && iselSupports(op) && op != HloOpcode::kCopy))
    return 1;
  return 0;
}

// A rewrite for each elementwise operator of `ops`, binding its operands x0.. and its desc `e`;
// `reads` is what `apply` reads of the e-graph (egraph::ApplierReads).
Rewrite elementwiseRewrite(
    IrBuilder& b, std::string name, HloOpcode op, egraph::ApplierReads reads,
    std::function<std::optional<ClassId>(const OpDesc&, ClassId, std::vector<ClassId>)> apply) {
  int arity = elementwiseArity(op);
  PatternBuilder pb(b.ir().lang());
  std::vector<PatternBuilder::Ref> kids;
  for (int i = 0; i < arity; ++i)
    kids.push_back(pb.var("x" + std::to_string(i)));
  Pattern p = pb.build(pb.node(b.ir().opFor(op), AttrMatch::bind("e"), kids));
  Pattern keep = p;
  return Rewrite(std::move(name), std::move(p),
                 [&b, keep, arity, apply](EGraph&, ClassId matched,
                                          const Subst& s) -> std::optional<ClassId> {
                   std::vector<ClassId> operands;
                   for (int i = 0; i < arity; ++i)
                     operands.push_back(s[keep.var("x" + std::to_string(i))]);
                   return apply(bound(b, keep, s, "e"), matched, std::move(operands));
                 })
      .reads(reads);
}

// One elementwise rewrite per operator of `by_op` (named after the rule and the operator; each
// reads only its match), whose applier also gets the operator's entry: the rules that reshape or
// tile the operators the units compute, per operator and type.
template <typename Info, typename Apply>
std::vector<Rewrite> elementwisePerOperator(IrBuilder& b, const IrRule& rule,
                                            const std::map<HloOpcode, Info>& by_op, Apply apply) {
  std::vector<Rewrite> out;
  for (const auto& entry : by_op) {
    const Info info = entry.second;  // a named copy: clang 14 cannot capture a structured binding
    out.push_back(elementwiseRewrite(
        b, rule.rewriteName(entry.first), entry.first, egraph::ApplierReads::kMatch,
        [apply, info](const OpDesc& e, ClassId whole, std::vector<ClassId> operands) {
          return apply(e, whole, std::move(operands), info);
        }));
  }
  return out;
}

// The elementwise operator `e` applied to the [start, limit) block of its operands along `dim`
// (scalar operands, as clamp's bounds may be, are shared).
ClassId elementwisePart(IrBuilder& b, const OpDesc& e, const std::vector<ClassId>& operands,
                        int64_t dim, int64_t start, int64_t limit) {
  std::vector<ClassId> args;
  for (ClassId x : operands)
    args.push_back(b.shape(x).rank() == 0 ? x : sliceDim(b, x, dim, start, limit));
  OpDesc part = e;
  std::vector<int64_t> dims = e.shape.dims();
  dims[static_cast<size_t>(dim)] = limit - start;
  part.shape = hlo::Shape(e.shape.elementType(), dims);
  return b.add(std::move(part), args);
}

// ---- dot tiling ------------------------------------------------------------------------------

// dot(a, b) = concatenate(dot(a[rows_i], b) ...) along the result's rows (or columns), each part
// also a slice of the whole: exact for every type (each output element is computed the same way).
class DotSplitFree : public IrRule {
 public:
  explicit DotSplitFree(bool rows)
      : IrRule({.name = rows ? "dot-split-rows" : "dot-split-columns",
                .identity = rows ? "dot(a, b) = concatenate_0(dot(a[i*m:(i+1)*m, :], b) ...), m a "
                                   "unit's dot rows"
                                 : "dot(a, b) = concatenate_1(dot(a, b[:, j*n:(j+1)*n]) ...), n a "
                                   "unit's dot columns",
                .lhs_ops = {HloOpcode::kDot},
                .rhs_ops = {HloOpcode::kDot, HloOpcode::kSlice, HloOpcode::kConcatenate}}),
        rows_(rows) {}
  std::vector<Rewrite> rewrites(IrBuilder& b, const IsaNeeds& needs) const override {
    bool rows = rows_;
    std::set<int64_t> sizes = rows ? needs.dot_rows : needs.dot_cols;
    return {dotRewrite(
        b, name(),
        [&b, rows, sizes](const OpDesc& d, ClassId whole, ClassId x,
                          ClassId y) -> std::optional<ClassId> {
          if (!plainMatrixDot(d, b.shape(x), b.shape(y))) return std::nullopt;
          int64_t extent = d.shape.dim(rows ? 0 : 1);
          auto tile = tileBelow(sizes, extent);
          if (!tile) return std::nullopt;
          const hlo::DotDims& dd = *d.attrs.dot_dims;
          ClassId operand = rows ? x : y;
          int64_t free_dim = 1 - (rows ? dd.lhs_contracting[0] : dd.rhs_contracting[0]);
          return tiled(b, whole, rows ? 0 : 1, extent, *tile, [&](int64_t at, int64_t end) {
            ClassId piece = sliceDim(b, operand, free_dim, at, end);
            return rows ? redot(b, d, piece, y) : redot(b, d, x, piece);
          });
        })};
  }
  std::vector<std::string> examples() const override {
    return {entryModule(R"(
  a = s32[32,8] parameter(0)
  b = s32[8,48] parameter(1)
  ROOT d = s32[32,48] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
)"),
            entryModule(R"(
  a = bf16[8,32] parameter(0)
  b = bf16[48,8] parameter(1)
  ROOT d = bf16[32,48] dot(a, b), lhs_contracting_dims={0}, rhs_contracting_dims={1}
)")};
  }
  IsaNeeds exampleNeeds() const override {
    IsaNeeds n;
    n.dot_rows = {16};
    n.dot_cols = {16};
    return n;
  }

 private:
  bool rows_;
};

// dot(a[m], b) = slice_0(dot(concatenate_0(a, undef[M-m]), b), 0, m) for m rows fewer than every
// unit's dot computes, M the smallest: a unit computes each result row from that row of a alone, so
// whatever the rows after a hold only changes result rows that the slice drops — exact for every
// type (a NaN there stays in its own row). QKV's gemm computes 64 rows; a 16-row product runs on 16
// loaded rows and 48 rows of whatever d1 holds.
class DotPadRows : public IrRule {
 public:
  DotPadRows()
      : IrRule({.name = "dot-pad-rows",
                .identity = "dot(a[m, k], b) = slice(dot(concatenate_0(a, undef[M-m, k]), b), "
                            "[0:m]), m below every unit's dot rows, M the smallest",
                .lhs_ops = {HloOpcode::kDot},
                .rhs_ops = {HloOpcode::kDot, HloOpcode::kSlice, HloOpcode::kConcatenate}}) {}
  std::vector<Rewrite> rewrites(IrBuilder& b, const IsaNeeds& needs) const override {
    std::set<int64_t> sizes = needs.dot_rows;
    std::set<hlo::PrimitiveType> types = needs.dot_types;
    // The rows a padded product needs, if `d` (of operands typed x, y) is one (m below every
    // unit's rows).
    auto padTo = [sizes, types](const OpDesc& d, const hlo::Shape& x,
                                const hlo::Shape& y) -> std::optional<int64_t> {
      // Only a product some unit computes (AVX-512's f32 rank-1 updates are not dots).
      if (!types.count(d.shape.elementType()) || !plainMatrixDot(d, x, y)) return std::nullopt;
      if ((*d.attrs.dot_dims).lhs_contracting[0] != 1) return std::nullopt;  // dot-orient does it
      if (sizes.empty() || *sizes.begin() <= d.shape.dim(0)) return std::nullopt;
      return *sizes.begin();
    };
    // a's rows, then undefined ones up to `rows`.
    auto pad = [&b](ClassId a, int64_t rows) {
      const hlo::Shape t = b.shape(a);  // a copy: adding nodes may move the analysis data
      ClassId rest = b.undef(hlo::Shape(t.elementType(), {rows - t.dim(0), t.dim(1)}));
      return b.concatenate(std::vector<ClassId>{a, rest}, 0);
    };
    std::vector<Rewrite> out;
    out.push_back(
        dotRewrite(b, name(), [&b, padTo, pad](const OpDesc& d, ClassId, ClassId x, ClassId y) {
          std::optional<int64_t> rows = padTo(d, b.shape(x), b.shape(y));
          if (!rows) return std::optional<ClassId>();
          return std::optional<ClassId>(
              sliceDim(b, redot(b, d, pad(x, *rows), y), 0, 0, d.shape.dim(0)));
        }));
    // dot(convert(a), b): padded before the convert as well, so that a unit whose operand is a
    // widened narrow value (Gemmini's s8 rows in the scratchpad, read as s32 by the array) finds
    // one — convert(concatenate(a, undef)) = concatenate(convert(a), convert(undef)), and the
    // padding rows never reach the kept rows.
    PatternBuilder pb(b.ir().lang());
    auto narrow = pb.var("a"), other = pb.var("b");
    Pattern p = pb.build(pb.node(
        b.ir().opFor(HloOpcode::kDot), AttrMatch::bind("d"),
        {pb.node(b.ir().opFor(HloOpcode::kConvert), AttrMatch::bind("c"), {narrow}), other}));
    Pattern keep = p;
    out.push_back(Rewrite(name() + "-before-convert", std::move(p),
                          [&b, keep, padTo, pad](egraph::EGraph&, ClassId,
                                                 const Subst& s) -> std::optional<ClassId> {
                            const OpDesc& d = bound(b, keep, s, "d");
                            ClassId a = s[keep.var("a")], y = s[keep.var("b")];
                            const hlo::PrimitiveType wide =
                                bound(b, keep, s, "c").shape.elementType();
                            std::optional<int64_t> rows =
                                padTo(d, hlo::Shape(wide, b.shape(a).dims()), b.shape(y));
                            if (!rows) return std::nullopt;
                            ClassId padded = b.convert(pad(a, *rows), wide);
                            return sliceDim(b, redot(b, d, padded, y), 0, 0, d.shape.dim(0));
                          })
                      .reads(egraph::ApplierReads::kMatch));
    return out;
  }
  std::vector<std::string> examples() const override {
    return {entryModule(R"(
  a = bf16[5,8] parameter(0)
  b = bf16[8,16] parameter(1)
  ROOT d = bf16[5,16] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
)"),
            entryModule(R"(
  a = s32[3,8] parameter(0)
  b = s32[8,16] parameter(1)
  ROOT d = s32[3,16] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
)"),
            entryModule(R"(
  a = s8[5,8] parameter(0)
  b = s8[8,16] parameter(1)
  wa = s32[5,8] convert(a)
  wb = s32[8,16] convert(b)
  ROOT d = s32[5,16] dot(wa, wb), lhs_contracting_dims={1}, rhs_contracting_dims={0}
)")};
  }
  IsaNeeds exampleNeeds() const override {
    IsaNeeds n;
    n.dot_rows = {16};
    n.dot_types = {hlo::PrimitiveType::kBF16, hlo::PrimitiveType::kS32};
    return n;
  }
};

// Integer dot(a, b) = add(dot(a[:, K-k:K], b[K-k:K, :]), dot(a[:, 0:K-k], b[0:K-k, :])): the last
// k-slice peeled off, so accumulating units match add(dot(tile), rest). Integer addition is
// associative (wrap-around), so this is exact; float sums are not and are never split.
class DotSplitContracting : public IrRule {
 public:
  DotSplitContracting()
      : IrRule({.name = "dot-split-contracting",
                .identity = "dot(a, b) = add(dot(a[:, K-k:], b[K-k:, :]), "
                            "dot(a[:, :K-k], b[:K-k, :])) for integer types, "
                            "k a unit's contracting size",
                .lhs_ops = {HloOpcode::kDot},
                .rhs_ops = {HloOpcode::kDot, HloOpcode::kSlice, HloOpcode::kAdd}}) {}
  std::vector<Rewrite> rewrites(IrBuilder& b, const IsaNeeds& needs) const override {
    std::set<int64_t> sizes = needs.dot_depths;
    return {dotRewrite(
        b, name(),
        [&b, sizes](const OpDesc& d, ClassId, ClassId x, ClassId y) -> std::optional<ClassId> {
          if (!hlo::isInteger(d.shape.elementType()) || !plainMatrixDot(d, b.shape(x), b.shape(y)))
            return std::nullopt;
          const hlo::DotDims& dd = *d.attrs.dot_dims;
          int64_t depth = b.shape(x).dim(dd.lhs_contracting[0]);
          auto tile = tileBelow(sizes, depth);
          if (!tile) return std::nullopt;
          int64_t cut = depth - *tile;
          ClassId last = redot(b, d, sliceDim(b, x, dd.lhs_contracting[0], cut, depth),
                               sliceDim(b, y, dd.rhs_contracting[0], cut, depth));
          ClassId rest = redot(b, d, sliceDim(b, x, dd.lhs_contracting[0], 0, cut),
                               sliceDim(b, y, dd.rhs_contracting[0], 0, cut));
          return b.binary(HloOpcode::kAdd, last, rest);
        })};
  }
  std::vector<std::string> examples() const override {
    return {entryModule(R"(
  a = s32[4,48] parameter(0)
  b = s32[48,4] parameter(1)
  ROOT d = s32[4,4] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
)")};
  }
  IsaNeeds exampleNeeds() const override {
    IsaNeeds n;
    n.dot_depths = {16};
    return n;
  }
};

// dot(a, b) with a contracting over its rows / b over its columns = the standard orientation with
// a transposed operand: the same products summed in the same order, so exact for every type.
class DotOrient : public IrRule {
 public:
  DotOrient()
      : IrRule({.name = "dot-orient",
                .identity = "dot(a, b){lc=0} = dot(transpose(a), b){lc=1}; dot(a, b){rc=1} = "
                            "dot(a, transpose(b)){rc=0}",
                .lhs_ops = {HloOpcode::kDot},
                .rhs_ops = {HloOpcode::kDot, HloOpcode::kTranspose}}) {}
  std::vector<Rewrite> rewrites(IrBuilder& b, const IsaNeeds&) const override {
    return {dotRewrite(
        b, name(), [&b](const OpDesc& d, ClassId, ClassId x, ClassId y) -> std::optional<ClassId> {
          if (!plainMatrixDot(d, b.shape(x), b.shape(y))) return std::nullopt;
          hlo::DotDims dd = *d.attrs.dot_dims;
          if (dd.lhs_contracting[0] == 1 && dd.rhs_contracting[0] == 0) return std::nullopt;
          if (dd.lhs_contracting[0] == 0) x = b.transpose(x, {1, 0});
          if (dd.rhs_contracting[0] == 1) y = b.transpose(y, {1, 0});
          dd.lhs_contracting = {1};
          dd.rhs_contracting = {0};
          return b.dot(x, y, dd, d.shape.elementType());
        })};
  }
  std::vector<std::string> examples() const override {
    return {entryModule(R"(
  a = f32[6,5] parameter(0)
  b = f32[7,6] parameter(1)
  ROOT d = f32[5,7] dot(a, b), lhs_contracting_dims={0}, rhs_contracting_dims={1}
)")};
  }
};

// A dot whose contraction has one term is an outer product: each output element is the sum, from
// +0, of one product (docs/numerics.md), i.e. `x*y + 0`. Adding +0 is what turns a -0 product into
// +0, so it stays in the identity; for integers it is an identity anyway. Only same-type f32/f64
// or integer dots: a narrower float result would round a wider accumulator.
class DotRankOne : public IrRule {
 public:
  DotRankOne()
      : IrRule({.name = "dot-rank-one",
                .identity = "dot(a[m,1], b[1,n]) = add(multiply(broadcast_0(a), broadcast_1(b)), "
                            "broadcast(+0))",
                .lhs_ops = {HloOpcode::kDot},
                .rhs_ops = {HloOpcode::kAdd, HloOpcode::kMultiply, HloOpcode::kBroadcast,
                            HloOpcode::kReshape}}) {}
  std::vector<Rewrite> rewrites(IrBuilder& b, const IsaNeeds&) const override {
    return {dotRewrite(
        b, name(), [&b](const OpDesc& d, ClassId, ClassId x, ClassId y) -> std::optional<ClassId> {
          const hlo::Shape &xs = b.shape(x), &ys = b.shape(y);
          if (!plainMatrixDot(d, xs, ys)) return std::nullopt;
          const hlo::DotDims& dd = *d.attrs.dot_dims;
          if (dd.lhs_contracting[0] != 1 || dd.rhs_contracting[0] != 0 || xs.dim(1) != 1)
            return std::nullopt;
          hlo::PrimitiveType t = d.shape.elementType();
          if (xs.elementType() != t || ys.elementType() != t || !exactOuterProductType(t))
            return std::nullopt;
          int64_t m = xs.dim(0), n = ys.dim(1);
          ClassId rows = b.broadcast(b.reshape(x, {m}), {m, n}, {0});
          ClassId cols = b.broadcast(b.reshape(y, {n}), {m, n}, {1});
          ClassId zero = b.broadcast(b.constant(hlo::Literal(hlo::Shape(t, {}))), {m, n}, {});
          return b.binary(HloOpcode::kAdd, b.binary(HloOpcode::kMultiply, rows, cols), zero);
        })};
  }
  std::vector<std::string> examples() const override {
    // The second example makes -0 products (x * -0): the +0 accumulator start must survive.
    return {entryModule(R"(
  a = f32[32] parameter(0)
  b = f32[14,4] parameter(1)
  row = f32[1,32] reshape(a)
  col = f32[14,1] slice(b), slice={[0:14], [0:1]}
  ROOT d = f32[14,32] dot(col, row), lhs_contracting_dims={1}, rhs_contracting_dims={0}
)"),
            entryModule(R"(
  a = f32[6,1] parameter(0)
  b = f32[1,5] parameter(1)
  z = f32[] constant(-0)
  zs = f32[1,5] broadcast(z), dimensions={}
  nz = f32[1,5] multiply(b, zs)
  ROOT d = f32[6,5] dot(a, nz), lhs_contracting_dims={1}, rhs_contracting_dims={0}
)"),
            entryModule(R"(
  a = s8[3,1] parameter(0)
  b = s8[1,7] parameter(1)
  ROOT d = s8[3,7] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
)")};
  }

 private:
  static bool exactOuterProductType(hlo::PrimitiveType t) {
    return t == hlo::PrimitiveType::kF32 || t == hlo::PrimitiveType::kF64 || hlo::isInteger(t);
  }
};

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

// ---- converts and data movement ---------------------------------------------------------------

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

// ---- clamps and conversions of bounded values ------------------------------------------------

// A scalar constant of type t broadcast to `dims`.
ClassId splat(IrBuilder& b, hlo::PrimitiveType t, double value, const std::vector<int64_t>& dims) {
  hlo::Literal lit{hlo::Shape(t, {})};
  lit.setDouble(0, value);
  return b.broadcast(b.constant(std::move(lit)), dims, {});
}

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

// ---- concatenations ----------------------------------------------------------------------------

struct Cut {
  int64_t dim = -1;
  std::vector<ClassId> parts;
  std::vector<int64_t> bounds;  // part i spans [bounds[i], bounds[i+1]) along dim
};

// A concatenate node of class c, if it has one (the first, deterministically).
std::optional<Cut> concatOf(IrBuilder& b, ClassId c) {
  std::optional<Cut> cut;
  b.egraph().forEachNode(c, [&](NodeId n) {
    if (cut) return;
    egraph::ENode e = b.egraph().node(n);
    if (b.ir().opcodeOf(e.op()) != HloOpcode::kConcatenate || e.arity() < 2) return;
    Cut k;
    k.dim = (*b.ir().opDesc(e.attr()).attrs.dimensions)[0];
    k.bounds.push_back(0);
    for (ClassId part : e.children()) {
      k.parts.push_back(part);
      k.bounds.push_back(k.bounds.back() + b.shape(part).dim(k.dim));
    }
    cut = std::move(k);
  });
  return cut;
}

// e(concatenate(x_i), y) = concatenate(e(x_i, y[slice_i])): an elementwise operator computes each
// element from the elements at the same index.
class ElementwiseOverConcat : public IrRule {
 public:
  ElementwiseOverConcat()
      : IrRule(
            {.name = "elementwise-over-concat",
             .identity =
                 "e(concatenate(x_i), y...) = concatenate(e(x_i, y[slice_i]...)) for elementwise e",
             .lhs_ops = {HloOpcode::kConcatenate},
             .rhs_ops = {HloOpcode::kConcatenate, HloOpcode::kSlice}}) {}
  std::vector<Rewrite> rewrites(IrBuilder& b, const IsaNeeds& needs) const override {
    std::vector<Rewrite> out;
    for (HloOpcode op : needs.ops) {
      if (elementwiseArity(op) == 0) continue;
      out.push_back(
          elementwiseRewrite(b, rewriteName(op), op, egraph::ApplierReads::kSubstNodes,
                             [&b](const OpDesc& e, ClassId, std::vector<ClassId> operands) {
                               return distribute(b, e, operands);
                             }));
    }
    return out;
  }
  std::vector<std::string> examples() const override {
    return {entryModule(R"(
  a = s32[4,3] parameter(0)
  b = s32[4,5] parameter(1)
  c = s32[4,8] concatenate(a, b), dimensions={1}
  d = s32[4,8] parameter(2)
  lo = s32[] constant(-3)
  hi = s32[] constant(40)
  s = s32[4,8] add(c, d)
  ROOT k = s32[4,8] clamp(lo, s, hi)
)")};
  }
  IsaNeeds exampleNeeds() const override {
    IsaNeeds n;
    n.ops = {HloOpcode::kAdd, HloOpcode::kClamp};
    return n;
  }

  static std::optional<ClassId> distribute(IrBuilder& b, const OpDesc& e,
                                           const std::vector<ClassId>& operands) {
    std::optional<Cut> cut;
    for (ClassId x : operands) {
      if (!cut && b.shape(x).rank() > 0) cut = concatOf(b, x);
    }
    if (!cut) return std::nullopt;
    std::vector<ClassId> results;
    for (size_t i = 0; i + 1 < cut->bounds.size(); ++i)
      results.push_back(
          elementwisePart(b, e, operands, cut->dim, cut->bounds[i], cut->bounds[i + 1]));
    return b.concatenate(results, cut->dim);
  }
};

// e(x[n], y[n]...) = concatenate(reshape(e(reshape(x[i*c:(i+1)*c], [1, c]), ...), [c]) ...) with c
// a unit's elementwise column extent for the operator and type (c | n): a vector as rows of a
// unit's width. Slices and reshapes are data movement: exact for every type.
class ElementwiseVectorRows : public IrRule {
 public:
  ElementwiseVectorRows()
      : IrRule({.name = "elementwise-vector-rows",
                .identity = "e(x[n], y[n]...) = concatenate(reshape(e(reshape(x[i*c:(i+1)*c], "
                            "[1, c]), ...)) ...), c a unit's columns",
                .lhs_ops = {},
                .rhs_ops = {HloOpcode::kReshape, HloOpcode::kSlice, HloOpcode::kConcatenate}}) {}
  std::vector<Rewrite> rewrites(IrBuilder& b, const IsaNeeds& needs) const override {
    std::map<HloOpcode, std::map<hlo::PrimitiveType, std::set<int64_t>>> cols;
    for (const auto& [key, extents] : needs.elementwise)
      cols[key.first][key.second] = extents.cols;
    return elementwisePerOperator(
        b, *this, cols,
        [&b](const OpDesc& e, ClassId whole, std::vector<ClassId> operands,
             const std::map<hlo::PrimitiveType, std::set<int64_t>>& by_type)
            -> std::optional<ClassId> {
          auto it = by_type.find(e.shape.elementType());
          if (e.shape.rank() != 1 || it == by_type.end()) return std::nullopt;
          int64_t n = e.shape.dim(0);
          auto width = it->second.count(n) ? std::optional<int64_t>(n) : tileBelow(it->second, n);
          if (!width) return std::nullopt;
          int64_t c = *width;
          auto row = [&](int64_t at, int64_t end) {
            std::vector<ClassId> args;
            for (ClassId x : operands)
              args.push_back(
                  b.shape(x).rank() == 0 ? x : b.reshape(sliceDim(b, x, 0, at, end), {1, c}));
            OpDesc desc = e;
            desc.shape = hlo::Shape(e.shape.elementType(), {1, c});
            return b.reshape(b.add(std::move(desc), args), {c});
          };
          return c == n ? row(0, n) : tiled(b, whole, 0, n, c, row);
        });
  }
  std::vector<std::string> examples() const override {
    return {entryModule(R"(
  a = f32[48] parameter(0)
  b = f32[48] parameter(1)
  ROOT s = f32[48] subtract(a, b)
)"),
            entryModule(R"(
  a = f32[16] parameter(0)
  b = f32[16] parameter(1)
  ROOT s = f32[16] subtract(a, b)
)")};
  }
  IsaNeeds exampleNeeds() const override {
    IsaNeeds n;
    n.ops = {HloOpcode::kSubtract};
    n.elementwise[{HloOpcode::kSubtract, hlo::PrimitiveType::kF32}] = IsaNeeds::Extents{{1}, {16}};
    return n;
  }
};

// e(x, y...) = reshape(e(reshape(x, [N]), reshape(y, [N])...), dims(x)), N the element count:
// exact for every type (each element is computed from the elements at its index, and a reshape
// keeps the row-major order; scalar operands, as clamp's bounds may be, are shared). It lets units
// whose semantics is a flat vector (Gemmini's HBM-to-HBM `add` over rows * cols bytes) compute
// matrices.
class ElementwiseFlatten : public IrRule {
 public:
  ElementwiseFlatten()
      : IrRule({.name = "elementwise-flatten",
                .identity = "e(x, y...) = reshape(e(reshape(x, [N]), reshape(y, [N])...), "
                            "dims(x)), N the element count, e a unit's rank-1 operator",
                .lhs_ops = {},
                .rhs_ops = {HloOpcode::kReshape}}) {}
  std::vector<Rewrite> rewrites(IrBuilder& b, const IsaNeeds& needs) const override {
    std::map<HloOpcode, std::set<hlo::PrimitiveType>> types;
    for (const auto& [op, type] : needs.flat_elementwise)
      types[op].insert(type);
    return elementwisePerOperator(
        b, *this, types,
        [&b](const OpDesc& e, ClassId, std::vector<ClassId> operands,
             const std::set<hlo::PrimitiveType>& flat_types) -> std::optional<ClassId> {
          if (e.shape.rank() < 2 || flat_types.count(e.shape.elementType()) == 0)
            return std::nullopt;
          int64_t n = e.shape.elementCount();
          std::vector<ClassId> args;
          for (ClassId x : operands)
            args.push_back(b.shape(x).rank() == 0 ? x : b.reshape(x, {n}));
          OpDesc flat = e;
          flat.shape = hlo::Shape(e.shape.elementType(), {n});
          return b.reshape(b.add(std::move(flat), args), e.shape.dims());
        });
  }
  std::vector<std::string> examples() const override {
    return {entryModule(R"(
  a = s8[4,6] parameter(0)
  b = s8[4,6] parameter(1)
  ROOT s = s8[4,6] add(a, b)
)"),
            entryModule(R"(
  a = f32[2,3,4] parameter(0)
  lo = f32[] parameter(1)
  hi = f32[] parameter(2)
  ROOT c = f32[2,3,4] clamp(lo, a, hi)
)")};
  }
  IsaNeeds exampleNeeds() const override {
    IsaNeeds n;
    n.ops = {HloOpcode::kAdd, HloOpcode::kClamp};
    n.flat_elementwise = {{HloOpcode::kAdd, hlo::PrimitiveType::kS8},
                          {HloOpcode::kClamp, hlo::PrimitiveType::kF32}};
    return n;
  }
};

// e(x, y) = concatenate_d(e(x[block_i], y[block_i]) ...) along the rows (d = 0) or columns (d = 1),
// in blocks of a unit's elementwise extent, each part also a slice of the whole: exact for every
// type (each element is computed from the elements at its index). It lets units that work on one
// row or one vector (AVX-512's f32[1,16]) compute whole matrices.
class ElementwiseSplit : public IrRule {
 public:
  explicit ElementwiseSplit(bool rows)
      : IrRule({.name = rows ? "elementwise-split-rows" : "elementwise-split-columns",
                .identity = std::string("e(x, y...) = concatenate_") + (rows ? "0" : "1") +
                            "(e(x[block_i], y[block_i]...) ...), blocks of a unit's elementwise " +
                            (rows ? "rows" : "columns"),
                .lhs_ops = {},
                .rhs_ops = {HloOpcode::kConcatenate, HloOpcode::kSlice}}),
        rows_(rows) {}
  std::vector<Rewrite> rewrites(IrBuilder& b, const IsaNeeds& needs) const override {
    int64_t dim = rows_ ? 0 : 1;
    std::map<HloOpcode, std::map<hlo::PrimitiveType, std::set<int64_t>>> sizes;
    for (const auto& [key, extents] : needs.elementwise)
      sizes[key.first][key.second] = rows_ ? extents.rows : extents.cols;
    return elementwisePerOperator(
        b, *this, sizes,
        [&b, dim](const OpDesc& e, ClassId whole, std::vector<ClassId> operands,
                  const std::map<hlo::PrimitiveType, std::set<int64_t>>& sizes_of)
            -> std::optional<ClassId> {
          auto it = sizes_of.find(e.shape.elementType());
          if (e.shape.rank() != 2 || it == sizes_of.end() || it->second.empty())
            return std::nullopt;
          const std::set<int64_t>& unit_sizes = it->second;
          int64_t extent = e.shape.dim(dim);
          // Only beyond every unit's extent: within it a unit may take the whole.
          if (extent <= *unit_sizes.rbegin()) return std::nullopt;
          auto tile = tileBelow(unit_sizes, extent);
          if (!tile) return std::nullopt;
          return tiled(b, whole, dim, extent, *tile, [&](int64_t at, int64_t end) {
            return elementwisePart(b, e, operands, dim, at, end);
          });
        });
  }
  std::vector<std::string> examples() const override {
    return {entryModule(R"(
  a = f32[3,32] parameter(0)
  b = f32[3,32] parameter(1)
  s = f32[3,32] multiply(a, b)
  lo = f32[] constant(-1)
  hi = f32[] constant(2)
  ROOT k = f32[3,32] clamp(lo, s, hi)
)"),
            entryModule(R"(
  a = s8[4,48] parameter(0)
  b = s8[4,48] parameter(1)
  ROOT s = s8[4,48] add(a, b)
)")};
  }
  IsaNeeds exampleNeeds() const override {
    IsaNeeds n;
    n.ops = {HloOpcode::kAdd, HloOpcode::kMultiply, HloOpcode::kClamp};
    for (auto op : n.ops) {
      for (auto t : {hlo::PrimitiveType::kF32, hlo::PrimitiveType::kS8})
        n.elementwise[{op, t}] = IsaNeeds::Extents{{1}, {16}};
    }
    return n;
  }

 private:
  bool rows_;
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

std::vector<std::unique_ptr<IrRule>> makeLibrary() {
  std::vector<std::unique_ptr<IrRule>> rules;
  rules.push_back(std::make_unique<DotSplitFree>(true));
  rules.push_back(std::make_unique<DotSplitFree>(false));
  rules.push_back(std::make_unique<DotSplitContracting>());
  rules.push_back(std::make_unique<DotPadRows>());
  rules.push_back(std::make_unique<DotOrient>());
  rules.push_back(std::make_unique<DotRankOne>());
  rules.push_back(std::make_unique<MovementThroughConvert>());
  rules.push_back(std::make_unique<ClampMinMax>());
  rules.push_back(std::make_unique<RoundIntegral>());
  rules.push_back(std::make_unique<ConvertGuardedS32>());
  rules.push_back(std::make_unique<ConvertNarrowSignedness>());
  rules.push_back(std::make_unique<SliceOfBroadcast>());
  rules.push_back(std::make_unique<ElementwiseOverConcat>());
  rules.push_back(std::make_unique<ElementwiseSplit>(true));
  rules.push_back(std::make_unique<ElementwiseSplit>(false));
  rules.push_back(std::make_unique<ElementwiseVectorRows>());
  rules.push_back(std::make_unique<ElementwiseFlatten>());
  rules.push_back(std::make_unique<FlattenOverConcat>());
  rules.push_back(std::make_unique<MovementOverConcat>());
  return rules;
}

}  // namespace

std::string IrRule::rewriteName(HloOpcode op) const {
  return name() + "-" + std::string(hlo::opcodeName(op));
}

IsaNeeds analyzeIsa(const taidl::Isa&, const UnitSet& units) {
  IsaNeeds needs;
  for (const UnitPattern& p : units.patterns) {
    const Unit& u = units.units[static_cast<size_t>(p.unit)];
    // A unit that computes one elementwise operator over a flat vector (only its root: operators
    // inside a larger computation, as a layernorm's, would flatten every kernel's operators for
    // nothing).
    const PatternNode& top = p.nodes[static_cast<size_t>(p.skeleton_root)];
    const taidl::SymOp& top_op = p.sym->ops[static_cast<size_t>(top.op)];
    if (top.input < 0 && elementwiseArity(top_op.opcode) != 0 && top_op.type.dims.size() == 1)
      needs.flat_elementwise.insert({top_op.opcode, top_op.type.dtype});
    for (const PatternNode& n : p.nodes) {
      const taidl::SymOp& op = p.sym->ops[static_cast<size_t>(n.op)];
      if (n.input >= 0) continue;
      needs.ops.insert(op.opcode);
      if (elementwiseArity(op.opcode) != 0 && op.type.dims.size() == 2) {
        IsaNeeds::Extents& e = needs.elementwise[{op.opcode, op.type.dtype}];
        if (auto r = largestOverAlpha(op.type.dims[0], u)) e.rows.insert(*r);
        if (auto c = largestOverAlpha(op.type.dims[1], u)) e.cols.insert(*c);
      }
      if (op.opcode != HloOpcode::kDot || op.type.dims.size() != 2 || n.children.size() != 2)
        continue;
      if (auto r = largestOverAlpha(op.type.dims[0], u)) needs.dot_rows.insert(*r);
      if (auto c = largestOverAlpha(op.type.dims[1], u)) needs.dot_cols.insert(*c);
      needs.dot_types.insert(op.type.dtype);
      const taidl::SymOp& lhs =
          p.sym->ops[static_cast<size_t>(p.nodes[static_cast<size_t>(n.children[0])].op)];
      if (lhs.type.dims.size() == 2) {
        if (auto k = largestOverAlpha(lhs.type.dims[1], u)) needs.dot_depths.insert(*k);
      }
    }
  }
  return needs;
}

const std::vector<std::unique_ptr<IrRule>>& ruleLibrary() {
  static const std::vector<std::unique_ptr<IrRule>> rules = makeLibrary();
  return rules;
}

std::vector<const IrRule*> selectRules(const IsaNeeds& needs) {
  std::set<HloOpcode> used = needs.ops;
  std::vector<bool> chosen(ruleLibrary().size(), false);
  bool changed = true;
  while (changed) {
    changed = false;
    for (size_t i = 0; i < ruleLibrary().size(); ++i) {
      if (chosen[i]) continue;
      const IrRule& r = *ruleLibrary()[i];
      const std::vector<HloOpcode>& rhs = r.rhsOps();
      bool produces_used =
          std::any_of(rhs.begin(), rhs.end(), [&](HloOpcode op) { return used.count(op) != 0; });
      if (!produces_used) continue;
      chosen[i] = true;
      changed = true;
      for (HloOpcode op : r.lhsOps())
        used.insert(op);
    }
  }
  std::vector<const IrRule*> out;
  for (size_t i = 0; i < chosen.size(); ++i) {
    if (chosen[i]) out.push_back(ruleLibrary()[i].get());
  }
  return out;
}

}  // namespace tacit::isel
