// Learned cost models against the timing model (issue 24, items 3 and 4; docs/costmodel.md).
//
// Data: int8 GEMMs of several shapes on Gemmini (and u8·s8 GEMMs on AMX, int8 GEMMs in layout tiles
// on TPUv1, bf16 GEMMs on Trainium, whose spaces split the float contraction: --reassociate);
// each kernel's tuning space (backend/tune.h) built, every schedule's program simulated in full by
// the timing model (the label) and described by its features (costmodel/features.h: sums over the
// text and a probe of the loop nest cut to three iterations per loop). Two tables:
//
//  1. held-out kernels (Gemmini, AMX, TPUv1, Trainium): for each kernel, a model trained on the
//     other kernels' programs ranks this kernel's schedules; Kendall's tau against the timing
//     model's ranking, the MAPE, the cycles of the ranking model's first choice over the best, and
//     the probe's coverage (the share of the program's calls its cut ran);
//  2. transfer to a new accelerator design (Gemmini with a 32x32 array, DIM=32): a model trained
//     on DIM=16 (shared features only) and transferred with k DIM=32 samples by costmodel::adapt
//     (cross-validation on the k samples, by kernel, chooses the source as it is, the source
//     continued with 50 rounds on them, or a model of them alone), beside the source continued
//     (always) and a model trained from scratch on the same k samples; tau on the held-out DIM=32
//     kernels, for k in {0, 10, 50, 200, all}, averaged over 5 draws of the samples, and how often
//     adapt chose each candidate; and across accelerators, AMX -> Gemmini DIM=16, Gemmini DIM=16
//     -> TPUv1 and Gemmini DIM=16 -> Trainium (the same table, the target's kernels held out in
//     turn).
//
// Four models: a regression of cycles, a ranking, a regression of the cycles' ratio to the
// probe's estimate, and that model of the probe's error gated on the probe's coverage
// (costmodel/gate.h). A kernel whose programs all take the same cycles has nothing to rank and is
// left out of the means.
//
// Usage: bench_costmodel [--quick] [--cache DIR]   (--quick: fewer kernels; DIR, default
// costmodel-data: the dataset, built on the first run, read on the next)
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "backend/tune.h"
#include "common/gemm_hlo.h"
#include "costmodel/adapt.h"
#include "costmodel/features.h"
#include "costmodel/gate.h"
#include "costmodel/model.h"
#include "hlo/parser.h"
#include "isel/target.h"
#include "oracle/tasm.h"
#include "taidl/isa.h"

namespace {

using namespace tacit;

struct Shape {
  int64_t m, k, n;
  std::string name() const {
    return std::to_string(m) + "x" + std::to_string(k) + "x" + std::to_string(n);
  }
};

struct Sample {
  size_t kernel = 0;
  std::vector<float> all, shared;
  costmodel::ProbeParts probe;  // what a model of the probe's error corrects (costmodel/gate.h)
  double cycles = 0;
};

// Every schedule's program of each kernel's tuning space and its cycles, simulated in full; kept
// in `cache` (one .tasm per program and a cycles file per kernel: the dataset, readable by
// `tacit run --timing`) and read back from there when present.
// `label` names the design (a cache directory prefix and the printed name); `gemm` writes the
// design's GEMM kernel of a shape (bench/common/gemm_hlo.h).
// `reassociate`: a float GEMM's space with its contraction split in blocks (the programs compute
// the blocked kernel, CompileOptions::reassociate; their cycles are what is learnt).
std::vector<Sample> dataset(const taidl::Isa& isa, const std::string& label,
                            std::string (*gemm)(int64_t, int64_t, int64_t),
                            const std::vector<Shape>& shapes, const std::string& cache,
                            bool reassociate = false) {
  const isel::Target target(isa);
  std::vector<Sample> out;
  for (size_t k = 0; k < shapes.size(); ++k) {
    const std::string dir = cache + "/" + label + "_" + shapes[k].name();
    std::vector<std::pair<oracle::Program, double>> programs;
    if (std::filesystem::exists(dir + "/cycles.txt")) {
      std::ifstream in(dir + "/cycles.txt");
      std::string file;
      double cycles = 0;
      while (in >> file >> cycles)
        programs.emplace_back(oracle::parseProgramFile(isa, dir + "/" + file), cycles);
    } else {
      const Shape& x = shapes[k];
      auto kernel = hlo::parseModule(gemm(x.m, x.k, x.n), "gemm.hlo");
      backend::CompileOptions options;
      options.reassociate = reassociate;
      backend::Tuner tuner(target, *kernel, options);
      backend::TuneResult r = tuner.search({.method = backend::TuneMethod::kExhaustive});
      std::map<std::string, int64_t> cycles;
      for (const backend::TuneEvaluation& e : r.evaluations)
        cycles[e.schedule.json()] = e.cycles;
      std::filesystem::create_directories(dir);
      std::ofstream list(dir + "/cycles.txt");
      tuner.forEachProgram([&](const backend::TileSchedule& s, const oracle::Program& p) {
        const std::string file = std::to_string(programs.size()) + ".tasm";
        std::ofstream(dir + "/" + file) << oracle::printProgram(isa, p);
        list << file << " " << cycles.at(s.json()) << "\n";
        programs.emplace_back(p, static_cast<double>(cycles.at(s.json())));
      });
    }
    for (const auto& [p, cycles] : programs) {
      costmodel::Features f = costmodel::programFeatures(isa, p);
      out.push_back(Sample{
          k, f.values, std::vector<float>(f.values.begin(), f.values.begin() + costmodel::kShared),
          f.probe, cycles});
    }
    std::printf("  %-10s %-12s %zu programs\n", label.c_str(), shapes[k].name().c_str(),
                programs.size());
    std::fflush(stdout);
  }
  return out;
}

struct Split {
  std::vector<std::vector<float>> x;
  std::vector<double> y;
  std::vector<size_t> kernel;
  std::vector<costmodel::ProbeParts> probe;
  // The sizes of the runs of rows of one kernel (a ranking model's groups).
  std::vector<unsigned> groups() const {
    std::vector<unsigned> g;
    for (size_t i = 0; i < kernel.size(); ++i) {
      if (i == 0 || kernel[i] != kernel[i - 1])
        g.push_back(1);
      else
        ++g.back();
    }
    return g;
  }
  void add(const Sample& d, bool shared) {
    x.push_back(shared ? d.shared : d.all);
    y.push_back(d.cycles);
    kernel.push_back(d.kernel);
    probe.push_back(d.probe);
  }
};

Split rows(const std::vector<Sample>& data, const std::function<bool(const Sample&)>& keep,
           bool shared) {
  Split s;
  for (const Sample& d : data) {
    if (keep(d)) s.add(d, shared);
  }
  return s;
}

costmodel::TrainParams objective(bool ranking) {
  costmodel::TrainParams p;
  if (ranking) p.objective = costmodel::TrainParams::Objective::kRanking;
  return p;
}

// The models: a regression of cycles; a ranking; a regression of the ratio of the cycles to the
// probe's estimate (where no probe ran, to the largest analytic bound: costmodel/gate.h),
// multiplied back by it; and the same model of the probe's error gated (costmodel/gate.h): trained
// on the correction of the estimate's extrapolated part and applied to that part only, so that
// where the probe's cut covers the program the prediction is the probe's estimate. The ratio
// models' labels are scaled by 1000: the model takes the log of labels of at least 1.
enum Kind { kCycles, kRank, kRatio, kGated };
constexpr int kKinds = 4;

// What a model of `kind` learns from row `i` of `s`: the cycles; for the ratio models the ratio to
// the probe's estimate, or the correction of its extrapolated part (gated; NaN where the probe
// extrapolated nothing: such a program says nothing about the probe's error).
double labelOf(const Split& s, size_t i, Kind kind) {
  if (kind == kCycles || kind == kRank) return s.y[i];
  if (kind == kRatio) return 1000 * s.y[i] / s.probe[i].estimate();
  std::optional<double> c = costmodel::correctionOf(s.probe[i], s.y[i]);
  return c ? 1000 * *c : std::nan("");
}

// The rows a model of `kind` learns from and their labels.
std::pair<Split, std::vector<double>> learnable(const Split& s, Kind kind) {
  Split out;
  std::vector<double> y;
  for (size_t i = 0; i < s.y.size(); ++i) {
    const double label = labelOf(s, i, kind);
    if (std::isnan(label)) continue;
    out.x.push_back(s.x[i]);
    out.y.push_back(s.y[i]);
    out.kernel.push_back(s.kernel[i]);
    out.probe.push_back(s.probe[i]);
    y.push_back(label);
  }
  return {std::move(out), std::move(y)};
}

// A model of `kind` trained on what it can learn from `s`, continuing `base` when given; none when
// `s` holds nothing to learn (the base, if any, stands).
std::optional<costmodel::Model> fit(const Split& s, Kind kind, costmodel::TrainParams params,
                                    const costmodel::Model* base = nullptr) {
  auto [rows, y] = learnable(s, kind);
  if (rows.y.empty()) return std::nullopt;
  return costmodel::Model::train(rows.x, y, params, base, rows.groups());
}

const costmodel::Model* either(const std::optional<costmodel::Model>& m,
                               const costmodel::Model* otherwise = nullptr) {
  return m ? &*m : otherwise;
}

costmodel::TrainParams paramsOf(Kind kind) {
  return objective(kind == kRank);
}

// A model's output for a program of probe `probe` as cycles (or, for kRank, a score in the
// cycles' order).
double toCycles(double output, const costmodel::ProbeParts& probe, Kind kind) {
  if (kind == kRatio) return output * probe.estimate() / 1000;
  if (kind == kGated) return costmodel::gatedCycles(probe, output / 1000);
  return output;
}

// Cycles (or, for kRank, scores in the cycles' order). A gated model that learnt nothing applies
// no correction: the probe's estimate.
std::vector<double> predicted(const costmodel::Model* m, const Split& s, Kind kind) {
  std::vector<double> p = m ? m->predict(s.x) : std::vector<double>(s.y.size(), 1000);
  for (size_t i = 0; i < p.size(); ++i)
    p[i] = toCycles(p[i], s.probe[i], kind);
  return p;
}

// Whether a kernel's programs differ in cycles at all: one whose schedules all take the same
// cycles has no order to rank (tau is undefined; counted as 0 it would only lower the means).
bool ranks(const std::vector<double>& cycles) {
  return std::adjacent_find(cycles.begin(), cycles.end(), std::not_equal_to<>()) != cycles.end();
}

// Table 1 for one design: per kernel, models trained on the other kernels' programs.
void heldOut(const std::vector<Sample>& data, const std::vector<Shape>& shapes,
             const std::string& label) {
  std::printf("\n1. held-out kernels, %s (%zu programs of %zu kernels; all features)\n",
              label.c_str(), data.size(), shapes.size());
  std::printf("%-14s %9s %9s %10s %10s %10s %10s %11s %11s %11s %12s\n", "kernel", "programs",
              "coverage", "tau (reg)", "MAPE (reg)", "tau (rank)", "top-1", "tau (probe)",
              "tau (ratio)", "tau (gated)", "MAPE (gated)");
  double sum[kKinds] = {0, 0, 0, 0}, log_regret = 0, tau_probe = 0, coverage_sum = 0;
  size_t counted = 0;
  for (size_t k = 0; k < shapes.size(); ++k) {
    Split train = rows(
        data, [&](const Sample& s) { return s.kernel != k; }, false);
    Split test = rows(
        data, [&](const Sample& s) { return s.kernel == k; }, false);
    if (!ranks(test.y)) {
      std::printf(
          "%-14s %9zu   (every program %.0f cycles: nothing to rank, left out of the means)\n",
          shapes[k].name().c_str(), test.y.size(), test.y.front());
      continue;
    }
    ++counted;
    std::vector<double> p[kKinds], tau(kKinds);
    for (int r = 0; r < kKinds; ++r) {
      const Kind kind = static_cast<Kind>(r);
      p[r] = predicted(either(fit(train, kind, paramsOf(kind))), test, kind);
      tau[r] = costmodel::kendallTau(p[r], test.y);
      sum[r] += tau[r];
    }
    // What a search keeping the ranking model's first choice would get: its cycles over the
    // kernel's best.
    const std::vector<double>& rank = p[kRank];
    const size_t first =
        static_cast<size_t>(std::min_element(rank.begin(), rank.end()) - rank.begin());
    const double regret = test.y[first] / *std::min_element(test.y.begin(), test.y.end());
    log_regret += std::log(regret);
    // The probe's estimate alone as the ranking (no learning): what the models add to it.
    std::vector<double> probe;
    double coverage = 0;
    for (const costmodel::ProbeParts& x : test.probe) {
      probe.push_back(x.estimate());
      coverage += x.coverage;
    }
    coverage /= static_cast<double>(test.probe.size());
    coverage_sum += coverage;
    const double c = costmodel::kendallTau(probe, test.y);
    tau_probe += c;
    std::printf("%-14s %9zu %9.3f %10.3f %9.1f%% %10.3f %9.3fx %11.3f %11.3f %11.3f %11.1f%%\n",
                shapes[k].name().c_str(), test.y.size(), coverage, tau[kCycles],
                100 * costmodel::mape(p[kCycles], test.y), tau[kRank], regret, c, tau[kRatio],
                tau[kGated], 100 * costmodel::mape(p[kGated], test.y));
  }
  const double n = static_cast<double>(counted);
  std::printf("%-14s %9s %9.3f %10.3f %10s %10.3f %9.3fx %11.3f %11.3f %11.3f\n", "mean", "",
              coverage_sum / n, sum[kCycles] / n, "", sum[kRank] / n, std::exp(log_regret / n),
              tau_probe / n, sum[kRatio] / n, sum[kGated] / n);
  std::fflush(stdout);
}

// Table 2 for one pair of designs: a model trained on every source program (shared features),
// transferred with k target samples by costmodel::adapt (cross-validation on the k samples, by
// kernel, chooses the source as it is, the source continued with 50 rounds on them, or a model of
// them alone), beside the source continued (the transfer before adapt) and a model trained from
// scratch on the same k; tau on each held-out target kernel, mean over kernels and 5 draws of the
// k samples; and how often adapt chose each candidate.
void transfer(const std::vector<Sample>& source, const std::vector<Sample>& target,
              size_t target_kernels, const std::string& label) {
  std::printf(
      "\n2. transfer %s (shared features; tau on each held-out target kernel, mean over "
      "kernels and 5 draws of the k samples)\n",
      label.c_str());
  const char* names[kKinds] = {"(reg)", "(rank)", "(ratio)", "(gated)"};
  std::printf("%6s", "k");
  for (int r = 0; r < kKinds; ++r)
    std::printf(" %12s %10s %9s", "transferred", "continued", "scratch");
  std::printf("\n%6s", "");
  for (int r = 0; r < kKinds; ++r)
    std::printf(" %12s %10s %9s", names[r], names[r], names[r]);
  std::printf("\n");
  Split everything = rows(
      source, [](const Sample&) { return true; }, true);
  std::optional<costmodel::Model> base[kKinds];
  for (int r = 0; r < kKinds; ++r)
    base[r] = fit(everything, static_cast<Kind>(r), paramsOf(static_cast<Kind>(r)));
  std::vector<std::string> choices;
  double at50[kKinds] = {}, scratch200[kKinds] = {};  // acceptance 3's measure
  for (int64_t k : {0, 10, 50, 200, -1}) {
    double transferred[kKinds] = {0, 0, 0, 0}, continued[kKinds] = {0, 0, 0, 0},
           scratch[kKinds] = {0, 0, 0, 0};
    int chosen[kKinds][costmodel::kCandidates] = {};
    int runs = 0;
    for (size_t held = 0; held < target_kernels; ++held) {
      std::vector<const Sample*> pool;
      for (const Sample& s : target)
        if (s.kernel != held) pool.push_back(&s);
      Split test = rows(
          target, [&](const Sample& s) { return s.kernel == held; }, true);
      if (!ranks(test.y)) continue;  // nothing to rank (as in table 1)
      for (uint64_t draw = 1; draw <= 5; ++draw) {
        std::vector<const Sample*> order = pool;
        std::mt19937_64 rng(draw);
        std::shuffle(order.begin(), order.end(), rng);
        const size_t take = k < 0 ? order.size() : std::min(order.size(), static_cast<size_t>(k));
        order.resize(take);
        std::stable_sort(order.begin(), order.end(),
                         [](const Sample* a, const Sample* b) { return a->kernel < b->kernel; });
        Split few;
        for (const Sample* s : order)
          few.add(*s, true);
        for (int r = 0; r < kKinds; ++r) {
          const Kind kind = static_cast<Kind>(r);
          const costmodel::Model* from = either(base[r]);
          if (take == 0) {  // no target program: the source as it is
            const double t = costmodel::kendallTau(predicted(from, test, kind), test.y);
            transferred[r] += t;
            continued[r] += t;
            continue;
          }
          costmodel::TargetSamples samples{few.x, {}, few.kernel, few.y};
          for (size_t i = 0; i < few.y.size(); ++i)
            samples.labels.push_back(labelOf(few, i, kind));
          costmodel::AdaptParams params;
          params.target = paramsOf(kind);
          params.seed = draw;
          params.untrained = 1000;  // a ratio model that learnt nothing: no correction
          params.predicts_cycles = kind != kRank;
          const costmodel::Adapted adapted = costmodel::adapt(
              *from, samples, params,
              [&](size_t i, double output) { return toCycles(output, few.probe[i], kind); });
          ++chosen[r][static_cast<size_t>(adapted.choice)];
          transferred[r] +=
              costmodel::kendallTau(predicted(either(adapted.model), test, kind), test.y);
          costmodel::TrainParams more = paramsOf(kind);
          more.rounds = params.continued_rounds;
          continued[r] += costmodel::kendallTau(
              predicted(either(fit(few, kind, more, from), from), test, kind), test.y);
          scratch[r] += costmodel::kendallTau(
              predicted(either(fit(few, kind, paramsOf(kind))), test, kind), test.y);
        }
        ++runs;
        if (k < 0) break;  // all samples: one draw
      }
    }
    auto cell = [&](double v, bool none) {
      return none ? std::string("-") : std::to_string(v / runs).substr(0, 5);
    };
    for (int r = 0; r < kKinds; ++r) {
      if (k == 50) at50[r] = transferred[r] / runs;
      if (k == 200) scratch200[r] = scratch[r] / runs;
    }
    const std::string row = k < 0 ? "all" : std::to_string(k);
    std::printf("%6s", row.c_str());
    for (int r = 0; r < kKinds; ++r)
      std::printf(" %12s %10s %9s", cell(transferred[r], false).c_str(),
                  cell(continued[r], false).c_str(), cell(scratch[r], k == 0).c_str());
    std::printf("\n");
    if (k != 0) {
      std::string line = "  k = " + row + ":";
      for (int r = 0; r < kKinds; ++r) {
        line += std::string(" ") + names[r];
        for (size_t c = 0; c < costmodel::kCandidates; ++c)
          line += (c ? "/" : " ") + std::to_string(chosen[r][c]);
      }
      choices.push_back(line);
    }
    std::fflush(stdout);
  }
  std::printf("adapt's choices (source as it is / continued / target alone, of the draws):\n");
  for (const std::string& line : choices)
    std::printf("%s\n", line.c_str());
  // The measure (acceptance 3): transferred at 50 target samples against from scratch at
  // 200, per model and best against best, to four places.
  std::printf("transferred at 50 against scratch at 200:");
  int best50 = 0, best200 = 0;
  for (int r = 0; r < kKinds; ++r) {
    std::printf(" %s %.4f / %.4f", names[r], at50[r], scratch200[r]);
    if (at50[r] > at50[best50]) best50 = r;
    if (scratch200[r] > scratch200[best200]) best200 = r;
  }
  std::printf("\n  best: %.4f %s against %.4f %s: %s\n", at50[best50], names[best50],
              scratch200[best200], names[best200],
              at50[best50] >= scratch200[best200] ? "no worse" : "worse");
  std::fflush(stdout);
}

// Trainium's bf16 GEMM with fp32 sums, A given transposed (the stationary operand's layout,
// K x M) as NKI's matmul takes it: C = bf16(At^T . B). Its contraction is deeper than nc_matmul's
// 128 partitions, so its schedules split it, re-associating the float sum (docs/numerics.md).
std::string trainiumGemmHlo(int64_t m, int64_t k, int64_t n) {
  auto t = [](const char* type, int64_t a, int64_t b) {
    return std::string(type) + "[" + std::to_string(a) + "," + std::to_string(b) + "]";
  };
  return "HloModule gemm, entry_computation_layout={(" + t("bf16", k, m) + ", " + t("bf16", k, n) +
         ")->" + t("bf16", m, n) + "}\nENTRY main {\n  at = " + t("bf16", k, m) +
         " parameter(0)\n  b = " + t("bf16", k, n) + " parameter(1)\n  d = " + t("f32", m, n) +
         " dot(at, b), lhs_contracting_dims={0}, rhs_contracting_dims={0}\n  ROOT c = " +
         t("bf16", m, n) + " convert(d)\n}\n";
}

}  // namespace

int main(int argc, char** argv) {
  bool quick = false;
  std::string cache = "costmodel-data";
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--quick") == 0) quick = true;
    if (std::strcmp(argv[i], "--cache") == 0 && i + 1 < argc) cache = argv[++i];
  }
  const std::string isa_dir = std::string(TACIT_SOURCE_DIR) + "/isa/";
  std::vector<Shape> source_shapes = {{128, 128, 128}, {256, 256, 256}, {128, 256, 256},
                                      {256, 128, 128}, {256, 512, 128}, {512, 128, 256},
                                      {128, 512, 512}, {512, 256, 512}};
  std::vector<Shape> target_shapes = {
      {256, 256, 256}, {256, 512, 256}, {512, 256, 256}, {256, 256, 512}, {512, 512, 512}};
  if (quick) source_shapes.resize(4), target_shapes.resize(3);
  const taidl::Isa dim16 = taidl::loadIsaFile(isa_dir + "gemmini.taidl");
  const taidl::Isa dim32 = taidl::loadIsaFile(isa_dir + "gemmini.taidl", {{"DIM", 32}});
  const taidl::Isa amx = taidl::loadIsaFile(isa_dir + "amx.taidl");
  const taidl::Isa tpuv1 = taidl::loadIsaFile(isa_dir + "tpuv1.taidl");
  const taidl::Isa trainium = taidl::loadIsaFile(isa_dir + "trainium.taidl");
  // TPUv1's GEMMs in 256x256 layout tiles (its tuning space: docs/tuning.md).
  std::vector<Shape> tpu_shapes = {{256, 512, 256},  {512, 256, 512},  {512, 512, 512},
                                   {256, 1024, 512}, {1024, 512, 256}, {512, 1024, 1024}};
  if (quick) tpu_shapes.resize(3);
  // Trainium's: one 128-row block (M = 128) and N at most 512, one nc_matmul wide: the shapes
  // whose operand windows are whole rows, the only ones whose tiles compile today (a window of
  // part of a row, a pitched DMA, is not found: docs/costmodel.md); K from 4 to 16 blocks.
  std::vector<Shape> trn_shapes;
  for (int64_t k : {512, 1024, 2048})
    for (int64_t n : {256, 384, 512})
      trn_shapes.push_back({128, k, n});
  if (quick) trn_shapes.resize(4);
  auto gemmini = [](int64_t m, int64_t k, int64_t n) { return bench::gemmHlo(m, k, n); };
  std::printf("building the datasets (every schedule simulated in full):\n");
  const std::vector<Sample> source = dataset(dim16, "dim16", gemmini, source_shapes, cache);
  const std::vector<Sample> target = dataset(dim32, "dim32", gemmini, target_shapes, cache);
  const std::vector<Sample> amx_data = dataset(amx, "amx", bench::amxGemmHlo, source_shapes, cache);
  const std::vector<Sample> tpu_data =
      dataset(tpuv1, "tpuv1", bench::tpuGemmHlo, tpu_shapes, cache);
  heldOut(source, source_shapes, "Gemmini DIM=16");
  heldOut(amx_data, source_shapes, "AMX");
  const std::vector<Sample> trn_data =
      dataset(trainium, "trainium", trainiumGemmHlo, trn_shapes, cache, /*reassociate=*/true);
  heldOut(tpu_data, tpu_shapes, "TPUv1");
  heldOut(trn_data, trn_shapes, "Trainium (bf16, --reassociate)");
  transfer(source, target, target_shapes.size(), "Gemmini DIM=16 -> DIM=32");
  transfer(amx_data, source, source_shapes.size(), "AMX -> Gemmini DIM=16");
  transfer(source, tpu_data, tpu_shapes.size(), "Gemmini DIM=16 -> TPUv1");
  transfer(source, trn_data, trn_shapes.size(), "Gemmini DIM=16 -> Trainium");
  return 0;
}
