// A module lowered for its partition (issue 25; docs/backend.md, "Convolutions"): its entry's
// fusions inlined and its convolutions rewritten as GEMMs.
//
// Convolutions as GEMMs. Every ISA tacit describes
// multiplies matrices; none has a convolution instruction. A module's convolutions are rewritten,
// before its partition, into the operations the ISAs and the compiler know: the input is padded
// (pad and lhs dilation as HLO pad with interior padding), each kernel tap's window is a strided
// slice of it, the slices side by side are the im2col matrix, and one dot (batched over the
// feature groups, depthwise included) multiplies it by the kernel reshaped to [taps x features,
// output features]. The dot's contraction runs over the taps in row-major order, then the input
// feature: exactly the order in which the HLO evaluator sums a convolution (docs/numerics.md), so
// the rewrite is exact for every element type, floats included, not only for integers. Two
// choices follow the ISA's GEMM units (ModuleLowering): the contraction is padded with zeros
// to their depth (exact for every type), and an integer depthwise convolution is computed per
// block of channels against diagonal weights (its added products are integer zeros: exact).
//
// What is not rewritten, and stays a convolution (on the host): batch_group_count > 1 (XLA's
// filter-gradient form), operands of different element types (an HLO dot needs one type) and an
// im2col matrix above ModuleLowering::max_im2col_bytes.
#pragma once

#include <cstdint>
#include <memory>
#include <unordered_set>

#include "hlo/instruction.h"

namespace tacit::backend {

// What the rewrite may assume of the ISA's GEMM units (partition derives it from the target;
// the defaults assume nothing).
struct ModuleLowering {
  // The contraction (taps x input features) is padded with zeros to a multiple of this: an ISA
  // whose dot units are 16 deep computes a 3x3 convolution of 3 channels (27) as 32.
  int64_t depth_multiple = 1;
  // An integer depthwise convolution (one input and one output feature per group) whose channel
  // count this divides is computed per block of this many channels, as a GEMM against the block's
  // weights on a diagonal: `block` times the multiplications, on units `block` columns wide that
  // the one-column GEMM of each channel would leave idle. 0 or 1: one group per batch of the dot.
  int64_t block = 0;
  // A GEMM's rows (output positions) and a plain GEMM's columns (output features) are padded
  // with zeros to multiples of these, and the padding's results cut off after the epilogue: an
  // ISA whose stores write whole unit-wide rows computes MobileNetV2's 14x14 layers (196 rows)
  // and 24-channel projections so.
  int64_t row_multiple = 1, column_multiple = 1;
  // Fusions are inlined first, so that their operations are partitioned like the entry's (a
  // Triton GEMM fusion's dot offloaded, its odd operation on the host) rather than as one
  // operation the ISA computes whole or not at all. Not a fusion holding a reduce: reduces sum in
  // order inside fusions and as XLA's tree rewrite outside them (docs/numerics.md).
  bool inline_fusions = true;
  // A convolution whose im2col matrix would take more than this stays a convolution: a
  // transposed convolution's (lhs dilation) is mostly the zeros of its holes — JAX's
  // conv_transpose test in the corpus would need 51 GB, where its input takes 2 MB.
  double max_im2col_bytes = 256.0 * (1 << 20);
};

struct LoweredModule {
  // `module` with its entry computation's fusions inlined and convolutions rewritten; null when
  // it had none of either (the caller keeps the original).
  std::unique_ptr<hlo::HloModule> module;
  int64_t lowered = 0;  // convolutions rewritten
  int64_t kept = 0;     // convolutions left as they are (the reasons above)
  int64_t fusions = 0;  // fusions inlined
  // The dot computing each rewritten convolution (in `module`): reports name it a convolution.
  std::unordered_set<const hlo::HloInstruction*> gemms;
  // The data movement the rewrite added (im2col, the kernel as a matrix, the layout steps to each
  // convolution's shape), in `module`: the partition asks the ISA for it apart from the GEMMs.
  std::unordered_set<const hlo::HloInstruction*> layout;
};

// Inlines the fusions of `module`'s entry computation and rewrites its convolutions (those of
// the fusions too). Every other entry instruction keeps its name, its attributes and its place; a
// fusion's instructions are named `fusion.instruction`; the last instruction of a convolution's
// rewrite takes the convolution's name, so users of it (and the module's outputs) are named as
// before.
LoweredModule lowerModule(const hlo::HloModule& module, const ModuleLowering& options = {});

// Whether `conv` (a convolution) is rewritten by lowerModule under `options`.
bool isLowerableConvolution(const hlo::HloInstruction& conv, const ModuleLowering& options = {});

}  // namespace tacit::backend
