#include "backend/piecewise.h"

#include <gtest/gtest.h>

#include "backend/verify.h"
#include "common/paths.h"
#include "hlo/parser.h"
#include "hlo/printer.h"
#include "isel/kernel.h"
#include "oracle/tasm.h"
#include "support/source.h"

namespace tacit::backend {
namespace {

std::string path(const std::string& rel) {
  return testing::sourceDir() + "/" + rel;
}

struct Isa {
  explicit Isa(const std::string& file)
      : isa(taidl::loadIsaFile(path(file))),
        units(isel::buildUnits(isa)),
        needs(isel::analyzeIsa(isa, units)) {}
  taidl::Isa isa;
  isel::UnitSet units;
  isel::IsaNeeds needs;
};

const Isa& amx() {
  static const Isa isa("isa/amx.taidl");
  return isa;
}

std::optional<PiecewisePlan> planFor(const hlo::HloModule& kernel, const Isa& isa = amx()) {
  return planPiecewise(kernel, isa.needs);
}

std::unique_ptr<hlo::HloModule> kernelFile(const std::string& rel) {
  return hlo::parseModule(readFile(path(rel)), path(rel));
}

std::unique_ptr<hlo::HloModule> kernelText(const std::string& body) {
  return hlo::parseModule("HloModule k\n\nENTRY main {\n" + body + "}\n", "k.hlo");
}

// K5: the u8 result is 64 runs of 16 lanes; each reads one 64-byte row of a 16x16 s32 tile of the
// other result and 16 of the bias, and writes 16 bytes of its row.
TEST(PiecewisePlan, SplitsTheK5EpilogueIntoSixtyFourRowPieces) {
  auto kernel = kernelFile("examples/amx/k5_int8_gemm_requantize.hlo");
  std::optional<PiecewisePlan> plan = planFor(*kernel);
  ASSERT_TRUE(plan);
  ASSERT_EQ(plan->splits.size(), 1u);
  const SplitResult& s = plan->splits[0];
  EXPECT_EQ(s.result, 1u);
  EXPECT_EQ(s.elements, 16);
  ASSERT_EQ(s.pieces.size(), 64u);
  EXPECT_EQ(plan->rest_results, std::vector<size_t>{0});
  ASSERT_TRUE(plan->rest);
  EXPECT_EQ(isel::entryResultShapes(*plan->rest).size(), 1u);
  // The piece kernel: a row s32[1,16] and a run f32[16] of the bias in, u8[1,16] out.
  std::vector<hlo::Shape> in = isel::entryParameterShapes(*s.kernel);
  ASSERT_EQ(in.size(), 2u);
  EXPECT_EQ(in[0], hlo::Shape(hlo::PrimitiveType::kS32, {1, 16}));
  EXPECT_EQ(in[1], hlo::Shape(hlo::PrimitiveType::kF32, {16}));
  EXPECT_EQ(s.kernel->entry()->root()->shape(), hlo::Shape(hlo::PrimitiveType::kU8, {1, 16}));
  // Piece (row 0, columns 16..31): tile (0, 1) of the accumulators starts at byte 16*16*4.
  auto expect = [&](size_t k, int64_t acc, int64_t bias, int64_t out) {
    const Piece& p = s.pieces[k];
    ASSERT_EQ(p.sources.size(), 2u);
    EXPECT_TRUE(p.sources[0].from_result);
    EXPECT_EQ(p.sources[0].index, 0u);
    EXPECT_EQ(p.sources[0].offset, acc) << "piece " << k;
    EXPECT_FALSE(p.sources[1].from_result);
    EXPECT_EQ(p.sources[1].index, 2u);
    EXPECT_EQ(p.sources[1].offset, bias) << "piece " << k;
    EXPECT_EQ(p.offset, out) << "piece " << k;
  };
  expect(0, 0, 0, 0);
  expect(1, 1024, 64, 16);
  expect(2, 64, 0, 32);
  expect(63, 3 * 1024 + 15 * 64, 64, 31 * 32 + 16);  // row 31: tile (1, 1), its row 15
}

TEST(PiecewisePlan, KeepsKernelsWhole) {
  struct Case {
    const char* why;
    std::string body;
  };
  const std::vector<Case> cases = {
      {"fewer than four pieces",
       "  a = f32[2,16] parameter(0)\n  b = f32[2,16] parameter(1)\n"
       "  ROOT s = f32[2,16] add(a, b)\n"},
      {"the rows are not contiguous (column-major result)",
       "  a = f32[8,16] parameter(0)\n  b = f32[8,16] parameter(1)\n"
       "  ROOT s = f32[8,16]{0,1} add(a, b)\n"},
      {"an operand's rows are not contiguous",
       "  a = f32[8,16]{0,1} parameter(0)\n  b = f32[8,16] parameter(1)\n"
       "  ROOT s = f32[8,16] add(a, b)\n"},
      {"not elementwise",
       "  a = f32[8,16] parameter(0)\n  ROOT t = f32[16,8] transpose(a), dimensions={1,0}\n"},
      {"an intermediate used outside the region",
       "  a = f32[8,16] parameter(0)\n  b = f32[8,16] parameter(1)\n"
       "  s = f32[8,16] add(a, b)\n  m = f32[8,16] multiply(s, s)\n"
       "  t = f32[16,8] transpose(s), dimensions={1,0}\n"
       "  ROOT r = (f32[8,16], f32[16,8]) tuple(m, t)\n"},
      {"a broadcast of a computed value",
       "  a = f32[8,16] parameter(0)\n  x = f32[] parameter(1)\n  y = f32[] add(x, x)\n"
       "  b = f32[8,16] broadcast(y), dimensions={}\n  ROOT s = f32[8,16] add(a, b)\n"},
  };
  for (const Case& c : cases) {
    auto kernel = kernelText(c.body);
    EXPECT_FALSE(planFor(*kernel)) << c.why;
  }
  // Gemmini's elementwise units compute 16 rows at once: a row piece would waste them.
  Isa gemmini("isa/gemmini.taidl");
  auto add = kernelFile("examples/gemmini/add_32x32.hlo");
  EXPECT_FALSE(planFor(*add, gemmini));
}

// A per-row scale (a broadcast along the columns) is one scalar per piece; a per-column bias a
// run of the bias.
TEST(PiecewisePlan, BroadcastsBecomeScalarsOrRunsOfTheirParameter) {
  auto kernel = kernelText(
      "  a = f32[4,32] parameter(0)\n  rs = f32[4] parameter(1)\n  cb = f32[32] parameter(2)\n"
      "  r = f32[4,32] broadcast(rs), dimensions={0}\n"
      "  c = f32[4,32] broadcast(cb), dimensions={1}\n"
      "  m = f32[4,32] multiply(a, r)\n  ROOT s = f32[4,32] add(m, c)\n");
  std::optional<PiecewisePlan> plan = planFor(*kernel);
  ASSERT_TRUE(plan);
  const SplitResult& s = plan->splits[0];
  EXPECT_FALSE(plan->rest);
  ASSERT_EQ(s.pieces.size(), 8u);
  std::vector<hlo::Shape> in = isel::entryParameterShapes(*s.kernel);
  ASSERT_EQ(in.size(), 3u);
  EXPECT_EQ(in[1], hlo::Shape(hlo::PrimitiveType::kF32, {}));
  EXPECT_EQ(in[2], hlo::Shape(hlo::PrimitiveType::kF32, {16}));
  const Piece& p = s.pieces[3];  // row 1, columns 16..31
  EXPECT_EQ(p.sources[0].offset, (32 + 16) * 4);
  EXPECT_EQ(p.sources[1].offset, 1 * 4);
  EXPECT_EQ(p.sources[2].offset, 16 * 4);
  EXPECT_EQ(p.offset, (32 + 16) * 4);
}

// The join shares the pieces' constants and constant loads: K5's program is as good as the one
// compiled whole (659 instructions, the same spec cost, no more HBM traffic), and verifies.
TEST(Piecewise, K5EqualsTheWholeCompileAndVerifies) {
  auto kernel = kernelFile("examples/amx/k5_int8_gemm_requantize.hlo");
  CompileOptions options;
  options.time_limit = std::chrono::seconds(120);
  CompileResult pieces = compile(amx().isa, *kernel, options);
  EXPECT_EQ(pieces.stats.piecewise, "result 1 in 64 pieces of 16 elements");
  ASSERT_EQ(pieces.stats.parts.size(), 2u);
  EXPECT_EQ(pieces.stats.parts[0].name, "rest");
  EXPECT_EQ(pieces.stats.parts[1].copies, 64u);
  EXPECT_EQ(pieces.stats.saturation.nodes,
            pieces.stats.parts[0].enodes + pieces.stats.parts[1].enodes);
  EXPECT_EQ(pieces.stats.join_calls, 659u);
  EXPECT_NE(pieces.stats.text().find("  join: 659 calls"), std::string::npos)
      << pieces.stats.text();
  options.piecewise = false;
  CompileResult whole = compile(amx().isa, *kernel, options);
  EXPECT_TRUE(whole.stats.piecewise.empty());
  EXPECT_EQ(pieces.costs.instructions, whole.costs.instructions);
  EXPECT_EQ(pieces.costs.spec, whole.costs.spec);
  // Two of the constants are broadcast from 4 bytes instead of loaded as 64.
  EXPECT_LE(pieces.costs.hbm_bytes, whole.costs.hbm_bytes);
  size_t constants = 0;
  for (const isel::PiiNode& n : pieces.graph.nodes)
    constants += n.kind == isel::PiiKind::kConstant;
  EXPECT_LE(constants, 4u) << "the 64 pieces' constants were not shared";
  VerifyReport r = verify(amx().isa, *kernel, pieces.program, {.sets = 3, .seed = 11});
  EXPECT_TRUE(r.ok) << r.mismatch << "\n" << oracle::printProgram(amx().isa, pieces.program);
}

// A piece alone would as soon read its bias run from memory as its own row (3 calls: load, add
// with a memory operand, store). Costed for the join, it loads the bias — one load per run, shared
// by the 32 pieces of its column — and reads its row as the memory operand: 2 + 64 x 2 calls,
// as the whole compile.
TEST(Piecewise, ASharedBiasRunIsLoadedOnceNotReadByEveryPiece) {
  auto kernel = kernelText(
      "  x = f32[32,32] parameter(0)\n  bias = f32[32] parameter(1)\n"
      "  b = f32[32,32] broadcast(bias), dimensions={1}\n  ROOT s = f32[32,32] add(x, b)\n");
  CompileResult result = compile(amx().isa, *kernel);
  EXPECT_EQ(result.stats.piecewise, "result 0 in 64 pieces of 16 elements");
  EXPECT_EQ(result.costs.instructions, 2 + 64 * 2)
      << oracle::printProgram(amx().isa, result.program);
  VerifyReport r = verify(amx().isa, *kernel, result.program, {.sets = 2, .seed = 17});
  EXPECT_TRUE(r.ok) << r.mismatch;
}

// Per-row scales and column biases, compiled piecewise, against the HLO evaluator.
TEST(Piecewise, BroadcastEpilogueVerifies) {
  auto kernel = kernelText(
      "  a = s32[8,48] parameter(0)\n  rs = f32[8] parameter(1)\n  cb = f32[48] parameter(2)\n"
      "  f = f32[8,48] convert(a)\n"
      "  r = f32[8,48] broadcast(rs), dimensions={0}\n"
      "  c = f32[8,48] broadcast(cb), dimensions={1}\n"
      "  m = f32[8,48] multiply(f, r)\n  s = f32[8,48] add(m, c)\n"
      "  z = f32[] constant(0)\n  top = f32[] constant(255)\n"
      "  k = f32[8,48] clamp(z, s, top)\n  n = f32[8,48] round-nearest-even(k)\n"
      "  ROOT q = u8[8,48] convert(n)\n");
  CompileResult result = compile(amx().isa, *kernel);
  EXPECT_EQ(result.stats.piecewise, "result 0 in 24 pieces of 16 elements");
  VerifyReport r = verify(amx().isa, *kernel, result.program, {.sets = 3, .seed = 13});
  EXPECT_TRUE(r.ok) << r.mismatch << "\n" << oracle::printProgram(amx().isa, result.program);
}

}  // namespace
}  // namespace tacit::backend
