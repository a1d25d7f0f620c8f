// `tacit tune` (issue 24, acceptance 4, at test scale): successive halving over prefix
// simulations finds the exhaustive search's fastest schedule (within 5 %) for a tenth of its
// simulated instructions, deterministically for a seed, whatever the threads; the program it
// returns computes the kernel. The full-size measurement (Gemmini 512^3) is in docs/tuning.md.
#include <gtest/gtest.h>

#include <chrono>
#include <set>

#include "backend/tune.h"
#include "backend/verify.h"
#include "common/paths.h"
#include "common/slowdown.h"
#include "hlo/parser.h"
#include "isel/target.h"
#include "support/diagnostic.h"
#include "support/source.h"

namespace tacit::backend {
namespace {

const taidl::Isa& gemmini() {
  static const taidl::Isa isa = taidl::loadIsaFile(testing::sourceDir() + "/isa/gemmini.taidl");
  return isa;
}

std::unique_ptr<hlo::HloModule> gemm(int64_t n) {
  const std::string s = "s8[" + std::to_string(n) + "," + std::to_string(n) + "]";
  const std::string w = "s32[" + std::to_string(n) + "," + std::to_string(n) + "]";
  return hlo::parseModule("HloModule gemm\nENTRY main {\n  a = " + s + " parameter(0)\n  b = " + s +
                              " parameter(1)\n  lo = s32[] constant(-128)\n" +
                              "  hi = s32[] constant(127)\n  wa = " + w +
                              " convert(a)\n  wb = " + w + " convert(b)\n  p = " + w +
                              " dot(wa, wb), lhs_contracting_dims={1}, "
                              "rhs_contracting_dims={0}\n  c = " +
                              w + " clamp(lo, p, hi)\n  ROOT r = " + s + " convert(c)\n}\n",
                          "gemm.hlo");
}

TEST(TuningSpace, CoversTilesOrdersSplitsAndBuffers) {
  const isel::Target target(gemmini());
  std::vector<TileSchedule> space = tuningSpace(target, *gemm(256));
  std::set<int64_t> tiles, blocks, buffers;
  std::set<std::vector<int64_t>> orders;
  for (const TileSchedule& s : space) {
    tiles.insert(s.tile[0]);
    orders.insert(s.order);
    blocks.insert(s.contraction);
    buffers.insert(s.buffers);
  }
  EXPECT_EQ(tiles, (std::set<int64_t>{16, 32, 64}));
  EXPECT_EQ(orders.size(), 2u);
  EXPECT_EQ(blocks, (std::set<int64_t>{16, 32, 64}));  // 256 is more than four unit depths
  EXPECT_EQ(buffers, (std::set<int64_t>{1, 2, 3, 4, 6, 8}));
  // Not a kernel of one dot: no space.
  auto add = hlo::parseModule(
      "HloModule add\nENTRY main {\n  a = s8[64,64] parameter(0)\n  ROOT r = s8[64,64] add(a, "
      "a)\n}\n",
      "add.hlo");
  EXPECT_TRUE(tuningSpace(target, *add).empty());
}

TEST(Tune, MultiFidelityFindsTheExhaustiveOptimumForAFractionOfItsSimulations) {
  const isel::Target target(gemmini());
  auto kernel = gemm(256);
  // The unit tiles' schedules with the contraction in unit blocks: 24 loop nests (two loop
  // orders, two accumulators, six buffer counts) over six tile kernels, built in about a second.
  std::vector<TileSchedule> space;
  for (TileSchedule& s : tuningSpace(target, *kernel)) {
    if (s.tile == std::vector<int64_t>{16, 16} && s.contraction == 16)
      space.push_back(std::move(s));
  }
  CompileOptions options;
  Tuner tuner(target, *kernel, options, space);
  ASSERT_GE(tuner.built(), 12u);
  TuneResult all = tuner.search({.method = TuneMethod::kExhaustive, .threads = 2});
  TuneOptions multi{.seed = 3, .threads = 2, .min_prefix = 256};
  TuneResult mf = tuner.search(multi);
  int64_t optimum = INT64_MAX;
  for (const TuneEvaluation& e : all.evaluations)
    optimum = std::min(optimum, e.cycles);
  EXPECT_EQ(all.evaluations.size(), tuner.built());
  EXPECT_EQ(all.best.costs.cycles, optimum);
  EXPECT_LE(static_cast<double>(mf.best.costs.cycles), 1.05 * static_cast<double>(optimum));
  EXPECT_LE(mf.full_evaluations, 0.35 * all.full_evaluations);
  // The fastest program is the one returned, and it computes the kernel.
  EXPECT_EQ(programCycles(gemmini(), mf.best.program), mf.best.costs.cycles);
  EXPECT_TRUE(verify(gemmini(), *kernel, mf.best.program, {.sets = 1, .seed = 2}).ok);
  // Deterministic for a seed, with one thread or two.
  multi.threads = 1;
  TuneResult again = tuner.search(multi);
  ASSERT_EQ(again.evaluations.size(), mf.evaluations.size());
  for (size_t i = 0; i < mf.evaluations.size(); ++i) {
    EXPECT_EQ(again.evaluations[i].schedule, mf.evaluations[i].schedule) << i;
    EXPECT_EQ(again.evaluations[i].cycles, mf.evaluations[i].cycles) << i;
  }
  // Resuming: an interrupted search's log (every simulation but the last three) gives the same
  // search, running only what the log lacks.
  std::vector<TuneEvaluation> logged;
  multi.evaluated = [&](const TuneEvaluation& e) {
    logged.push_back(TuneEvaluation::parse(e.json(), "log.jsonl", 1));  // through its text
  };
  tuner.search(multi);
  ASSERT_EQ(logged.size(), mf.evaluations.size());
  multi.evaluated = nullptr;
  multi.known.assign(logged.begin(), logged.end() - 3);
  TuneResult resumed = tuner.search(multi);
  EXPECT_EQ(resumed.reused, logged.size() - 3);
  EXPECT_EQ(resumed.simulations, 3u);
  EXPECT_EQ(resumed.best.schedule, mf.best.schedule);
  EXPECT_EQ(resumed.best.costs.cycles, mf.best.costs.cycles);
  // The single-fidelity search spends what successive halving would, on full simulations.
  TuneResult single = tuner.search({.method = TuneMethod::kSingleFidelity, .seed = 3});
  EXPECT_LT(single.simulations, all.simulations);
  EXPECT_GE(single.best.costs.cycles, optimum);
}

// A float contraction deeper than the ISA's dots (Trainium's example, K = 1024 against nc_matmul's
// 128 partitions) has split schedules only when re-association is asked for; they are marked so in
// the log and the emitted schedule, and the tuned program computes the blocked kernel bit for bit
// (verified against CompileResult::computes), not the kernel, from which it differs by rounding.
TEST(Tune, AFloatContractionSplitsOnlyWithReassociationAndSaysSo) {
  const taidl::Isa isa = taidl::loadIsaFile(testing::sourceDir() + "/isa/trainium.taidl");
  const isel::Target target(isa);
  const std::string file =
      testing::sourceDir() + "/examples/trainium/gemm_bias_relu_128x1024x512.hlo";
  auto kernel = hlo::parseModule(readFile(file), file);
  for (const TileSchedule& s : tuningSpace(target, *kernel))
    EXPECT_EQ(s.contraction, 0) << s.json();
  std::vector<TileSchedule> space;
  for (TileSchedule& s : tuningSpace(target, *kernel, /*reassociate=*/true)) {
    EXPECT_EQ(s.reassociate, s.contraction > 0) << s.json();
    if (s.contraction == 128 && s.accumulator == "psum" && s.buffers <= 2)
      space.push_back(std::move(s));
  }
  ASSERT_FALSE(space.empty());
  CompileOptions options;
  options.time_limit = std::chrono::seconds(10) * testing::kSlowdown;
  options.reassociate = true;
  Tuner tuner(target, *kernel, options, space);
  std::vector<TuneEvaluation> logged;
  TuneResult r = tuner.search(
      {.method = TuneMethod::kExhaustive, .threads = 2, .evaluated = [&](const TuneEvaluation& e) {
         logged.push_back(TuneEvaluation::parse(e.json(), "log", 1));
       }});
  ASSERT_TRUE(r.best.schedule && r.best.computes);
  EXPECT_TRUE(r.best.schedule->reassociate);
  EXPECT_NE(r.best.schedule->json().find("\"reassociate\": true"), std::string::npos);
  EXPECT_EQ(TileSchedule::parse(r.best.schedule->json(), "s.json"), *r.best.schedule);
  ASSERT_EQ(logged.size(), r.evaluations.size());
  for (const TuneEvaluation& e : logged)
    EXPECT_TRUE(e.schedule.reassociate);
  VerifyReport blocked = verify(isa, *r.best.computes, r.best.program,
                                {.sets = 1, .seed = 5, .original = kernel.get()});
  EXPECT_TRUE(blocked.ok) << blocked.mismatch;
  EXPECT_GT(blocked.deviation, 0);
  EXPECT_FALSE(verify(isa, *kernel, r.best.program, {.sets = 1, .seed = 5}).ok);
  // The marked schedule compiles only where re-association is allowed, and only on a float sum.
  CompileOptions plain;
  plain.time_limit = options.time_limit;
  plain.schedule = *r.best.schedule;
  EXPECT_THROW(compile(isa, *kernel, plain), DiagnosticError);
  try {
    TileSchedule::parse(R"({"tile": [16, 16], "order": [0, 1], "reassociate": true})", "s.json");
    FAIL() << "reassociate without a contraction";
  } catch (const DiagnosticError& e) {
    EXPECT_NE(std::string(e.what()).find("needs \"contraction\""), std::string::npos) << e.what();
  }
  CompileOptions integer;
  integer.schedule = TileSchedule{{16, 16}, {0, 1}, 16, "acc"};
  integer.schedule->reassociate = true;
  try {
    compile(gemmini(), *gemm(64), integer);
    FAIL() << "reassociate on an integer sum";
  } catch (const DiagnosticError& e) {
    EXPECT_NE(std::string(e.what()).find("marks a float contraction"), std::string::npos)
        << e.what();
  }
}

TEST(Tune, ALogLineThatIsNotOneIsADiagnostic) {
  for (const char* bad :
       {"{", "[]", R"({"schedule": 3})", R"({"schedule": {"tile": [16], "order": [0]}})"}) {
    try {
      TuneEvaluation::parse(bad, "log.jsonl", 7);
      FAIL() << bad;
    } catch (const DiagnosticError& e) {
      EXPECT_EQ(e.diagnostic().loc.line, 7u) << bad;
    }
  }
}

TEST(Tune, AKernelWithoutASpaceIsADiagnostic) {
  const isel::Target target(gemmini());
  auto add = hlo::parseModule(
      "HloModule add\nENTRY main {\n  a = s8[64,64] parameter(0)\n  ROOT r = s8[64,64] add(a, "
      "a)\n}\n",
      "add.hlo");
  try {
    tune(target, *add, {}, {});
    FAIL() << "tuned";
  } catch (const DiagnosticError& e) {
    EXPECT_NE(std::string(e.what()).find("has no schedule space"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace tacit::backend
