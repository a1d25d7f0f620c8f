// `--cost cycles` (issue 24, acceptance 5): candidates ranked by the timing model. On Gemmini's
// AxB+C+D (examples/gemmini/mac_add.hlo) the spec cost and the cycles disagree: the cheapest
// program under the spec cost stores the saturated mac result to HBM and loads it back into the
// accumulator to add D — two transfers, each paying the memory latency, one after the other on
// the critical path — while the fastest one adds D on the array (a second matmul with an
// identity matrix loaded from HBM while the first one runs): more beats and instructions, fewer
// cycles. Both programs compute the kernel.
#include <gtest/gtest.h>

#include "backend/compiler.h"
#include "backend/verify.h"
#include "common/paths.h"
#include "hlo/parser.h"
#include "support/source.h"

namespace tacit::backend {
namespace {

TEST(CostCycles, ChoosesTheFasterProgramWhereTheSpecCostDisagrees) {
  const std::string root = testing::sourceDir() + "/";
  taidl::Isa isa = taidl::loadIsaFile(root + "isa/gemmini.taidl");
  std::string path = root + "examples/gemmini/mac_add.hlo";
  auto kernel = hlo::parseModule(readFile(path), path);
  CompileOptions by_spec, by_cycles;
  by_spec.cost = CostModel::kSpec;
  by_cycles.cost = CostModel::kCycles;
  CompileResult s = compile(isa, *kernel, by_spec);
  CompileResult c = compile(isa, *kernel, by_cycles);
  ASSERT_EQ(c.model, CostModel::kCycles);
  int64_t s_cycles = programCycles(isa, s.program);
  EXPECT_EQ(c.costs.cycles, programCycles(isa, c.program));
  EXPECT_LT(c.costs.cycles, s_cycles);    // faster in cycles
  EXPECT_LT(s.costs.spec, c.costs.spec);  // cheaper under the spec cost
  EXPECT_TRUE(verify(isa, *kernel, s.program, {.sets = 2, .seed = 5}).ok);
  EXPECT_TRUE(verify(isa, *kernel, c.program, {.sets = 2, .seed = 5}).ok);
  // The reason: the spec program's HBM round trip of the intermediate.
  auto stores = [&](const CompileResult& r) {
    int64_t n = 0;
    for (const oracle::Stmt& st : r.program.body)
      n += st.kind == oracle::StmtKind::kCall && !st.is_macro &&
           isa.instructions[static_cast<size_t>(st.unit)].name.text.rfind("mvout", 0) == 0;
    return n;
  };
  EXPECT_EQ(stores(s), 2);  // the intermediate and the result
  EXPECT_EQ(stores(c), 1);  // the result
}

}  // namespace
}  // namespace tacit::backend
