// tacit coverage (backend/coverage.h): a module's operations split into regions the compiler
// computes and operations that stay on the host, each with the compiler's reason.
#include <gtest/gtest.h>

#include <map>

#include "backend/coverage.h"
#include "common/paths.h"
#include "common/slowdown.h"
#include "hlo/parser.h"
#include "mixed_module.h"
#include "taidl/isa.h"

namespace tacit::backend {
namespace {

const isel::Target& gemmini() {
  static const taidl::Isa isa = taidl::loadIsaFile(testing::sourceDir() + "/isa/gemmini.taidl");
  static const isel::Target target(isa);
  return target;
}

// Each region's compile limit scaled to this build's speed (a safety net: the tests check which
// regions compile, and an unoptimised build is ~15x slower).
CoverageOptions safetyNet() {
  CoverageOptions options;
  options.time_limit *= testing::kSlowdown;
  return options;
}

const OpcodeCoverage& row(const CoverageReport& r, const std::string& opcode) {
  for (const OpcodeCoverage& c : r.opcodes) {
    if (c.opcode == opcode) return c;
  }
  ADD_FAILURE() << "no row for " << opcode;
  static const OpcodeCoverage none;
  return none;
}

using testing::kGemmThenExp;

TEST(Coverage, TheGemmRegionIsOffloadedAndTheFloatTailStaysOnTheHost) {
  auto module = hlo::parseModule(kGemmThenExp, "mixed.hlo");
  const CoverageReport r = coverage(gemmini(), *module, safetyNet());
  EXPECT_EQ(r.operations, 7);  // parameters and constants are not operations
  EXPECT_EQ(r.offloaded, 5);
  ASSERT_EQ(r.regions.size(), 1u);
  EXPECT_EQ(r.regions[0].operations, 5u);
  EXPECT_EQ(row(r, "dot").offloaded, 1);
  EXPECT_EQ(row(r, "clamp").offloaded, 1);
  EXPECT_EQ(row(r, "exponential").offloaded, 0);
  ASSERT_EQ(row(r, "exponential").reasons.size(), 1u);
  EXPECT_NE(row(r, "exponential").reasons.begin()->first.find("no instruction of ISA 'gemmini'"),
            std::string::npos);
  // FLOPs: the dot's 2 * 16^3, the clamp's 256, the exponential's 256 (converts move data).
  EXPECT_DOUBLE_EQ(r.flops, 2.0 * 16 * 16 * 16 + 256 + 256);
  EXPECT_DOUBLE_EQ(r.flops_offloaded, 2.0 * 16 * 16 * 16 + 256);
  // The report's forms.
  EXPECT_NE(r.text().find("5 of 7 operations offloaded"), std::string::npos) << r.text();
  EXPECT_NE(r.json().find("\"offloaded\": 5"), std::string::npos) << r.json();
}

// A GEMM inside a fusion (as XLA's Triton GEMM fusions hold one) is partitioned like the entry's
// operations: the fusion is inlined, its int8 GEMM offloaded, the exponential after it, in the
// same fusion, left on the host.
TEST(Coverage, AGemmInsideAFusionIsOffloaded) {
  auto module = hlo::parseModule(R"(HloModule fused_gemm
gemm_then_exp {
  a = s8[16,16] parameter(0)
  b = s8[16,16] parameter(1)
  wa = s32[16,16] convert(a)
  wb = s32[16,16] convert(b)
  d = s32[16,16] dot(wa, wb), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  lo = s32[] constant(-128)
  hi = s32[] constant(127)
  c = s32[16,16] clamp(lo, d, hi)
  y = s8[16,16] convert(c)
  f = f32[16,16] convert(y)
  ROOT e = f32[16,16] exponential(f)
}
ENTRY main {
  a = s8[16,16] parameter(0)
  b = s8[16,16] parameter(1)
  ROOT gemm = f32[16,16] fusion(a, b), kind=kCustom, calls=gemm_then_exp
}
)",
                                 "fused.hlo");
  const CoverageReport r = coverage(gemmini(), *module, safetyNet());
  EXPECT_EQ(row(r, "dot").offloaded, 1);
  EXPECT_EQ(row(r, "clamp").offloaded, 1);
  EXPECT_EQ(row(r, "exponential").offloaded, 0);
  EXPECT_EQ(r.fusions_inlined, 1);
  EXPECT_NE(r.text().find("1 fusion inlined"), std::string::npos) << r.text();
}

TEST(Coverage, AnOpcodeTheCompilerDoesNotModelIsAReasonNotAnError) {
  auto module = hlo::parseModule(R"(HloModule cc
ENTRY main {
  a = s8[16,16] parameter(0)
  b = s8[16,16] parameter(1)
  x = s8[16,16] custom-call(a), custom_call_target="foo"
  ROOT y = s8[16,16] add(x, b)
})",
                                 "cc.hlo");
  const CoverageReport r = coverage(gemmini(), *module, safetyNet());
  EXPECT_EQ(row(r, "custom-call").offloaded, 0);
  ASSERT_EQ(row(r, "custom-call").reasons.size(), 1u);
  EXPECT_NE(row(r, "custom-call").reasons.begin()->first.find("custom-call"), std::string::npos);
  EXPECT_EQ(row(r, "add").operations, 1);
}

TEST(Coverage, OperationFlops) {
  auto module = hlo::parseModule(kGemmThenExp, "mixed.hlo");
  std::map<std::string, double> flops;
  for (const auto& inst : module->entry()->instructions())
    flops[inst->name()] = operationFlops(*inst);
  EXPECT_DOUBLE_EQ(flops.at("p"), 8192);  // 2 per multiply-add
  EXPECT_DOUBLE_EQ(flops.at("q"), 0);     // a convert moves data
  EXPECT_DOUBLE_EQ(flops.at("e"), 256);   // one per element
}

}  // namespace
}  // namespace tacit::backend
