// IR→IR rules for dots (rules.h): tiling a dot into the row, column and contraction extents the
// ISA's units compute, padding short row counts, turning the contraction to the units'
// orientation, and rewriting a rank-one contraction as a broadcast product.
#include "isel/rules_shared.h"

#include <algorithm>
#include <numeric>

namespace tacit::isel {
namespace {

using namespace rules_shared;

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

}  // namespace

std::unique_ptr<IrRule> makeDotSplitFree(bool rows) {
  return std::make_unique<DotSplitFree>(rows);
}
std::unique_ptr<IrRule> makeDotSplitContracting() {
  return std::make_unique<DotSplitContracting>();
}
std::unique_ptr<IrRule> makeDotPadRows() {
  return std::make_unique<DotPadRows>();
}
std::unique_ptr<IrRule> makeDotOrient() {
  return std::make_unique<DotOrient>();
}
std::unique_ptr<IrRule> makeDotRankOne() {
  return std::make_unique<DotRankOne>();
}

}  // namespace tacit::isel
