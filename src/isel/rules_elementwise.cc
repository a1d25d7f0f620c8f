// IR→IR rules for elementwise operators (rules.h): distributing one over a concatenation, and
// splitting, flattening or cutting into rows the operators the ISA's units compute at a smaller
// extent or over a flat vector.
#include "isel/rules_shared.h"

#include <algorithm>
#include <numeric>

namespace tacit::isel {
namespace {

using namespace rules_shared;

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

}  // namespace

std::unique_ptr<IrRule> makeElementwiseOverConcat() {
  return std::make_unique<ElementwiseOverConcat>();
}
std::unique_ptr<IrRule> makeElementwiseSplit(bool rows) {
  return std::make_unique<ElementwiseSplit>(rows);
}
std::unique_ptr<IrRule> makeElementwiseVectorRows() {
  return std::make_unique<ElementwiseVectorRows>();
}
std::unique_ptr<IrRule> makeElementwiseFlatten() {
  return std::make_unique<ElementwiseFlatten>();
}

}  // namespace tacit::isel
