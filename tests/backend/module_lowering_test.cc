// Convolutions as im2col and GEMMs (backend/module_lowering.h): the rewrite's soundness as a
// property — on random convolutions (strides, padding negative included, both dilations,
// reversal, feature groups up to depthwise, permuted dimension labels, integer and float types)
// the rewritten module computes what the convolution computes, bit for bit — and what it keeps.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <string>
#include <vector>

#include "backend/module_lowering.h"
#include "backend/module_run.h"
#include "hlo/builder.h"
#include "hlo/parser.h"
#include "hlo/printer.h"
#include "hlo/verifier.h"
#include "hlo_eval/evaluator.h"

namespace tacit::backend {
namespace {

using hlo::HloOpcode;
using hlo::PrimitiveType;

int64_t count(const hlo::HloModule& m, HloOpcode opcode) {
  int64_t n = 0;
  for (const auto& inst : m.entry()->instructions())
    n += inst->opcode() == opcode;
  return n;
}

// Evaluates both modules on the same random inputs; empty when every output is equal.
std::string compare(const hlo::HloModule& original, const hlo::HloModule& lowered, uint64_t seed) {
  const std::vector<hlo::Literal> args = randomArguments(original, seed);
  return firstOutputDifference(original, hlo::evaluate(lowered, args),
                               hlo::evaluate(original, args));
}

struct RandomConvolution {
  std::string text;     // the module
  std::string summary;  // for a failure's message
};

// A convolution with random geometry whose output has at least one element.
RandomConvolution randomConvolution(std::mt19937_64& rng) {
  auto pick = [&](int64_t lo, int64_t hi) {
    return std::uniform_int_distribution<int64_t>(lo, hi)(rng);
  };
  for (;;) {
    const int64_t spatial = pick(0, 3) == 0 ? 1 : 2;
    const int64_t n = pick(1, 2);
    const int64_t groups = pick(0, 2) == 0 ? 1 : pick(1, 4);
    const int64_t cg = pick(0, 2) == 0 ? 1 : pick(1, 3);
    const int64_t fg = pick(0, 1) == 0 ? 1 : pick(1, 3);
    std::vector<hlo::WindowDim> window(static_cast<size_t>(spatial));
    std::vector<int64_t> in_size, out_size;
    bool empty = false;
    for (hlo::WindowDim& w : window) {
      const int64_t s = pick(1, 7);
      w.size = pick(1, 3);
      w.stride = pick(1, 3);
      w.pad_lo = pick(-1, 2);
      w.pad_hi = pick(-1, 2);
      w.lhs_dilation = pick(0, 3) == 0 ? 2 : 1;
      w.rhs_dilation = pick(0, 3) == 0 ? 2 : 1;
      w.reversal = pick(0, 3) == 0;
      const int64_t in = (s - 1) * w.lhs_dilation + 1 + w.pad_lo + w.pad_hi;
      const int64_t k = (w.size - 1) * w.rhs_dilation + 1;
      const int64_t o = in < k ? 0 : (in - k) / w.stride + 1;
      empty = empty || o <= 0;
      in_size.push_back(s);
      out_size.push_back(o);
    }
    if (empty) continue;
    // Dimension labels: batch (or input feature), feature (or output feature), then the spatial
    // dimensions; half the time in a random order, else as b01f / 01io.
    auto order = [&](size_t rank, bool kernel) {
      std::vector<int64_t> p(rank);
      const int64_t r = static_cast<int64_t>(rank);
      for (int64_t i = 0; i < r; ++i)
        p[static_cast<size_t>(i)] = kernel ? (i < 2 ? r - 2 + i : i - 2)
                                           : (i == 0   ? 0
                                              : i == 1 ? r - 1
                                                       : i - 1);
      if (pick(0, 1) == 1) std::shuffle(p.begin(), p.end(), rng);
      return p;
    };
    const size_t rank = static_cast<size_t>(spatial) + 2;
    const std::vector<int64_t> in_p = order(rank, false), k_p = order(rank, true),
                               out_p = order(rank, false);
    hlo::ConvDims cd;
    cd.input_batch = in_p[0];
    cd.input_feature = in_p[1];
    cd.kernel_input_feature = k_p[0];
    cd.kernel_output_feature = k_p[1];
    cd.output_batch = out_p[0];
    cd.output_feature = out_p[1];
    for (size_t d = 0; d < static_cast<size_t>(spatial); ++d) {
      cd.input_spatial.push_back(in_p[d + 2]);
      cd.kernel_spatial.push_back(k_p[d + 2]);
      cd.output_spatial.push_back(out_p[d + 2]);
    }
    std::vector<int64_t> in_dims(rank), k_dims(rank), out_dims(rank);
    in_dims[static_cast<size_t>(cd.input_batch)] = n;
    in_dims[static_cast<size_t>(cd.input_feature)] = groups * cg;
    k_dims[static_cast<size_t>(cd.kernel_input_feature)] = cg;
    k_dims[static_cast<size_t>(cd.kernel_output_feature)] = groups * fg;
    out_dims[static_cast<size_t>(cd.output_batch)] = n;
    out_dims[static_cast<size_t>(cd.output_feature)] = groups * fg;
    for (size_t d = 0; d < static_cast<size_t>(spatial); ++d) {
      in_dims[static_cast<size_t>(cd.input_spatial[d])] = in_size[d];
      k_dims[static_cast<size_t>(cd.kernel_spatial[d])] = window[d].size;
      out_dims[static_cast<size_t>(cd.output_spatial[d])] = out_size[d];
    }
    const int type = static_cast<int>(pick(0, 2));
    const PrimitiveType in_type = type == 0   ? PrimitiveType::kS8
                                  : type == 1 ? PrimitiveType::kF32
                                              : PrimitiveType::kBF16;
    const PrimitiveType out_type = type == 0 ? PrimitiveType::kS32 : PrimitiveType::kF32;
    hlo::HloModule m("random_convolution");
    hlo::HloBuilder b("main");
    hlo::HloInstruction* x = b.parameter(0, hlo::Shape(in_type, in_dims), "x");
    hlo::HloInstruction* k = b.parameter(1, hlo::Shape(in_type, k_dims), "k");
    hlo::HloAttributes a;
    a.window = window;
    a.conv_dims = cd;
    if (groups > 1) a.feature_group_count = groups;
    hlo::HloInstruction* conv =
        b.add(HloOpcode::kConvolution, {x, k}, a, hlo::Shape(out_type, out_dims), "conv");
    // Half of them with an epilogue: a bias per output feature, then a clamp and a narrowing
    // convert (integers) or a scale and a ReLU (floats).
    if (pick(0, 1) == 1) {
      const int64_t features = out_dims[static_cast<size_t>(cd.output_feature)];
      hlo::HloInstruction* bias = b.parameter(2, hlo::Shape(out_type, {features}), "bias");
      hlo::HloInstruction* y = b.binary(
          HloOpcode::kAdd, conv, b.broadcast(bias, out_dims, {cd.output_feature}, "bias.b"), "y");
      if (out_type == PrimitiveType::kS32) {
        hlo::HloInstruction* lo = b.constant(hlo::scalarLiteral(out_type, -128), "lo");
        hlo::HloInstruction* hi = b.constant(hlo::scalarLiteral(out_type, 127), "hi");
        b.convert(b.clamp(lo, y, hi, "c"), PrimitiveType::kS8, "out");
      } else {
        hlo::HloInstruction* s = b.constant(hlo::scalarLiteral(out_type, 0.5), "s");
        hlo::HloInstruction* z = b.constant(hlo::scalarLiteral(out_type, 0), "z");
        hlo::HloInstruction* scaled =
            b.binary(HloOpcode::kMultiply, y, b.broadcast(s, out_dims, {}, "s.b"), "scaled");
        b.binary(HloOpcode::kMaximum, scaled, b.broadcast(z, out_dims, {}, "z.b"), "out");
      }
    }
    b.addTo(m, /*entry=*/true);
    RandomConvolution r;
    r.text = hlo::printModule(m);
    r.summary = hlo::printInstruction(*m.entry()->findInstruction("conv"));
    return r;
  }
}

TEST(LowerConvolutions, RandomConvolutionsComputeWhatTheConvolutionComputesBitForBit) {
  std::mt19937_64 rng(20261205);
  int64_t grouped = 0, depthwise = 0, dilated = 0, diagonal = 0, padded = 0, epilogues = 0,
          moved = 0, cut = 0;
  for (int i = 0; i < 400; ++i) {
    const RandomConvolution c = randomConvolution(rng);
    // The ISA's units: none, or a depth to pad to and a block of depthwise channels.
    ModuleLowering units;
    if (i % 2 == 1)
      units = {.depth_multiple = i % 4 == 1 ? 4 : 16,
               .block = i % 8 == 1 ? 4 : 2,
               .row_multiple = i % 3 == 0 ? 1 : 8,
               .column_multiple = i % 5 == 0 ? 1 : 4};
    SCOPED_TRACE(c.summary + " depth multiple " + std::to_string(units.depth_multiple) +
                 ", block " + std::to_string(units.block));
    const auto original = hlo::parseModule(c.text, "conv.hlo");
    const LoweredModule lowered = lowerModule(*original, units);
    ASSERT_NE(lowered.module, nullptr);
    EXPECT_EQ(lowered.lowered, 1);
    EXPECT_EQ(count(*lowered.module, HloOpcode::kConvolution), 0);
    EXPECT_NO_THROW(hlo::verifyModule(*lowered.module));
    // The rewrite keeps the names of what it rewrites: the root is the same instruction.
    EXPECT_EQ(lowered.module->entry()->root()->name(), original->entry()->root()->name());
    EXPECT_EQ(compare(*original, *lowered.module, static_cast<uint64_t>(i)), "");
    const hlo::HloInstruction& conv = *original->entry()->findInstruction("conv");
    epilogues += original->entry()->root() != &conv;
    moved += lowered.module->entry()->findInstruction("y.flat") != nullptr;
    const int64_t g = conv.attrs().feature_group_count.value_or(1);
    grouped += g > 1;
    depthwise += g > 1 && conv.operand(0)->shape().dim(conv.attrs().conv_dims->input_feature) == g;
    for (const hlo::WindowDim& w : *conv.attrs().window)
      dilated += w.lhs_dilation > 1 || w.rhs_dilation > 1;
    diagonal += count(*lowered.module, HloOpcode::kSelect);
    auto named = [&](const std::string& part) {
      const auto& all = lowered.module->entry()->instructions();
      return std::any_of(all.begin(), all.end(), [&](const auto& inst) {
        return inst->name().find(part) != std::string::npos;
      });
    };
    padded += named(".lhs.padded");
    cut += named(".rows.padded") || named(".columns.padded");
  }
  // The generator reaches the cases the rewrite distinguishes.
  EXPECT_GT(grouped, 30);
  EXPECT_GT(depthwise, 10);
  EXPECT_GT(dilated, 30);
  EXPECT_GT(diagonal, 5);  // integer depthwise convolutions as diagonal blocks
  EXPECT_GT(padded, 20);   // contractions padded to the units' depth
  EXPECT_GT(cut, 30);      // rows or columns padded to the units' multiples, then cut off
  EXPECT_GT(epilogues, 150);
  EXPECT_GT(moved, 30);  // bias and the rest computed in the GEMM's shape
}

// The other instructions keep their names and places; a batch-grouped convolution (XLA's filter
// gradient) is kept as it is.
TEST(LowerConvolutions, KeepsTheRestOfTheModuleAndBatchGroupedConvolutions) {
  const char* text = R"(HloModule m
ENTRY main {
  x = f32[1,6,6,4] parameter(0)
  k = f32[3,3,4,8] parameter(1)
  conv = f32[1,6,6,8] convolution(x, k), window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f
  e = f32[1,6,6,8] exponential(conv)
  xb = f32[2,6,6,4] parameter(2)
  kept = f32[1,6,6,8] convolution(xb, k), window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f, batch_group_count=2
  ROOT t = (f32[1,6,6,8], f32[1,6,6,8]) tuple(e, kept)
}
)";
  const auto original = hlo::parseModule(text, "m.hlo");
  const LoweredModule lowered = lowerModule(*original);
  ASSERT_NE(lowered.module, nullptr);
  EXPECT_EQ(lowered.lowered, 1);
  EXPECT_EQ(lowered.kept, 1);
  const hlo::HloComputation& entry = *lowered.module->entry();
  EXPECT_EQ(entry.name(), "main");
  EXPECT_EQ(entry.root()->name(), "t");
  // The exponential follows the GEMM in its shape; the layout steps come after it.
  EXPECT_EQ(entry.findInstruction("e")->opcode(), HloOpcode::kReshape);
  EXPECT_EQ(entry.findInstruction("e.flat")->opcode(), HloOpcode::kExponential);
  EXPECT_EQ(entry.findInstruction("e.flat")->operand(0)->opcode(), HloOpcode::kDot);
  EXPECT_EQ(entry.findInstruction("kept")->opcode(), HloOpcode::kConvolution);
  EXPECT_EQ(count(*lowered.module, HloOpcode::kDot), 1);
  EXPECT_EQ(compare(*original, *lowered.module, 7), "");
  // An im2col matrix above the limit (this one's 36 positions x 9 taps x 4 features x 4 bytes)
  // keeps its convolution.
  const LoweredModule small = lowerModule(*original, {.max_im2col_bytes = 36 * 9 * 4 * 4 - 1});
  EXPECT_EQ(small.module, nullptr);
  EXPECT_EQ(small.kept, 2);
}

// A convolution without spatial dimensions is one GEMM with nothing after it: the dot takes the
// convolution's name (and the convolution inside a fusion, its inlined name).
TEST(LowerConvolutions, AGemmWithNothingAfterItTakesTheConvolutionsName) {
  const char* text = R"(HloModule m
fused {
  a = f32[3,5] parameter(0)
  b = f32[5,4] parameter(1)
  ROOT conv = f32[3,4] convolution(a, b), dim_labels=bf_io->bf
}
ENTRY main {
  x = f32[3,5] parameter(0)
  k = f32[5,4] parameter(1)
  conv = f32[3,4] convolution(x, k), dim_labels=bf_io->bf
  fusion = f32[3,4] fusion(x, k), kind=kLoop, calls=fused
  y = f32[1,4,2] parameter(2)
  w = f32[3,2,2] parameter(3)
  unused = f32[1,2,2] convolution(y, w), window={size=3}, dim_labels=b0f_0io->b0f
  ROOT s = f32[3,4] add(conv, fusion)
}
)";
  const auto original = hlo::parseModule(text, "m.hlo");
  const LoweredModule lowered = lowerModule(*original);
  ASSERT_NE(lowered.module, nullptr);
  // A convolution nothing reads is lowered too, and its GEMM removed with it.
  EXPECT_EQ(lowered.lowered, 3);
  EXPECT_EQ(lowered.gemms.size(), 2u);
  const hlo::HloComputation& entry = *lowered.module->entry();
  EXPECT_EQ(entry.findInstruction("conv")->opcode(), HloOpcode::kDot);
  EXPECT_EQ(entry.findInstruction("fusion.conv")->opcode(), HloOpcode::kDot);
  EXPECT_EQ(compare(*original, *lowered.module, 2), "");
}

TEST(LowerConvolutions, AModuleWithoutConvolutionsIsLeftAlone) {
  const auto m = hlo::parseModule(R"(HloModule m
ENTRY main {
  a = s8[4,4] parameter(0)
  ROOT d = s32[4,4] dot(a, a), lhs_contracting_dims={1}, rhs_contracting_dims={0}
}
)",
                                  "m.hlo");
  const LoweredModule lowered = lowerModule(*m);
  EXPECT_EQ(lowered.module, nullptr);
  EXPECT_EQ(lowered.lowered + lowered.kept, 0);
}

}  // namespace
}  // namespace tacit::backend

namespace tacit::backend {
namespace {

// A fusion's computation inlined: its parameters are the fusion's operands, its instructions
// named after the fusion, its root the fusion's value; a nested fusion too; the module computes
// what it computed.
TEST(ModuleLowering, FusionsAreInlinedWhereTheyWere) {
  const char* text = R"(HloModule m
inner {
  p = f32[4,4] parameter(0)
  ROOT e = f32[4,4] exponential(p)
}
fused {
  a = f32[4,4] parameter(0)
  b = f32[4,4] parameter(1)
  m = f32[4,4] multiply(a, b)
  ROOT f = f32[4,4] fusion(m), kind=kLoop, calls=inner
}
ENTRY main {
  x = f32[4,4] parameter(0)
  y = f32[4,4] parameter(1)
  m = f32[4,4] add(x, y)
  fusion = f32[4,4] fusion(m, y), kind=kLoop, calls=fused
  ROOT r = f32[4,4] negate(fusion)
}
)";
  const auto original = hlo::parseModule(text, "m.hlo");
  const LoweredModule lowered = lowerModule(*original);
  ASSERT_NE(lowered.module, nullptr);
  EXPECT_EQ(lowered.fusions, 2);
  EXPECT_EQ(count(*lowered.module, HloOpcode::kFusion), 0);
  const hlo::HloComputation& entry = *lowered.module->entry();
  // The entry's own `m` keeps its name; the fusion's is `fusion.m`, and the nested one's
  // exponential `fusion.f.e`.
  EXPECT_EQ(entry.findInstruction("m")->opcode(), HloOpcode::kAdd);
  EXPECT_EQ(entry.findInstruction("fusion.m")->opcode(), HloOpcode::kMultiply);
  ASSERT_NE(entry.findInstruction("fusion.f.e"), nullptr);
  EXPECT_EQ(entry.root()->operand(0), entry.findInstruction("fusion.f.e"));
  EXPECT_NO_THROW(hlo::verifyModule(*lowered.module));
  EXPECT_EQ(compare(*original, *lowered.module, 3), "");
  // Without inlining, a module without convolutions is left alone.
  EXPECT_EQ(lowerModule(*original, {.inline_fusions = false}).module, nullptr);
}

// A fusion holding a reduce stays a fusion: its row sums of 125 floats are summed in order inside
// it, and by XLA's tree rewrite (blocks of 32) outside it, which rounds differently.
TEST(ModuleLowering, AFusionHoldingAReduceStaysAFusion) {
  const char* text = R"(HloModule m
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
sums {
  p = f32[8,125] parameter(0)
  z = f32[] constant(0)
  ROOT r = f32[8] reduce(p, z), dimensions={1}, to_apply=add
}
ENTRY main {
  x = f32[8,125] parameter(0)
  ROOT fusion = f32[8] fusion(x), kind=kInput, calls=sums
}
)";
  const auto original = hlo::parseModule(text, "m.hlo");
  EXPECT_EQ(lowerModule(*original).module, nullptr);
  // What inlining it would do: the same sums, rounded otherwise.
  std::string inlined = text;
  inlined.replace(inlined.find("sums {"), 6, "ENTRY sums {");
  inlined.erase(inlined.find("ENTRY main {"));
  const auto flat = hlo::parseModule(inlined, "flat.hlo");
  EXPECT_NE(compare(*original, *flat, 1), "");
}

}  // namespace
}  // namespace tacit::backend
