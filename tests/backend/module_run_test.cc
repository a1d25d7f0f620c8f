// tacit run-module (backend/module_run.h): a module executed as accelerator programs and host
// steps computes what the HLO evaluator computes for the whole module, bit for bit; the partition
// never makes a region a path leaves and re-enters; verification catches a wrong step.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <set>
#include <unordered_map>

#include "backend/module_program.h"
#include "backend/module_report.h"
#include "backend/module_run.h"
#include "backend/partition.h"
#include "common/paths.h"
#include "common/slowdown.h"
#include "hlo/parser.h"
#include "hlo/verifier.h"
#include "hlo_eval/evaluator.h"
#include "stablehlo/input.h"
#include "support/diagnostic.h"
#include "support/source.h"
#include "taidl/isa.h"

namespace tacit::backend {
namespace {

using hlo::HloInstruction;

struct Spec {
  taidl::Isa isa;
  isel::Target target;
  explicit Spec(const std::string& name)
      : isa(taidl::loadIsaFile(testing::sourceDir() + "/isa/" + name + ".taidl")), target(isa) {}
};

const Spec& gemmini() {
  static const Spec spec("gemmini");
  return spec;
}

// The partition's options with each region's compile limit scaled to this build's speed (a
// safety net: the tests check which regions compile, and an unoptimised build is ~15x slower).
PartitionOptions safetyNet() {
  PartitionOptions options;
  options.time_limit *= testing::kSlowdown;
  return options;
}

// The module run's result against the HLO evaluator's for the whole module; empty when equal.
std::string runAndCompare(const Spec& spec, const ModuleProgram& program, uint64_t seed = 1,
                          const ModuleRunOptions& options = {}) {
  const hlo::HloModule& module = *program.partition.source;
  const std::vector<hlo::Literal> args = randomArguments(module, seed);
  const ModuleRun run = runModule(spec.isa, program, args, options);
  return firstOutputDifference(module, run.result, hlo::evaluate(module, args));
}

// Gemmini's int8 GEMM (a dot of widened int8 values, its sums clamped and narrowed to int8)
// between operations no ISA computes: a sort before it, a float exponential after it.
const char* kSortGemmExp = R"(HloModule sort_gemm_exp
less {
  x = s8[] parameter(0)
  y = s8[] parameter(1)
  ROOT lt = pred[] compare(x, y), direction=LT
}
ENTRY main {
  a = s8[16,16] parameter(0)
  b = s8[16,16] parameter(1)
  s = s8[16,16] sort(a), dimensions={1}, to_apply=less
  lo = s32[] constant(-128)
  hi = s32[] constant(127)
  wa = s32[16,16] convert(s)
  wb = s32[16,16] convert(b)
  p = s32[16,16] dot(wa, wb), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  c = s32[16,16] clamp(lo, p, hi)
  q = s8[16,16] convert(c)
  f = f32[16,16] convert(q)
  e = f32[16,16] exponential(f)
  ROOT out = (f32[16,16], s8[16,16]) tuple(e, q)
})";

TEST(ModuleRun, TheGemmRunsOnTheAcceleratorBetweenHostStepsAndVerifies) {
  auto module = hlo::parseModule(kSortGemmExp, "sort_gemm_exp.hlo");
  const ModuleProgram program = moduleProgram(partition(gemmini().target, *module, safetyNet()));
  ASSERT_EQ(program.partition.regions.size(), 1u);
  std::vector<std::string> offloaded;
  for (const HloInstruction* op : program.partition.regions[0].operations)
    offloaded.push_back(op->name());
  EXPECT_EQ(offloaded, (std::vector<std::string>{"wa", "wb", "p", "c", "q"}));
  // In order: the sort, the GEMM, then the float tail.
  std::vector<std::string> order;
  for (const ModuleStep& s : program.steps) {
    if (s.kind == StepKind::kAccelerator) order.push_back("accelerator");
    if (s.kind == StepKind::kHost) order.push_back(s.operation->name());
  }
  EXPECT_EQ(order, (std::vector<std::string>{"s", "accelerator", "f", "e"}));
  for (uint64_t seed : {1, 2, 3})
    EXPECT_EQ(runAndCompare(gemmini(), program, seed), "") << "seed " << seed;

  const std::vector<hlo::Literal> args = randomArguments(*module, 1);
  const ModuleRun run = runModule(gemmini().isa, program, args);
  EXPECT_GT(run.instructions, 0);
  const ModuleRunReport report = moduleRunReport(program, run, "gemmini", 1);
  EXPECT_EQ(report.accelerator_steps, 1);
  EXPECT_EQ(report.host_steps, 3);
  const std::string text = report.text();
  EXPECT_NE(text.find("5 operations: wa, wb, p, c, q"), std::string::npos) << text;
  EXPECT_NE(text.find("sort s: "), std::string::npos) << text;
  EXPECT_NE(text.find("exponential e: no instruction of ISA 'gemmini'"), std::string::npos) << text;
  EXPECT_NE(report.json().find("\"accelerator_steps\": 1"), std::string::npos);
}

// Proof that verification can fail: one element of the accelerator step's result corrupted.
// Two consecutive int8 GEMM layers, x·w1 saturated to int8, then ·w2: one region, one program, so
// the layer between them never leaves the chip — the module's HBM traffic is its three inputs and
// its output, once each (the intermediate would add 2 KiB: a store and a load).
TEST(ModuleRun, TwoGemmLayersKeepTheirIntermediateOnChip) {
  auto module = hlo::parseModule(R"(HloModule two_layers
ENTRY main {
  x = s8[32,32] parameter(0)
  w1 = s8[32,32] parameter(1)
  w2 = s8[32,32] parameter(2)
  lo = s32[] constant(-128)
  hi = s32[] constant(127)
  wx = s32[32,32] convert(x)
  ww1 = s32[32,32] convert(w1)
  p1 = s32[32,32] dot(wx, ww1), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  c1 = s32[32,32] clamp(lo, p1, hi)
  h = s8[32,32] convert(c1)
  wh = s32[32,32] convert(h)
  ww2 = s32[32,32] convert(w2)
  p2 = s32[32,32] dot(wh, ww2), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  c2 = s32[32,32] clamp(lo, p2, hi)
  ROOT y = s8[32,32] convert(c2)
})",
                                 "two_layers.hlo");
  const ModuleProgram program = moduleProgram(partition(gemmini().target, *module, safetyNet()));
  ASSERT_EQ(program.partition.regions.size(), 1u);
  EXPECT_TRUE(program.partition.host.empty());
  const std::vector<hlo::Literal> args = randomArguments(*module, 4);
  const ModuleRun run = runModule(gemmini().isa, program, args);
  EXPECT_EQ(run.hbm_bytes, 4 * 32 * 32);
  EXPECT_EQ(runAndCompare(gemmini(), program, 4), "");
  const std::string text = moduleRunReport(program, run, "gemmini", 4).text();
  EXPECT_NE(text.find("4096 bytes between HBM and the chip"), std::string::npos) << text;
}

TEST(ModuleRun, AWrongAcceleratorResultIsCaughtAndNamed) {
  auto module = hlo::parseModule(kSortGemmExp, "sort_gemm_exp.hlo");
  const ModuleProgram program = moduleProgram(partition(gemmini().target, *module, safetyNet()));
  ModuleRunOptions corrupt;
  corrupt.on_accelerator_results = [](const ModuleStep&, std::vector<hlo::Literal>& results) {
    ASSERT_FALSE(results.empty());
    results.back().bytes()[5] ^= 1;  // q, element 5
  };
  const std::string diff = runAndCompare(gemmini(), program, 1, corrupt);
  EXPECT_NE(diff.find("output 1 ('q'): element 5: module run"), std::string::npos) << diff;
}

// As the HLO evaluator, a run leaves out what the root does not depend on: a custom call nobody
// reads (which neither the evaluator nor an ISA computes) does not stop it.
TEST(ModuleRun, AnOperationTheRootDoesNotNeedIsNotRun) {
  auto module = hlo::parseModule(R"(HloModule dead
ENTRY main {
  a = s8[16,16] parameter(0)
  b = s8[16,16] parameter(1)
  unused = s8[16,16] custom-call(a), custom_call_target="foo"
  ROOT y = s8[16,16] add(a, b)
})",
                                 "dead.hlo");
  const ModuleProgram program = moduleProgram(partition(gemmini().target, *module, safetyNet()));
  EXPECT_EQ(program.count(StepKind::kHost), 1);  // the custom call, on the host
  EXPECT_EQ(runAndCompare(gemmini(), program), "");
  const ModuleRun run = runModule(gemmini().isa, program, randomArguments(*module, 1));
  EXPECT_EQ(run.steps.size(), 1u);  // the add's region alone
}

// Whether a path leaves `region` and comes back into it, with every region of the partition run
// as one step (an independent check of the partitioner's).
bool reentered(const ModulePartition& partition, const AcceleratorRegion& region) {
  std::unordered_map<const HloInstruction*, std::vector<const HloInstruction*>> users;
  for (const auto& inst : partition.module->entry()->instructions()) {
    for (const HloInstruction* o : inst->operands())
      users[o].push_back(inst.get());
  }
  std::unordered_map<const HloInstruction*, const AcceleratorRegion*> region_of;
  for (const AcceleratorRegion& r : partition.regions) {
    for (const HloInstruction* op : r.operations)
      region_of[op] = &r;
  }
  const std::set<const HloInstruction*> inside(region.operations.begin(), region.operations.end());
  std::set<const HloInstruction*> seen;
  std::vector<const HloInstruction*> stack;
  auto visit = [&](const HloInstruction* op) {
    if (!inside.count(op) && seen.insert(op).second) stack.push_back(op);
  };
  for (const HloInstruction* op : region.operations) {
    for (const HloInstruction* u : users[op])
      visit(u);
  }
  while (!stack.empty()) {
    const HloInstruction* op = stack.back();
    stack.pop_back();
    auto r = region_of.find(op);
    std::vector<const HloInstruction*> next = users[op];
    if (r != region_of.end()) {
      for (const HloInstruction* member : r->second->operations)
        next.insert(next.end(), users[member].begin(), users[member].end());
    }
    for (const HloInstruction* u : next) {
      if (inside.count(u)) return true;
      visit(u);
    }
  }
  return false;
}

// Two GEMMs joined directly (q feeds the second) and through a sort on the host (q -> s -> ws):
// the operations of both GEMMs are connected without the sort, but a region holding both would
// need the sort's result before it could start. The partition asks the second GEMM after the
// first, as a region of its own.
const char* kReentry = R"(HloModule reentry
less {
  x = s8[] parameter(0)
  y = s8[] parameter(1)
  ROOT lt = pred[] compare(x, y), direction=LT
}
ENTRY main {
  a = s8[16,16] parameter(0)
  b = s8[16,16] parameter(1)
  lo = s32[] constant(-128)
  hi = s32[] constant(127)
  wa = s32[16,16] convert(a)
  wb = s32[16,16] convert(b)
  p = s32[16,16] dot(wa, wb), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  c = s32[16,16] clamp(lo, p, hi)
  q = s8[16,16] convert(c)
  s = s8[16,16] sort(q), dimensions={1}, to_apply=less
  wq = s32[16,16] convert(q)
  ws = s32[16,16] convert(s)
  p2 = s32[16,16] dot(wq, ws), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  c2 = s32[16,16] clamp(lo, p2, hi)
  ROOT q2 = s8[16,16] convert(c2)
})";

TEST(ModuleRun, NoRegionIsReenteredByAPathThroughTheHost) {
  auto module = hlo::parseModule(kReentry, "reentry.hlo");
  ModulePartition parts = partition(gemmini().target, *module, safetyNet());
  ASSERT_FALSE(parts.regions.empty());
  std::unordered_map<std::string, size_t> region_of;
  for (size_t i = 0; i < parts.regions.size(); ++i) {
    EXPECT_FALSE(reentered(parts, parts.regions[i])) << parts.regions[i].text;
    for (const HloInstruction* op : parts.regions[i].operations)
      region_of[op->name()] = i;
  }
  // The first GEMM is offloaded whole; the second GEMM's dot, which reads the sort, is not in
  // its region.
  for (const char* name : {"wa", "wb", "p", "c", "q"}) {
    ASSERT_TRUE(region_of.count(name)) << name;
    EXPECT_EQ(region_of[name], region_of["p"]) << name;
  }
  EXPECT_TRUE(!region_of.count("p2") || region_of["p2"] != region_of["p"]);
  const ModuleProgram program = moduleProgram(std::move(parts));
  EXPECT_EQ(runAndCompare(gemmini(), program), "");
}

// The shared corpus: every module where something is offloaded runs and verifies. A fixed subset
// of modules and ISAs (each offloads regions: QKV the whole attention tutorial, TPUv1 14 and 15
// regions of attention training steps) that partitions, runs and verifies in about 10 s.
TEST(ModuleRun, CorpusModulesWithOffloadedRegionsVerify) {
  TACIT_REQUIRE_SHARED_DATA("corpus/hlo");
  const std::string corpus = testing::sharedDir() + "/corpus/hlo/";
  const std::vector<std::pair<std::string, std::vector<std::string>>> cases = {
      {"qkv",
       {"attention_qkv_bf16_64x64_act_tutorial.hlo",
        "attention_transposed_layout_fwd_bwd_jax.hlo"}},
      {"tpuv1", {"attention_bias_bf16_fwd_bwd_jax.hlo", "attention_fwd_bwd_variant_jax.hlo"}},
      {"gemmini", {"attention_causal_bf16_fwd_bwd_jax.hlo"}},
  };
  int offloading = 0;
  for (const auto& [isa_name, files] : cases) {
    const Spec spec(isa_name);
    for (const std::string& file : files) {
      SCOPED_TRACE(isa_name + " " + file);
      auto module = stablehlo::parseAnyModule(readFile(corpus + file), corpus + file);
      hlo::verifyModule(*module);
      PartitionOptions options;
      options.time_limit = std::chrono::milliseconds(1000);
      const ModuleProgram program = moduleProgram(partition(spec.target, *module, options));
      if (program.partition.regions.empty()) continue;
      offloading += static_cast<int>(program.partition.regions.size());
      EXPECT_EQ(runAndCompare(spec, program), "");
    }
  }
  EXPECT_GE(offloading, 30);  // regions over the subset (33 when measured)
}

}  // namespace
}  // namespace tacit::backend
