// dynamic-update-slice at constant starts (isel/kernel.cc imports it as the concatenation of the
// operand's untouched slices around the update): compiled programs compute what the evaluator
// does, including starts that XLA clamps; starts computed at run time are refused with the
// instruction's position.
#include <gtest/gtest.h>

#include "backend/compiler.h"
#include "backend/verify.h"
#include "common/paths.h"
#include "hlo/parser.h"
#include "oracle/tasm.h"
#include "support/diagnostic.h"

namespace tacit::backend {
namespace {

struct UpdateCase {
  const char* isa;
  const char* kernel;
};

class ConstantUpdate : public ::testing::TestWithParam<UpdateCase> {};

TEST_P(ConstantUpdate, CompilesAndVerifies) {
  taidl::Isa isa = taidl::loadIsaFile(testing::sourceDir() + "/isa/" + GetParam().isa + ".taidl");
  auto kernel = hlo::parseModule(GetParam().kernel, "update.hlo");
  CompileResult result = compile(isa, *kernel, {});
  VerifyReport r = verify(isa, *kernel, result.program, {.sets = 3, .seed = 3});
  EXPECT_TRUE(r.ok) << r.mismatch << "\n" << oracle::printProgram(isa, result.program);
}

INSTANTIATE_TEST_SUITE_P(
    Kernels, ConstantUpdate,
    ::testing::Values(
        // Rows 16..31 of a QKV tile replaced.
        UpdateCase{"qkv", R"(HloModule rows
ENTRY main {
  x = bf16[64,64] parameter(0)
  u = bf16[16,64] parameter(1)
  i = s32[] constant(16)
  z = s32[] constant(0)
  ROOT o = bf16[64,64] dynamic-update-slice(x, u, i, z)
})"},
        // A Gemmini block at column 40, which XLA clamps to 16 (the update must fit).
        UpdateCase{"gemmini", R"(HloModule block
ENTRY main {
  x = s8[32,32] parameter(0)
  u = s8[16,16] parameter(1)
  i = s32[] constant(16)
  j = s32[] constant(40)
  ROOT o = s8[32,32] dynamic-update-slice(x, u, i, j)
})"},
        // A computed AMX row placed past the end (clamped to the last row; the column start -3 is
        // clamped to 0).
        UpdateCase{"amx", R"(HloModule row
ENTRY main {
  x = f32[2,16] parameter(0)
  a = f32[1,16] parameter(1)
  b = f32[1,16] parameter(2)
  s = f32[1,16] add(a, b)
  i = s32[] constant(5)
  j = s32[] constant(-3)
  ROOT o = f32[2,16] dynamic-update-slice(x, s, i, j)
})"}),
    [](const ::testing::TestParamInfo<UpdateCase>& p) { return std::string(p.param.isa); });

TEST(ConstantUpdate, RunTimeStartsAreRefusedWithThePosition) {
  taidl::Isa isa = taidl::loadIsaFile(testing::sourceDir() + "/isa/qkv.taidl");
  auto kernel = hlo::parseModule(R"(HloModule dynamic
ENTRY main {
  x = bf16[64,64] parameter(0)
  u = bf16[16,64] parameter(1)
  i = s32[] parameter(2)
  z = s32[] constant(0)
  ROOT o = bf16[64,64] dynamic-update-slice(x, u, i, z)
})",
                                 "dynamic.hlo");
  try {
    compile(isa, *kernel, {});
    FAIL() << "expected a diagnostic";
  } catch (const DiagnosticError& e) {
    EXPECT_EQ(e.diagnostic().loc.line, 7u) << e.what();
    EXPECT_NE(std::string(e.what()).find("start indices are not constants"), std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace tacit::backend
