// One convolution as GEMMs (backend/module_lowering.h, docs/backend.md "Convolutions"): the
// im2col matrix, the kernel as a matrix (per block of channels on a diagonal, for an integer
// depthwise convolution), the GEMMs with their contraction, rows and columns padded to the ISA's
// units, and the layout steps from the GEMMs' result to the convolution's. lowerModule
// rebuilds a module's entry with it.
#pragma once

#include <cstdint>
#include <string>
#include <unordered_set>
#include <vector>

#include "backend/module_lowering.h"
#include "hlo/builder.h"

namespace tacit::backend {

// A step from a GEMM's result towards the convolution's: a reshape to `dims`, a transpose by
// `dims`, or the slice [0, dims) (the rows and columns padded to the units' multiples cut off).
struct LayoutStep {
  enum Kind { kReshape, kTranspose, kSlice } kind = kReshape;
  std::vector<int64_t> dims;
};

struct Lowered {
  // The GEMMs: one, or one per block of channels (their results side by side in the last
  // dimension make one).
  std::vector<hlo::HloInstruction*> parts;
  std::vector<int64_t> columns;  // each part's columns that are the convolution's (not padding)
  std::vector<LayoutStep> tail;  // applied to the parts' result, they give the convolution's
};

// Emits one convolution's rewrite into `b`, names unique in the computation from `fresh`.
class ConvolutionRewrite {
 public:
  ConvolutionRewrite(hlo::HloBuilder& b, std::unordered_set<std::string>& used,
                     const ModuleLowering& options)
      : b_(b), used_(used), options_(options) {}

  // The GEMMs computing `conv`, and the layout steps that make their result the convolution's.
  // `name` is the convolution's in the rebuilt computation: the last instruction takes it.
  Lowered lower(const hlo::HloInstruction& conv, const std::string& name,
                hlo::HloInstruction* input, hlo::HloInstruction* kernel);
  // `base`, or `base.N`: a name not yet used in the computation.
  std::string fresh(const std::string& base);
  // `x` with `extra` zeros after the end of dimension `dim`.
  hlo::HloInstruction* paddedAt(hlo::HloInstruction* x, int64_t dim, int64_t extra,
                                const std::string& base);

 private:
  hlo::HloInstruction* zero(hlo::PrimitiveType type, const std::string& base);
  // `x` padded with zeros of its type.
  hlo::HloInstruction* zeroPadded(hlo::HloInstruction* x, std::vector<hlo::PadDim> padding,
                                  const std::string& base);
  // `x` transposed, or `x` when `permutation` is the identity.
  hlo::HloInstruction* transposed(hlo::HloInstruction* x, const std::vector<int64_t>& permutation,
                                  const std::string& name);
  // `x` reshaped, or `x` when it has `dims` already.
  hlo::HloInstruction* reshaped(hlo::HloInstruction* x, std::vector<int64_t> dims,
                                const std::string& name);
  // dot(lhs, rhs) in `type` named `name`, its contraction padded to the units' depth, its operands
  // widened.
  hlo::HloInstruction* gemm(hlo::HloInstruction* lhs, hlo::HloInstruction* rhs,
                            const hlo::DotDims& dims, hlo::PrimitiveType type,
                            const std::string& name);
  // A depthwise kernel [T..., 1, C] as `blocks` block-diagonal matrices [T x block, block]: row
  // (t, i) and column j of block k hold the tap t weight of channel k*block + j where i == j, and
  // zeros elsewhere.
  hlo::HloInstruction* diagonalBlocks(hlo::HloInstruction* w, int64_t taps, int64_t blocks,
                                      int64_t block, const std::string& base);
  // [N, S..., C] padded by the window's padding and lhs dilation; `offset` receives, per spatial
  // dimension, where the window's first position is (negative padding crops).
  hlo::HloInstruction* padded(hlo::HloInstruction* x, const std::vector<hlo::WindowDim>& window,
                              std::vector<int64_t>& offset, const std::string& base);
  // The im2col matrix [N, O..., taps x C] (tap major, feature minor).
  hlo::HloInstruction* im2col(hlo::HloInstruction* x, const std::vector<hlo::WindowDim>& window,
                              const std::vector<int64_t>& out_spatial, const std::string& base);

  hlo::HloBuilder& b_;
  std::unordered_set<std::string>& used_;
  const ModuleLowering& options_;
};

}  // namespace tacit::backend
