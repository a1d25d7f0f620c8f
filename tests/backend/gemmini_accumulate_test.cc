// Gemmini's accumulating mvin (isa/gemmini.taidl: mvin_acc_accumulate, mvin_acc8_accumulate):
// the oracle adds the loaded rows onto the accumulator rows in int32 with wrap-around, touches
// only the rows it loads, and the compiler selects it for an int8 addition.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "backend/compiler.h"
#include "backend/verify.h"
#include "common/paths.h"
#include "hlo/parser.h"
#include "hlo_eval/random_literal.h"
#include "oracle/machine.h"
#include "oracle/tasm.h"
#include "support/source.h"

namespace tacit::backend {
namespace {

taidl::Isa gemmini() {
  return taidl::loadIsaFile(testing::sourceDir() + "/isa/gemmini.taidl", {{"DIM", 16}});
}

// Two's-complement int32 sum, as the accumulator computes it.
int64_t wrap32(int64_t x) {
  return static_cast<int32_t>(static_cast<uint32_t>(static_cast<uint64_t>(x)));
}

TEST(GemminiAccumulate, AddsLoadedRowsOntoTheAccumulatorInInt32) {
  taidl::Isa isa = gemmini();
  oracle::Program p = oracle::parseProgram(isa, R"(kernel accumulate hbm=5888 {
  input a @0 : s8[16,16];
  input b @256 : s8[16,16];
  input x @512 : s32[16,16];
  input y @1536 : s32[16,16];
  output sum8 @2560 : s32[16,16];
  output sum32 @3584 : s32[16,16];
  output sat @4608 : s8[16,16];
  output part @4864 : s32[16,16];
  mvin_acc8(rows=16, hbm_addr=0, acc_addr=0);
  mvin_acc8_accumulate(rows=16, hbm_addr=256, acc_addr=0);
  mvout_acc32(rows=16, hbm_addr=2560, acc_addr=0);
  mvout_acc(rows=16, hbm_addr=4608, acc_addr=0);
  mvin_acc(rows=1, hbm_addr=512, acc_addr=16);
  mvin_acc_accumulate(rows=1, hbm_addr=1536, acc_addr=16);
  mvout_acc32(rows=16, hbm_addr=3584, acc_addr=16);
  mvin_acc8(rows=16, hbm_addr=0, acc_addr=32);
  mvin_acc8_accumulate(rows=5, hbm_addr=304, acc_addr=35);
  mvout_acc32(rows=16, hbm_addr=4864, acc_addr=32);
})",
                                           "accumulate.tasm");
  const hlo::Shape s8(hlo::PrimitiveType::kS8, {16, 16}), s32(hlo::PrimitiveType::kS32, {16, 16});
  hlo::Literal a = hlo::randomLiteral(s8, 1), b = hlo::randomLiteral(s8, 2);
  // int32 operands at the edges of the range: the sums overflow in both directions.
  hlo::Literal x(s32), y(s32);
  for (int64_t i = 0; i < 256; ++i) {
    x.setInt64(i, i % 2 ? std::numeric_limits<int32_t>::max() - i
                        : std::numeric_limits<int32_t>::min() + i);
    y.setInt64(i, i % 2 ? 1000 + i : -1000 - i);
  }
  auto out = oracle::run(isa, p, {{"a", a}, {"b", b}, {"x", x}, {"y", y}});
  for (int64_t i = 0; i < 256; ++i) {
    const int64_t row = i / 16, sum = a.getInt64(i) + b.getInt64(i);
    EXPECT_EQ(out.at("sum8").getInt64(i), sum) << i;
    EXPECT_EQ(out.at("sat").getInt64(i), std::clamp<int64_t>(sum, -128, 127)) << i;
    EXPECT_EQ(out.at("sum32").getInt64(i), wrap32(x.getInt64(i) + y.getInt64(i))) << i;
    // Only rows 3..7 were accumulated onto; the others keep what mvin_acc8 wrote.
    EXPECT_EQ(out.at("part").getInt64(i), row >= 3 && row < 8 ? sum : a.getInt64(i)) << i;
  }
}

// A+B with Gemmini library semantics (int8 inputs, saturated int8 result) is two loads into the
// accumulator, the second accumulating, and a saturating store: what Gemmini's own library does
// for a residual addition.
TEST(GemminiAccumulate, AnInt8AdditionCompilesToAnAccumulatingLoad) {
  taidl::Isa isa = gemmini();
  const std::string file = testing::sourceDir() + "/examples/gemmini/add.hlo";
  auto kernel = hlo::parseModule(readFile(file), file);
  CompileResult r = compile(isa, *kernel);
  std::vector<std::string> calls;
  for (const oracle::Stmt& s : r.program.body) {
    ASSERT_EQ(s.kind, oracle::StmtKind::kCall);
    ASSERT_FALSE(s.is_macro);
    calls.push_back(isa.instructions[static_cast<size_t>(s.unit)].name.text);
  }
  std::sort(calls.begin(), calls.end());
  EXPECT_EQ(calls, (std::vector<std::string>{"mvin_acc8", "mvin_acc8_accumulate", "mvout_acc"}))
      << oracle::printProgram(isa, r.program);
  VerifyReport v = verify(isa, *kernel, r.program, {.sets = 3, .seed = 5});
  EXPECT_TRUE(v.ok) << v.mismatch;
}

}  // namespace
}  // namespace tacit::backend
