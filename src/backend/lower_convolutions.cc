#include "backend/lower_convolutions.h"

#include <algorithm>
#include <numeric>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "hlo/builder.h"
#include "hlo/parser.h"
#include "hlo/printer.h"

namespace tacit::backend {

using hlo::HloBuilder;
using hlo::HloInstruction;
using hlo::HloOpcode;

bool isLowerableConvolution(const HloInstruction& conv) {
  if (conv.opcode() != HloOpcode::kConvolution || conv.operandCount() != 2) return false;
  const hlo::HloAttributes& a = conv.attrs();
  if (!a.conv_dims || a.batch_group_count.value_or(1) != 1) return false;
  const hlo::Shape& in = conv.operand(0)->shape();
  const hlo::Shape& k = conv.operand(1)->shape();
  const hlo::Shape& out = conv.shape();
  if (!in.isArray() || !k.isArray() || !out.isArray()) return false;
  if (in.isDynamic() || k.isDynamic() || out.isDynamic()) return false;
  if (in.elementType() != k.elementType()) return false;
  // An empty tensor has nothing to multiply; the evaluator's convolution handles it as it is.
  if (in.elementCount() == 0 || k.elementCount() == 0 || out.elementCount() == 0) return false;
  const size_t spatial = a.conv_dims->input_spatial.size();
  return a.window ? a.window->size() == spatial : spatial == 0;
}

namespace {

// Whether every value of `from` is exactly a value of `to`, so that widening a dot's operands to
// its result type first changes nothing: the evaluator widens each operand to the accumulation
// type before it multiplies (docs/numerics.md).
bool widensExactly(hlo::PrimitiveType from, hlo::PrimitiveType to) {
  if (hlo::isInteger(from) && hlo::isInteger(to))
    return hlo::bitWidth(to) > hlo::bitWidth(from) &&
           (hlo::isSignedInteger(to) || hlo::isUnsignedInteger(from));
  if (hlo::isFloat(from) && hlo::isFloat(to)) return hlo::bitWidth(to) > hlo::bitWidth(from);
  return hlo::isInteger(from) && hlo::bitWidth(from) <= 8 && hlo::isFloat(to) &&
         hlo::bitWidth(to) >= 32;
}

bool isIdentity(const std::vector<int64_t>& permutation) {
  for (size_t i = 0; i < permutation.size(); ++i)
    if (permutation[i] != static_cast<int64_t>(i)) return false;
  return true;
}

int64_t product(const std::vector<int64_t>& dims) {
  return std::accumulate(dims.begin(), dims.end(), int64_t{1}, std::multiplies<>());
}

// A reshape (to `dims`) or a transpose (by `dims`) of a GEMM's result.
struct LayoutStep {
  bool transpose = false;
  std::vector<int64_t> dims;
};

struct Lowered {
  // The GEMMs: one, or one per block of channels (their results side by side in the last
  // dimension make one).
  std::vector<HloInstruction*> parts;
  std::vector<LayoutStep> tail;  // applied to the parts' result, they give the convolution's
};

// Emits one convolution's rewrite into `b`, names unique in the computation from `fresh`.
class ConvolutionRewrite {
 public:
  ConvolutionRewrite(HloBuilder& b, std::unordered_set<std::string>& used,
                     const ConvolutionLowering& options)
      : b_(b), used_(used), options_(options) {}

  // The GEMM computing `conv`, and the layout steps that make its result the convolution's.
  Lowered lower(const HloInstruction& conv, HloInstruction* input, HloInstruction* kernel);
  std::string fresh(const std::string& base) {
    std::string name = base;
    for (int i = 1; used_.count(name); ++i)
      name = base + "." + std::to_string(i);
    used_.insert(name);
    return name;
  }

 private:
  HloInstruction* transposed(HloInstruction* x, const std::vector<int64_t>& permutation,
                             const std::string& name) {
    return isIdentity(permutation) ? x : b_.transpose(x, permutation, fresh(name));
  }
  HloInstruction* reshaped(HloInstruction* x, std::vector<int64_t> dims, const std::string& name) {
    return x->shape().dims() == dims ? x : b_.reshape(x, std::move(dims), fresh(name));
  }
  HloInstruction* zero(hlo::PrimitiveType type, const std::string& base) {
    return b_.constant(hlo::scalarLiteral(type, 0), fresh(base + ".zero"));
  }
  // `x` with `extra` zeros after the end of dimension `dim`.
  HloInstruction* paddedAt(HloInstruction* x, int64_t dim, int64_t extra, const std::string& base) {
    std::vector<hlo::PadDim> padding(static_cast<size_t>(x->shape().rank()));
    padding[static_cast<size_t>(dim)].hi = extra;
    return b_.pad(x, zero(x->shape().elementType(), base), std::move(padding),
                  fresh(base + ".padded"));
  }
  // dot(lhs, rhs) in `type`, its contraction padded to the units' depth, its operands widened.
  HloInstruction* gemm(HloInstruction* lhs, HloInstruction* rhs, const hlo::DotDims& dims,
                       hlo::PrimitiveType type, const std::string& name);
  // A depthwise kernel [T..., 1, C] as `blocks` block-diagonal matrices [T x block, block]: row
  // (t, i) and column j of block k hold the tap t weight of channel k*block + j where i == j, and
  // zeros elsewhere.
  HloInstruction* diagonalBlocks(HloInstruction* w, int64_t taps, int64_t blocks, int64_t block,
                                 const std::string& base);
  // [N, S..., C] padded by the window's padding and lhs dilation; `offset` receives, per spatial
  // dimension, where the window's first position is (negative padding crops).
  HloInstruction* padded(HloInstruction* x, const std::vector<hlo::WindowDim>& window,
                         std::vector<int64_t>& offset, const std::string& base);
  // The im2col matrix [N, O..., taps x C] (tap major, feature minor).
  HloInstruction* im2col(HloInstruction* x, const std::vector<hlo::WindowDim>& window,
                         const std::vector<int64_t>& out_spatial, const std::string& base);

  HloBuilder& b_;
  std::unordered_set<std::string>& used_;
  const ConvolutionLowering& options_;
};

HloInstruction* ConvolutionRewrite::padded(HloInstruction* x,
                                           const std::vector<hlo::WindowDim>& window,
                                           std::vector<int64_t>& offset, const std::string& base) {
  const size_t spatial = window.size();
  std::vector<hlo::PadDim> padding(spatial + 2);
  bool any = false;
  offset.assign(spatial, 0);
  for (size_t d = 0; d < spatial; ++d) {
    const hlo::WindowDim& w = window[d];
    padding[d + 1] = {std::max<int64_t>(w.pad_lo, 0), std::max<int64_t>(w.pad_hi, 0),
                      w.lhs_dilation - 1};
    offset[d] = std::max<int64_t>(-w.pad_lo, 0);
    any = any || padding[d + 1] != hlo::PadDim{};
  }
  if (!any) return x;
  return b_.pad(x, zero(x->shape().elementType(), base), std::move(padding),
                fresh(base + ".padded"));
}

HloInstruction* ConvolutionRewrite::im2col(HloInstruction* x,
                                           const std::vector<hlo::WindowDim>& window,
                                           const std::vector<int64_t>& out_spatial,
                                           const std::string& base) {
  std::vector<int64_t> offset;
  HloInstruction* p = padded(x, window, offset, base);
  const std::vector<int64_t>& dims = p->shape().dims();
  const size_t spatial = window.size();
  std::vector<int64_t> taps(spatial);
  for (size_t d = 0; d < spatial; ++d)
    taps[d] = window[d].size;
  const int64_t count = product(taps);
  std::vector<HloInstruction*> columns;
  std::vector<int64_t> tap(spatial, 0);  // row-major over the window, the last dimension fastest
  for (int64_t t = 0; t < count; ++t) {
    std::vector<int64_t> starts(dims.size(), 0), limits = dims, strides(dims.size(), 1);
    for (size_t d = 0; d < spatial; ++d) {
      starts[d + 1] = offset[d] + tap[d] * window[d].rhs_dilation;
      strides[d + 1] = window[d].stride;
      limits[d + 1] = starts[d + 1] + (out_spatial[d] - 1) * window[d].stride + 1;
    }
    const bool whole =
        std::all_of(starts.begin(), starts.end(), [](int64_t s) { return s == 0; }) &&
        limits == dims &&
        std::all_of(strides.begin(), strides.end(), [](int64_t s) { return s == 1; });
    columns.push_back(whole ? p
                            : b_.slice(p, std::move(starts), std::move(limits), std::move(strides),
                                       fresh(base + ".tap" + std::to_string(t))));
    for (size_t d = spatial; d-- > 0;) {
      if (++tap[d] < taps[d]) break;
      tap[d] = 0;
    }
  }
  if (columns.size() == 1) return columns[0];
  return b_.concatenate(std::move(columns), static_cast<int64_t>(spatial) + 1,
                        fresh(base + ".im2col"));
}

HloInstruction* ConvolutionRewrite::diagonalBlocks(HloInstruction* w, int64_t taps, int64_t blocks,
                                                   int64_t block, const std::string& base) {
  const std::string name = base + ".rhs";
  HloInstruction* v = reshaped(w, {taps, blocks, block}, name);
  v = b_.transpose(v, {1, 0, 2}, fresh(name));
  const std::vector<int64_t> square{blocks, taps, block, block};
  HloInstruction* spread = b_.broadcast(v, square, {0, 1, 3}, fresh(name + ".spread"));
  const hlo::Shape index(hlo::PrimitiveType::kS32, square);
  HloInstruction* on_diagonal = b_.compare(
      b_.iota(index, 2, fresh(name + ".row")), b_.iota(index, 3, fresh(name + ".column")),
      hlo::ComparisonDirection::kEq, std::nullopt, fresh(name + ".diagonal"));
  HloInstruction* zeros =
      b_.broadcast(zero(w->shape().elementType(), name), square, {}, fresh(name + ".zeros"));
  HloInstruction* diagonal = b_.select(on_diagonal, spread, zeros, fresh(name + ".blocks"));
  return reshaped(diagonal, {blocks, taps * block, block}, name);
}

Lowered ConvolutionRewrite::lower(const HloInstruction& conv, HloInstruction* input,
                                  HloInstruction* kernel) {
  const hlo::HloAttributes& a = conv.attrs();
  const hlo::ConvDims& cd = *a.conv_dims;
  const std::vector<hlo::WindowDim> window = a.window.value_or(std::vector<hlo::WindowDim>{});
  const size_t spatial = window.size();
  const std::string& name = conv.name();
  const hlo::Shape& out = conv.shape();

  // The input as [N, S..., C] and the kernel as [K..., C/G, F].
  std::vector<int64_t> in_order{cd.input_batch};
  in_order.insert(in_order.end(), cd.input_spatial.begin(), cd.input_spatial.end());
  in_order.push_back(cd.input_feature);
  HloInstruction* x = transposed(input, in_order, name + ".input");
  std::vector<int64_t> k_order = cd.kernel_spatial;
  k_order.push_back(cd.kernel_input_feature);
  k_order.push_back(cd.kernel_output_feature);
  HloInstruction* w = transposed(kernel, k_order, name + ".kernel");
  std::vector<int64_t> reversed;
  for (size_t d = 0; d < spatial; ++d)
    if (window[d].reversal) reversed.push_back(static_cast<int64_t>(d));
  if (!reversed.empty()) w = b_.reverse(w, reversed, fresh(name + ".reversed"));

  const int64_t n = x->shape().dim(0);
  const int64_t c = x->shape().dim(static_cast<int64_t>(spatial) + 1);
  const int64_t f = out.dim(cd.output_feature);
  const int64_t groups = a.feature_group_count.value_or(1);
  std::vector<int64_t> out_spatial, taps;
  for (size_t d = 0; d < spatial; ++d) {
    out_spatial.push_back(out.dim(cd.output_spatial[d]));
    taps.push_back(window[d].size);
  }
  const int64_t rows = n * product(out_spatial), depth = product(taps) * c;
  HloInstruction* cols = im2col(x, window, out_spatial, name);

  // One GEMM [rows, depth] x [depth, F], or one per feature group as a batched dot (per block of
  // channels, for an integer depthwise convolution the ISA's units are wider than).
  const int64_t tap_count = product(taps);
  const bool diagonal = groups > 1 && groups == c && f == c && options_.block > 1 &&
                        c % options_.block == 0 && hlo::isInteger(out.elementType()) &&
                        hlo::isInteger(x->shape().elementType());
  // The result as [N, O..., F], then in the convolution's dimension order: the layout steps
  // after the GEMM, which the rebuild applies where a user needs the convolution's shape.
  std::vector<int64_t> order{cd.output_batch};  // the convolution's dimension of each
  order.insert(order.end(), cd.output_spatial.begin(), cd.output_spatial.end());
  order.push_back(cd.output_feature);
  std::vector<int64_t> permutation(order.size());
  for (size_t i = 0; i < order.size(); ++i)
    permutation[static_cast<size_t>(order[i])] = static_cast<int64_t>(i);
  std::vector<int64_t> nof{n};
  nof.insert(nof.end(), out_spatial.begin(), out_spatial.end());
  nof.push_back(f);
  Lowered lowered;
  const bool batched = groups > 1 && !diagonal;
  if (batched) lowered.tail.push_back({true, {1, 0, 2}});
  if (batched || nof != std::vector<int64_t>{rows, f}) lowered.tail.push_back({false, nof});
  if (!isIdentity(permutation)) lowered.tail.push_back({true, permutation});
  const std::string gemm_name = lowered.tail.empty() && !diagonal ? name : name + ".gemm";

  hlo::DotDims dims;
  if (groups == 1) {
    dims.lhs_contracting = {1};
    dims.rhs_contracting = {0};
    lowered.parts.push_back(gemm(reshaped(cols, {rows, depth}, name + ".lhs"),
                                 reshaped(w, {depth, f}, name + ".rhs"), dims, out.elementType(),
                                 gemm_name));
  } else if (diagonal) {
    // One GEMM per block of channels, side by side in the result's last dimension.
    const int64_t block = options_.block, blocks = c / block;
    dims.lhs_contracting = {1};
    dims.rhs_contracting = {0};
    HloInstruction* taps_by_channel = reshaped(cols, {rows, tap_count, c}, name + ".lhs");
    HloInstruction* diagonal_blocks = diagonalBlocks(w, tap_count, blocks, block, name);
    for (int64_t j = 0; j < blocks; ++j) {
      const std::string part = name + ".block" + std::to_string(j);
      HloInstruction* lhs = b_.slice(taps_by_channel, {0, 0, j * block},
                                     {rows, tap_count, (j + 1) * block}, {}, fresh(part + ".lhs"));
      HloInstruction* rhs = b_.slice(diagonal_blocks, {j, 0, 0}, {j + 1, tap_count * block, block},
                                     {}, fresh(part + ".rhs"));
      lowered.parts.push_back(gemm(reshaped(lhs, {rows, tap_count * block}, part + ".lhs"),
                                   reshaped(rhs, {tap_count * block, block}, part + ".rhs"), dims,
                                   out.elementType(), part + ".gemm"));
    }
  } else {
    const int64_t cg = c / groups, fg = f / groups;
    HloInstruction* lhs = reshaped(cols, {rows, tap_count, groups, cg}, name + ".lhs");
    lhs = b_.transpose(lhs, {2, 0, 1, 3}, fresh(name + ".lhs"));
    lhs = reshaped(lhs, {groups, rows, tap_count * cg}, name + ".lhs");
    HloInstruction* rhs = reshaped(w, {tap_count, cg, groups, fg}, name + ".rhs");
    rhs = b_.transpose(rhs, {2, 0, 1, 3}, fresh(name + ".rhs"));
    rhs = reshaped(rhs, {groups, tap_count * cg, fg}, name + ".rhs");
    dims.lhs_batch = {0};
    dims.rhs_batch = {0};
    dims.lhs_contracting = {2};
    dims.rhs_contracting = {1};
    lowered.parts.push_back(gemm(lhs, rhs, dims, out.elementType(), gemm_name));
  }
  return lowered;
}

HloInstruction* ConvolutionRewrite::gemm(HloInstruction* lhs, HloInstruction* rhs,
                                         const hlo::DotDims& dims, hlo::PrimitiveType type,
                                         const std::string& name) {
  // The contraction padded with zeros in both operands to the ISA's depth: the added products
  // are +0 x +0 = +0, summed last, which changes no sum (integer or float: a sum that starts at +0
  // is never -0, and s + +0 == s).
  const int64_t k_dim = dims.lhs_contracting[0], depth = lhs->shape().dim(k_dim);
  if (options_.depth_multiple > 1 && depth % options_.depth_multiple != 0) {
    const int64_t extra = options_.depth_multiple - depth % options_.depth_multiple;
    lhs = paddedAt(lhs, k_dim, extra, name + ".lhs");
    rhs = paddedAt(rhs, dims.rhs_contracting[0], extra, name + ".rhs");
  }
  // The operands widened to the result type as the compiler's GEMMs are written (an int8 GEMM is
  // a dot of converted int8 values); a dot of mixed types where widening is not exact.
  if (widensExactly(lhs->shape().elementType(), type)) {
    lhs = b_.convert(lhs, type, fresh(name + ".lhs.wide"));
    rhs = b_.convert(rhs, type, fresh(name + ".rhs.wide"));
  }
  return b_.dot(lhs, rhs, dims, type, used_.count(name) ? fresh(name) : (used_.insert(name), name));
}

}  // namespace

namespace {

// A value of the old entry not yet built in the new one: its parts side by side in the last
// dimension, with `tail` applied, are its value.
struct Deferred {
  std::vector<HloInstruction*> parts;
  std::vector<LayoutStep> tail;
};

bool isMovableElementwise(const HloInstruction& op) {
  switch (hlo::opcodeCategory(op.opcode())) {
    case hlo::OpcodeCategory::kUnary:
    case hlo::OpcodeCategory::kTranscendental:
    case hlo::OpcodeCategory::kBinary:
    case hlo::OpcodeCategory::kComparison:
    case hlo::OpcodeCategory::kTernary:
      return op.shape().isArray();
    case hlo::OpcodeCategory::kConversion:
      return op.opcode() == HloOpcode::kConvert || op.opcode() == HloOpcode::kReducePrecision;
    default:
      return false;
  }
}

// The entry rebuilt with its convolutions rewritten. A convolution's GEMM result keeps its GEMM
// shape through the elementwise operations that follow it (an epilogue: bias, clamp, convert),
// and the layout steps to the convolution's shape come after them: elementwise operations
// commute with reshapes and transposes, and an ISA computes a GEMM with its epilogue, not a GEMM
// whose result is reshaped between the two (Gemmini saturates its sums as it moves them out).
class EntryRebuild {
 public:
  EntryRebuild(const hlo::HloComputation& entry, const hlo::HloComputation& original,
               const ConvolutionLowering& options)
      : entry_(entry), b_(entry.name()), rewrite_(b_, used_, options) {
    for (const auto& inst : entry.instructions())
      used_.insert(inst->name());
    for (const auto& inst : original.instructions())
      loc_[inst->name()] = inst->loc();
  }

  std::unique_ptr<hlo::HloComputation> run() {
    for (const auto& inst : entry_.instructions())
      add(*inst);
    for (const auto& inst : entry_.instructions()) {
      for (HloInstruction* p : inst->controlPredecessors())
        value(inst.get())->controlPredecessors().push_back(value(p));
    }
    return b_.build(value(entry_.root()));
  }
  std::unordered_set<const HloInstruction*> gemms;
  // The data movement around them: im2col, the kernel's matrix, the steps to the result's shape.
  std::unordered_set<const HloInstruction*> layout;

 private:
  void add(const HloInstruction& inst) {
    if (isLowerableConvolution(inst)) {
      const size_t before = b_.computation().instructions().size();
      Lowered l = rewrite_.lower(inst, value(inst.operand(0)), value(inst.operand(1)));
      const std::unordered_set<const HloInstruction*> parts(l.parts.begin(), l.parts.end());
      const auto& made = b_.computation().instructions();
      for (size_t i = before; i < made.size(); ++i) {
        if (!parts.count(made[i].get()) && made[i]->opcode() != HloOpcode::kConvert)
          layout.insert(made[i].get());
      }
      for (HloInstruction* part : l.parts) {
        gemms.insert(part);
        part->setLoc(loc_[inst.name()]);
      }
      if (l.tail.empty() && l.parts.size() == 1) {
        to_new_[&inst] = l.parts[0];
      } else {
        deferred_[&inst] = {std::move(l.parts), std::move(l.tail)};
      }
      return;
    }
    if (moved(inst)) return;
    std::vector<HloInstruction*> operands;
    for (const HloInstruction* o : inst.operands())
      operands.push_back(value(o));
    to_new_[&inst] = b_.clone(inst, std::move(operands));
  }

  // `inst` computed on a deferred operand's GEMM-shaped parts, itself deferred: when it is
  // elementwise, one operand is deferred and each other one is a scalar or a broadcast the GEMM
  // shape can express (of a scalar; of a vector along the last dimension, when the layout steps
  // only reshape and keep that dimension; each part takes its columns of the vector).
  bool moved(const HloInstruction& inst) {
    if (!isMovableElementwise(inst)) return false;
    const Deferred* from = nullptr;
    for (const HloInstruction* o : inst.operands()) {
      auto it = deferred_.find(o);
      if (it == deferred_.end()) continue;
      if (from) return false;
      from = &it->second;
    }
    if (!from) return false;
    int64_t width = 0;  // of the parts side by side
    for (const HloInstruction* part : from->parts)
      width += part->shape().dims().back();
    const bool last_kept = std::none_of(from->tail.begin(), from->tail.end(),
                                        [](const LayoutStep& s) { return s.transpose; }) &&
                           inst.shape().rank() > 0 && inst.shape().dims().back() == width;
    for (const HloInstruction* o : inst.operands()) {
      if (deferred_.count(o) || o->shape().rank() == 0) continue;
      if (o->opcode() != HloOpcode::kBroadcast) return false;
      const std::vector<int64_t>& d = o->attrs().dimensions.value_or(std::vector<int64_t>{});
      const bool scalar = d.empty() && o->operand(0)->shape().rank() == 0;
      const bool along_last = d.size() == 1 && d[0] == o->shape().rank() - 1 && last_kept;
      if (!scalar && !along_last) return false;
    }
    Deferred now{{}, from->tail};
    int64_t column = 0;
    for (size_t j = 0; j < from->parts.size(); ++j) {
      HloInstruction* part = from->parts[j];
      const std::vector<int64_t>& dims = part->shape().dims();
      const int64_t columns = dims.back();
      const std::string suffix = from->parts.size() > 1 ? ".part" + std::to_string(j) : ".flat";
      std::vector<HloInstruction*> operands;
      for (const HloInstruction* o : inst.operands()) {
        auto it = deferred_.find(o);
        if (it != deferred_.end()) {
          operands.push_back(it->second.parts[j]);
        } else if (o->shape().rank() == 0) {
          operands.push_back(value(o));
        } else if (o->attrs().dimensions->empty()) {
          operands.push_back(
              b_.broadcast(value(o->operand(0)), dims, {}, rewrite_.fresh(o->name() + suffix)));
        } else {
          HloInstruction* v = value(o->operand(0));
          if (from->parts.size() > 1) {
            v = b_.slice(v, {column}, {column + columns}, {}, rewrite_.fresh(o->name() + suffix));
            layout.insert(v);  // the part's columns of the vector: data movement
          }
          operands.push_back(b_.broadcast(v, dims, {static_cast<int64_t>(dims.size()) - 1},
                                          rewrite_.fresh(o->name() + suffix)));
        }
      }
      HloInstruction* p = b_.add(inst.opcode(), std::move(operands), inst.attrs(),
                                 hlo::Shape(inst.shape().elementType(), dims),
                                 rewrite_.fresh(inst.name() + suffix));
      p->setLoc(loc_[inst.name()]);
      now.parts.push_back(p);
      column += columns;
    }
    deferred_[&inst] = std::move(now);
    return true;
  }

  // The new value of `old`, its parts joined and its layout steps applied now if it was deferred
  // (the last step takes its name).
  HloInstruction* value(const HloInstruction* old) {
    auto it = to_new_.find(old);
    if (it != to_new_.end()) return it->second;
    const Deferred& d = deferred_.at(old);
    auto name = [&](bool last) {
      return last ? old->name() : rewrite_.fresh(old->name() + ".layout");
    };
    HloInstruction* v = d.parts[0];
    if (d.parts.size() > 1) {
      v = b_.concatenate(d.parts, v->shape().rank() - 1, name(d.tail.empty()));
      layout.insert(v);
    }
    for (size_t i = 0; i < d.tail.size(); ++i) {
      const LayoutStep& step = d.tail[i];
      v = step.transpose ? b_.transpose(v, step.dims, name(i + 1 == d.tail.size()))
                         : b_.reshape(v, step.dims, name(i + 1 == d.tail.size()));
      layout.insert(v);
    }
    v->setLoc(loc_[old->name()]);
    return to_new_[old] = v;
  }

  const hlo::HloComputation& entry_;
  std::unordered_set<std::string> used_;
  HloBuilder b_;
  ConvolutionRewrite rewrite_;
  std::unordered_map<std::string, SourceLoc> loc_;  // the original module's source positions
  std::unordered_map<const HloInstruction*, HloInstruction*> to_new_;
  std::unordered_map<const HloInstruction*, Deferred> deferred_;
};

// The instructions `root` depends on (operands and control predecessors), and the parameters.
std::unordered_set<const HloInstruction*> live(const hlo::HloComputation& c,
                                               const HloInstruction* root) {
  std::unordered_set<const HloInstruction*> seen;
  std::vector<const HloInstruction*> stack{root};
  for (const HloInstruction* p : c.parameters())
    if (p) stack.push_back(p);
  while (!stack.empty()) {
    const HloInstruction* i = stack.back();
    stack.pop_back();
    if (!seen.insert(i).second) continue;
    for (const HloInstruction* o : i->operands())
      stack.push_back(o);
    for (const HloInstruction* p : i->controlPredecessors())
      stack.push_back(p);
  }
  return seen;
}

}  // namespace

LoweredConvolutions lowerConvolutions(const hlo::HloModule& module,
                                      const ConvolutionLowering& options) {
  LoweredConvolutions result;
  const hlo::HloComputation* entry = module.entry();
  if (!entry) return result;
  for (const auto& inst : entry->instructions()) {
    if (inst->opcode() != HloOpcode::kConvolution) continue;
    ++(isLowerableConvolution(*inst) ? result.lowered : result.kept);
  }
  if (result.lowered == 0) return result;

  // A copy of the module whose entry is rebuilt: its other computations (reducers, fusions) are
  // the copy's own, so the rebuilt instructions may call them.
  std::unique_ptr<hlo::HloModule> copy =
      hlo::parseModule(hlo::printModule(module), module.sourceFile());
  hlo::HloComputation* old_entry = copy->entry();
  const std::string entry_name = old_entry->name();
  std::string retired = entry_name + ".with_convolutions";
  for (int i = 1; copy->findComputation(retired); ++i)
    retired = entry_name + ".with_convolutions." + std::to_string(i);

  EntryRebuild rebuild(*old_entry, *entry, options);
  std::unique_ptr<hlo::HloComputation> built = rebuild.run();
  old_entry->setName(retired);

  // Without what the rewrite left unused (a broadcast now made in the GEMM's shape); what the
  // module itself never used stays.
  const std::unordered_set<const HloInstruction*> used = live(*built, built->root());
  const std::unordered_set<const HloInstruction*> used_before = live(*old_entry, old_entry->root());
  std::unordered_set<std::string> unused_before;
  for (const auto& inst : old_entry->instructions())
    if (!used_before.count(inst.get())) unused_before.insert(inst->name());
  HloBuilder b(entry_name);
  std::unordered_map<const HloInstruction*, HloInstruction*> kept;
  for (const auto& inst : built->instructions()) {
    if (!used.count(inst.get()) && !unused_before.count(inst->name())) continue;
    std::vector<HloInstruction*> operands;
    for (const HloInstruction* o : inst->operands())
      operands.push_back(kept.at(o));
    kept[inst.get()] = b.clone(*inst, std::move(operands));
  }
  for (const auto& [from, to] : kept) {
    for (HloInstruction* p : from->controlPredecessors())
      to->controlPredecessors().push_back(kept.at(p));
  }
  for (const HloInstruction* g : rebuild.gemms)
    result.gemms.insert(kept.at(g));
  for (const HloInstruction* l : rebuild.layout) {
    auto it = kept.find(l);
    if (it != kept.end()) result.layout.insert(it->second);
  }
  hlo::HloComputation* now = b.addTo(*copy, /*entry=*/true, kept.at(built->root()));
  now->setExecutionThread(old_entry->executionThread());
  now->setLoc(old_entry->loc());
  result.module = std::move(copy);
  return result;
}

}  // namespace tacit::backend
