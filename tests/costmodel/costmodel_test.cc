// costmodel: features agree with what the timing model counts when it simulates, and the probe
// (a cut loop nest) extrapolates to its cycles; the ranking metrics; a model learns a ranking it is
// trained on and keeps learning from a base model (transfer).
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "backend/compiler.h"
#include "common/paths.h"
#include "costmodel/features.h"
#include "costmodel/model.h"
#include "hlo/parser.h"
#include "timing/timing.h"

namespace tacit::costmodel {
namespace {

const taidl::Isa& gemmini() {
  static const taidl::Isa isa = taidl::loadIsaFile(testing::sourceDir() + "/isa/gemmini.taidl");
  return isa;
}

oracle::Program tiledGemm(int64_t buffers) {
  auto kernel = hlo::parseModule(
      "HloModule g\nENTRY main {\n  a = s8[64,256] parameter(0)\n  b = s8[256,64] parameter(1)\n"
      "  lo = s32[] constant(-128)\n  hi = s32[] constant(127)\n  wa = s32[64,256] convert(a)\n"
      "  wb = s32[256,64] convert(b)\n  p = s32[64,64] dot(wa, wb), lhs_contracting_dims={1}, "
      "rhs_contracting_dims={0}\n  c = s32[64,64] clamp(lo, p, hi)\n"
      "  ROOT r = s8[64,64] convert(c)\n}\n",
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
