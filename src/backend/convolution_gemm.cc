#include "backend/convolution_gemm.h"

#include <algorithm>
#include <numeric>

namespace tacit::backend {

using hlo::HloInstruction;

namespace {

bool isIdentity(const std::vector<int64_t>& permutation) {
  for (size_t i = 0; i < permutation.size(); ++i)
    if (permutation[i] != static_cast<int64_t>(i)) return false;
  return true;
}

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

// What `extent` lacks to be a multiple of `multiple` (0 for a multiple of 0 or 1).
int64_t toMultiple(int64_t extent, int64_t multiple) {
  return multiple > 1 && extent % multiple != 0 ? multiple - extent % multiple : 0;
}

int64_t product(const std::vector<int64_t>& dims) {
  return std::accumulate(dims.begin(), dims.end(), int64_t{1}, std::multiplies<>());
}

}  // namespace

std::string ConvolutionRewrite::fresh(const std::string& base) {
  std::string name = base;
  for (int i = 1; used_.count(name); ++i)
    name = base + "." + std::to_string(i);
  used_.insert(name);
  return name;
}

HloInstruction* ConvolutionRewrite::zero(hlo::PrimitiveType type, const std::string& base) {
  return b_.constant(hlo::scalarLiteral(type, 0), fresh(base + ".zero"));
}

HloInstruction* ConvolutionRewrite::paddedAt(HloInstruction* x, int64_t dim, int64_t extra,
                                             const std::string& base) {
  std::vector<hlo::PadDim> padding(static_cast<size_t>(x->shape().rank()));
  padding[static_cast<size_t>(dim)].hi = extra;
  return zeroPadded(x, std::move(padding), base);
}

HloInstruction* ConvolutionRewrite::zeroPadded(HloInstruction* x, std::vector<hlo::PadDim> padding,
                                               const std::string& base) {
  return b_.pad(x, zero(x->shape().elementType(), base), std::move(padding),
                fresh(base + ".padded"));
}

HloInstruction* ConvolutionRewrite::transposed(HloInstruction* x,
                                               const std::vector<int64_t>& permutation,
                                               const std::string& name) {
  return isIdentity(permutation) ? x : b_.transpose(x, permutation, fresh(name));
}

HloInstruction* ConvolutionRewrite::reshaped(HloInstruction* x, std::vector<int64_t> dims,
                                             const std::string& name) {
  return x->shape().dims() == dims ? x : b_.reshape(x, std::move(dims), fresh(name));
}

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
  return any ? zeroPadded(x, std::move(padding), base) : x;
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

Lowered ConvolutionRewrite::lower(const HloInstruction& conv, const std::string& name,
                                  HloInstruction* input, HloInstruction* kernel) {
  const hlo::HloAttributes& a = conv.attrs();
  const hlo::ConvDims& cd = *a.conv_dims;
  const std::vector<hlo::WindowDim> window = a.window.value_or(std::vector<hlo::WindowDim>{});
  const size_t spatial = window.size();
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
  const int64_t rows = n * product(out_spatial), tap_count = product(taps), depth = tap_count * c;
  HloInstruction* cols = im2col(x, window, out_spatial, name);

  // One GEMM [rows, depth] x [depth, F], or one per feature group as a batched dot (per block of
  // channels, for an integer depthwise convolution the ISA's units are wider than).
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
  // The GEMMs' rows and (of a plain GEMM) columns padded to the units' multiples: the padded
  // rows of the im2col matrix and columns of the kernel are zeros, the results they give are cut
  // off after the epilogue.
  const bool batched = groups > 1 && !diagonal;
  const int64_t extra_rows = batched ? 0 : toMultiple(rows, options_.row_multiple);
  const int64_t extra_columns = groups == 1 ? toMultiple(f, options_.column_multiple) : 0;
  Lowered lowered;
  if (extra_rows > 0 || extra_columns > 0) lowered.tail.push_back({LayoutStep::kSlice, {rows, f}});
  if (batched) lowered.tail.push_back({LayoutStep::kTranspose, {1, 0, 2}});
  if (batched || nof != std::vector<int64_t>{rows, f})
    lowered.tail.push_back({LayoutStep::kReshape, nof});
  if (!isIdentity(permutation)) lowered.tail.push_back({LayoutStep::kTranspose, permutation});
  // The convolution's own name goes to its GEMM when nothing follows it.
  const std::string gemm_name = lowered.tail.empty() && !diagonal ? name : fresh(name + ".gemm");
  auto padded_rows = [&](HloInstruction* lhs, const std::string& base) {
    return extra_rows > 0 ? paddedAt(lhs, 0, extra_rows, base) : lhs;
  };

  hlo::DotDims dims;
  if (groups == 1) {
    dims.lhs_contracting = {1};
    dims.rhs_contracting = {0};
    HloInstruction* rhs = reshaped(w, {depth, f}, name + ".rhs");
    if (extra_columns > 0) rhs = paddedAt(rhs, 1, extra_columns, name + ".rhs.columns");
    lowered.parts.push_back(
        gemm(padded_rows(reshaped(cols, {rows, depth}, name + ".lhs"), name + ".lhs.rows"), rhs,
             dims, out.elementType(), gemm_name));
    lowered.columns.push_back(f);
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
      lowered.parts.push_back(gemm(
          padded_rows(reshaped(lhs, {rows, tap_count * block}, part + ".lhs"), part + ".lhs.rows"),
          reshaped(rhs, {tap_count * block, block}, part + ".rhs"), dims, out.elementType(),
          fresh(part + ".gemm")));
      lowered.columns.push_back(block);
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
    lowered.columns.push_back(fg);
  }
  return lowered;
}

HloInstruction* ConvolutionRewrite::gemm(HloInstruction* lhs, HloInstruction* rhs,
                                         const hlo::DotDims& dims, hlo::PrimitiveType type,
                                         const std::string& name) {
  // The contraction padded with zeros in both operands to the ISA's depth: the added products
  // are +0 x +0 = +0, summed last, which changes no sum (integer or float: a sum that starts at +0
  // is never -0, and s + +0 == s).
  const int64_t k_dim = dims.lhs_contracting[0];
  if (const int64_t extra = toMultiple(lhs->shape().dim(k_dim), options_.depth_multiple)) {
    lhs = paddedAt(lhs, k_dim, extra, name + ".lhs");
    rhs = paddedAt(rhs, dims.rhs_contracting[0], extra, name + ".rhs");
  }
  // The operands widened to the result type as the compiler's GEMMs are written (an int8 GEMM is
  // a dot of converted int8 values); a dot of mixed types where widening is not exact.
  if (widensExactly(lhs->shape().elementType(), type)) {
    lhs = b_.convert(lhs, type, fresh(name + ".lhs.wide"));
    rhs = b_.convert(rhs, type, fresh(name + ".rhs.wide"));
  }
  return b_.dot(lhs, rhs, dims, type, name);
}

}  // namespace tacit::backend
