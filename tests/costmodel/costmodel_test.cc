// costmodel: features agree with what the timing model counts when it simulates, and the probe
// (a cut loop nest) extrapolates to its cycles; the ranking metrics; a model learns a ranking it is
// trained on and keeps learning from a base model (transfer).
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "backend/compiler.h"
#include "common/paths.h"
#include "costmodel/features.h"
#include "costmodel/gate.h"
#include "costmodel/model.h"
#include "hlo/parser.h"
#include "timing/timing.h"

namespace tacit::costmodel {
namespace {

const taidl::Isa& gemmini() {
  static const taidl::Isa isa = taidl::loadIsaFile(testing::sourceDir() + "/isa/gemmini.taidl");
  return isa;
}

// An m x k x n int8 GEMM tiled in 16x16 tiles, its contraction in 16-deep steps.
oracle::Program tiledGemm(int64_t buffers, int64_t m = 64, int64_t k = 256, int64_t n = 64) {
  auto t = [](const char* type, int64_t r, int64_t c) {
    return std::string(type) + "[" + std::to_string(r) + "," + std::to_string(c) + "]";
  };
  auto kernel = hlo::parseModule(
      "HloModule g\nENTRY main {\n  a = " + t("s8", m, k) +
          " parameter(0)\n  b = " + t("s8", k, n) + " parameter(1)\n  lo = s32[] constant(-128)\n" +
          "  hi = s32[] constant(127)\n  wa = " + t("s32", m, k) +
          " convert(a)\n  wb = " + t("s32", k, n) + " convert(b)\n  p = " + t("s32", m, n) +
          " dot(wa, wb), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n  c = " +
          t("s32", m, n) + " clamp(lo, p, hi)\n  ROOT r = " + t("s8", m, n) + " convert(c)\n}\n",
      "g.hlo");
  backend::CompileOptions o;
  backend::TileSchedule s{{16, 16}, {0, 1}, 16, "bias"};
  s.buffers = buffers;
  o.schedule = s;
  return backend::compile(gemmini(), *kernel, o).program;
}

float lg(double x) {
  return static_cast<float>(std::log2(1 + x));
}

TEST(Features, AgreeWithTheTimingModelsCounts) {
  for (int64_t buffers : {1, 4}) {
    const oracle::Program p = tiledGemm(buffers);
    Features f = programFeatures(gemmini(), p);
    ASSERT_EQ(f.names.size(), f.values.size());
    ASSERT_EQ(f.names.size(), kShared + gemmini().instructions.size());
    EXPECT_EQ(std::vector<std::string>(f.names.begin(), f.names.begin() + kShared), sharedNames());
    timing::Report r = timing::simulate(gemmini(), p, timing::zeroInputs(p));
    EXPECT_FLOAT_EQ(f.values[0], lg(static_cast<double>(r.instructions)));
    EXPECT_FLOAT_EQ(f.values[2], lg(static_cast<double>(r.hbm_bytes)));  // the bytes clauses
    EXPECT_FLOAT_EQ(f.values[3], lg(static_cast<double>(r.memory_busy)));
    EXPECT_FLOAT_EQ(f.values[4], 100.0f);  // MEM_LATENCY
    // The copies of multiple buffering are visible: four copies of each call per iteration.
    EXPECT_FLOAT_EQ(f.values[13], static_cast<float>(buffers));
  }
}

// The probe: the timing model on the loop nest cut to two and three iterations per loop,
// extrapolated. The tiled GEMM's 4x4 output tiles and 16-step contraction repeat one steady state,
// so the estimate is within a few percent of the full simulation; without loops it is exact.
TEST(Features, TheProbeExtrapolatesTheCutLoopNest) {
  for (int64_t buffers : {1, 4}) {
    const oracle::Program p = tiledGemm(buffers);
    Features f = programFeatures(gemmini(), p);
    const double cycles =
        static_cast<double>(timing::simulate(gemmini(), p, timing::zeroInputs(p)).cycles);
    const double estimate = std::exp2(static_cast<double>(f.values[kProbeEstimate])) - 1;
    EXPECT_EQ(f.names[kProbeEstimate], "log probe estimate");
    EXPECT_NEAR(estimate / cycles, 1.0, 0.05) << estimate << " vs " << cycles;
    EXPECT_GT(f.values[kProbeEstimate - 1], 0);  // cycles per innermost iteration
  }
  auto flat = hlo::parseModule(
      "HloModule f\nENTRY main {\n  a = s8[16,16] parameter(0)\n  b = s8[16,16] parameter(1)\n"
      "  ROOT r = s8[16,16] add(a, b)\n}\n",
      "f.hlo");
  const oracle::Program p = backend::compile(gemmini(), *flat).program;
  Features f = programFeatures(gemmini(), p);
  timing::Report r = timing::simulate(gemmini(), p, timing::zeroInputs(p));
  EXPECT_FLOAT_EQ(f.values[kProbeEstimate], lg(static_cast<double>(r.cycles)));
}

// The gate (gate.h): a correction of the probe's error scales only the cycles the probe
// extrapolated. A program the probe's cut covers (no loops; or loops of at most three trips, the
// cut's own) is predicted exactly, whatever the correction; a long loop nest's prediction moves
// with the correction over nearly all of its cycles.
TEST(Gate, ACoveredProgramIsTheProbesAndALongOneIsCorrected) {
  auto exact = [](const oracle::Program& p) {
    Features f = programFeatures(gemmini(), p);
    const double cycles =
        static_cast<double>(timing::simulate(gemmini(), p, timing::zeroInputs(p)).cycles);
    EXPECT_DOUBLE_EQ(f.probe.coverage, 1.0);
    EXPECT_FLOAT_EQ(f.values[kProbeCoverage], 1.0f);  // the shared feature
    EXPECT_EQ(f.probe.extrapolated, 0);
    EXPECT_FALSE(correctionOf(f.probe, cycles));  // nothing for a model to learn from
    for (double correction : {0.5, 1.0, 3.0})
      EXPECT_DOUBLE_EQ(gatedCycles(f.probe, correction), cycles);
  };
  auto flat = hlo::parseModule(
      "HloModule f\nENTRY main {\n  a = s8[16,16] parameter(0)\n  b = s8[16,16] parameter(1)\n"
      "  ROOT r = s8[16,16] add(a, b)\n}\n",
      "f.hlo");
  exact(backend::compile(gemmini(), *flat).program);
  exact(tiledGemm(1, 48, 48, 48));  // 3x3 tiles, 3 steps: the cut is the program

  const oracle::Program p = tiledGemm(1, 64, 512, 64);  // 4x4 tiles, 32 steps
  Features f = programFeatures(gemmini(), p);
  const double cycles =
      static_cast<double>(timing::simulate(gemmini(), p, timing::zeroInputs(p)).cycles);
  EXPECT_LT(f.probe.coverage, 0.2);
  EXPECT_FLOAT_EQ(f.values[kProbeCoverage], static_cast<float>(f.probe.coverage));
  EXPECT_GT(f.probe.extrapolated, 2 * f.probe.simulated);
  // No correction is the probe's estimate; a correction scales the extrapolated cycles only.
  EXPECT_NEAR(gatedCycles(f.probe, 1.0), std::exp2(f.values[kProbeEstimate]) - 1, 1e-4 * cycles);
  EXPECT_DOUBLE_EQ(gatedCycles(f.probe, 2.0) - gatedCycles(f.probe, 1.0), f.probe.extrapolated);
  // The label a model learns makes the prediction exact.
  const std::optional<double> c = correctionOf(f.probe, cycles);
  ASSERT_TRUE(c);
  EXPECT_DOUBLE_EQ(gatedCycles(f.probe, *c), cycles);
}

TEST(Metrics, KendallTauAndMape) {
  EXPECT_DOUBLE_EQ(kendallTau({1, 2, 3, 4}, {10, 20, 30, 40}), 1.0);
  EXPECT_DOUBLE_EQ(kendallTau({1, 2, 3, 4}, {4, 3, 2, 1}), -1.0);
  EXPECT_NEAR(kendallTau({1, 2, 3}, {1, 3, 2}), 1.0 / 3, 1e-12);
  EXPECT_DOUBLE_EQ(mape({110, 90}, {100, 100}), 0.1);
}

TEST(Model, LearnsARankingAndContinuesFromABase) {
  // cycles = 3 * a^2 + 40 * b + noise-free: a model of 200 rows ranks 100 unseen ones.
  std::mt19937_64 rng(5);
  std::uniform_real_distribution<float> u(0, 10);
  auto data = [&](size_t n, double scale) {
    std::pair<std::vector<std::vector<float>>, std::vector<double>> d;
    for (size_t i = 0; i < n; ++i) {
      float a = u(rng), b = u(rng);
      d.first.push_back({a, b});
      d.second.push_back(scale * (3 * a * a + 40 * b + 1));
    }
    return d;
  };
  auto [x, y] = data(200, 1);
  auto [tx, ty] = data(100, 1);
  Model m = Model::train(x, y, {});
  EXPECT_GT(kendallTau(m.predict(tx), ty), 0.9);
  EXPECT_LT(mape(m.predict(tx), ty), 0.1);
  // A new accelerator twice as slow: 20 of its samples move the base model's scale.
  auto [fx, fy] = data(20, 2);
  auto [gx, gy] = data(100, 2);
  Model adapted = Model::train(fx, fy, {.rounds = 50}, &m);
  EXPECT_LT(mape(adapted.predict(gx), gy), mape(m.predict(gx), gy));
  EXPECT_GT(kendallTau(adapted.predict(gx), gy), 0.9);
  // Deterministic.
  Model again = Model::train(x, y, {});
  EXPECT_EQ(again.predict(tx), m.predict(tx));
}

TEST(Model, RanksWithinGroupsWhatTheirScalesHide) {
  // Three kernels whose cycles differ by 1000x in scale; within each, cycles grow with a and
  // fall with b. The ranker orders an unseen kernel's programs from the groups' orders.
  std::mt19937_64 rng(9);
  std::uniform_real_distribution<float> u(0, 10);
  auto kernel = [&](double scale, size_t n, std::vector<std::vector<float>>& x,
                    std::vector<double>& y) {
    for (size_t i = 0; i < n; ++i) {
      float a = u(rng), b = u(rng);
      x.push_back({a, b, static_cast<float>(scale)});
      y.push_back(scale * (100 + 7 * a - 3 * b));
    }
  };
  std::vector<std::vector<float>> x, tx;
  std::vector<double> y, ty;
  for (double scale : {1.0, 30.0, 1000.0})
    kernel(scale, 60, x, y);
  kernel(200.0, 60, tx, ty);
  TrainParams ranking;
  ranking.objective = TrainParams::Objective::kRanking;
  Model m = Model::train(x, y, ranking, nullptr, {60, 60, 60});
  EXPECT_GT(kendallTau(m.predict(tx), ty), 0.8);
}

}  // namespace
}  // namespace tacit::costmodel
