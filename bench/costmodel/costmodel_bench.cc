// Learned cost models against the timing model (issue 24, items 3 and 4; docs/costmodel.md).
//
// Data: int8 GEMMs of several shapes on Gemmini (and u8·s8 GEMMs on AMX, int8 GEMMs in layout tiles
// on TPUv1); each kernel's tuning
// space (backend/tune.h) built, every schedule's program simulated in full by the timing model (the
// label) and described by its features (costmodel/features.h: sums over the text and a probe of
// the loop nest cut to three iterations per loop). Two tables:
//
//  1. held-out kernels (Gemmini, then AMX): for each kernel, a model trained on the other
//     kernels' programs ranks this kernel's schedules; Kendall's tau against the timing model's
//     ranking, the MAPE, and the cycles of the ranking model's first choice over the best;
//  2. transfer to a new accelerator design (Gemmini with a 32x32 array, DIM=32): a model trained
//     on DIM=16 (shared features only) and adapted with k DIM=32 samples, against one trained
//     from scratch on the same k samples; tau on the held-out DIM=32 kernels, for k in
//     {0, 10, 50, 200, all}, averaged over 5 draws of the samples; and across accelerators, AMX ->
//     Gemmini DIM=16 and Gemmini DIM=16 -> TPUv1 (the same table, the target's kernels held out
//     in turn). Three models: a
//     regression of cycles, a ranking, and a regression of the cycles' ratio to the probe's
//     estimate.
//
// Usage: bench_costmodel [--quick] [--cache DIR]   (--quick: fewer kernels; DIR, default
// costmodel-data: the dataset, built on the first run, read on the next)
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "backend/tune.h"
#include "common/gemm_hlo.h"
#include "costmodel/features.h"
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
  double cycles = 0;
};

// Every schedule's program of each kernel's tuning space and its cycles, simulated in full; kept
// in `cache` (one .tasm per program and a cycles file per kernel: the dataset, readable by
// `tacit run --timing`) and read back from there when present.
// `label` names the design (a cache directory prefix and the printed name); `gemm` writes the
// design's GEMM kernel of a shape (bench/common/gemm_hlo.h).
std::vector<Sample> dataset(const taidl::Isa& isa, const std::string& label,
                            std::string (*gemm)(int64_t, int64_t, int64_t),
                            const std::vector<Shape>& shapes, const std::string& cache) {
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
          cycles});
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

// Table 1 for one design: per kernel, a model trained on the other kernels' programs.
void heldOut(const std::vector<Sample>& data, const std::vector<Shape>& shapes,
             const std::string& label) {
  std::printf("\n1. held-out kernels, %s (%zu programs of %zu kernels; all features)\n",
              label.c_str(), data.size(), shapes.size());
  std::printf("%-14s %9s %10s %10s %10s %10s %11s\n", "kernel", "programs", "tau (reg)",
              "MAPE (reg)", "tau (rank)", "top-1", "tau (probe)");
  double tau_reg = 0, tau_rank = 0, log_regret = 0, tau_probe = 0;
  for (size_t k = 0; k < shapes.size(); ++k) {
    Split train = rows(
        data, [&](const Sample& s) { return s.kernel != k; }, false);
    Split test = rows(
        data, [&](const Sample& s) { return s.kernel == k; }, false);
    std::vector<double> reg =
        costmodel::Model::train(train.x, train.y, objective(false)).predict(test.x);
    std::vector<double> rank =
        costmodel::Model::train(train.x, train.y, objective(true), nullptr, train.groups())
            .predict(test.x);
    const double a = costmodel::kendallTau(reg, test.y), b = costmodel::kendallTau(rank, test.y);
    tau_reg += a;
    tau_rank += b;
    // What a search keeping the ranking model's first choice would get: its cycles over the
    // kernel's best.
    const size_t first =
        static_cast<size_t>(std::min_element(rank.begin(), rank.end()) - rank.begin());
    const double regret = test.y[first] / *std::min_element(test.y.begin(), test.y.end());
    log_regret += std::log(regret);
    // The probe's estimate alone as the ranking (no learning): what the model adds to it.
    std::vector<double> probe;
    for (const std::vector<float>& x : test.x)
      probe.push_back(x[costmodel::kProbeEstimate]);
    const double c = costmodel::kendallTau(probe, test.y);
    tau_probe += c;
    std::printf("%-14s %9zu %10.3f %9.1f%% %10.3f %9.3fx %11.3f\n", shapes[k].name().c_str(),
                test.y.size(), a, 100 * costmodel::mape(reg, test.y), b, regret, c);
  }
  const double n = static_cast<double>(shapes.size());
  std::printf("%-14s %9s %10.3f %10s %10.3f %9.3fx %11.3f\n", "mean", "", tau_reg / n, "",
              tau_rank / n, std::exp(log_regret / n), tau_probe / n);
}

// What the ratio model scales: the probe's estimate of the cycles (a residual model of it), or,
// where the probe did not run, the largest of the analytic bounds the shared features compute (the
// last); both as log2(1 + cycles).
double bound(const std::vector<float>& x) {
  const double probe = std::exp2(static_cast<double>(x[costmodel::kProbeEstimate])) - 1;
  if (probe >= 1) return probe;
  return std::max(1.0, std::exp2(static_cast<double>(x[costmodel::kShared - 1])) - 1);
}

// The three models of table 2: regression of cycles, ranking, and regression of the ratio of the
// cycles to the bound (labels scaled by 1000: the model takes the log of labels of at least 1).
enum Kind { kCycles, kRank, kRatio };

std::vector<double> labels(const Split& s, Kind kind) {
  if (kind != kRatio) return s.y;
  std::vector<double> y;
  for (size_t i = 0; i < s.y.size(); ++i)
    y.push_back(1000 * s.y[i] / bound(s.x[i]));
  return y;
}

std::vector<double> predicted(const costmodel::Model& m, const Split& s, Kind kind) {
  std::vector<double> p = m.predict(s.x);
  if (kind == kRatio) {
    for (size_t i = 0; i < p.size(); ++i)
      p[i] *= bound(s.x[i]) / 1000;
  }
  return p;
}

// Table 2 for one pair of designs: a model trained on every source program (shared features),
// adapted with k target samples, against one trained from scratch on the same k; tau on each
// held-out target kernel, mean over kernels and 5 draws of the k samples.
void transfer(const std::vector<Sample>& source, const std::vector<Sample>& target,
              size_t target_kernels, const std::string& label) {
  std::printf(
      "\n2. transfer %s (shared features; tau on each held-out target kernel, mean over "
      "kernels and 5 draws of the k samples)\n",
      label.c_str());
  std::printf("%6s %12s %9s %12s %9s %12s %9s\n", "k", "transferred", "scratch", "transferred",
              "scratch", "transferred", "scratch");
  std::printf("%6s %12s %9s %12s %9s %12s %9s\n", "", "(reg)", "(reg)", "(rank)", "(rank)",
              "(ratio)", "(ratio)");
  Split everything = rows(
      source, [](const Sample&) { return true; }, true);
  const costmodel::Model base[3] = {
      costmodel::Model::train(everything.x, everything.y, objective(false)),
      costmodel::Model::train(everything.x, everything.y, objective(true), nullptr,
                              everything.groups()),
      costmodel::Model::train(everything.x, labels(everything, kRatio), objective(false))};
  for (int64_t k : {0, 10, 50, 200, -1}) {
    double transferred[3] = {0, 0, 0}, scratch[3] = {0, 0, 0};
    int runs = 0;
    for (size_t held = 0; held < target_kernels; ++held) {
      std::vector<const Sample*> pool;
      for (const Sample& s : target)
        if (s.kernel != held) pool.push_back(&s);
      Split test = rows(
          target, [&](const Sample& s) { return s.kernel == held; }, true);
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
        for (int r = 0; r < 3; ++r) {
          const Kind kind = static_cast<Kind>(r);
          costmodel::TrainParams adapt = objective(kind == kRank);
          adapt.rounds = 50;
          const std::vector<double> y = labels(few, kind);
          std::vector<double> p =
              take == 0
                  ? predicted(base[r], test, kind)
                  : predicted(costmodel::Model::train(few.x, y, adapt, &base[r], few.groups()),
                              test, kind);
          transferred[r] += costmodel::kendallTau(p, test.y);
          if (take > 0)
            scratch[r] += costmodel::kendallTau(
                predicted(costmodel::Model::train(few.x, y, objective(kind == kRank), nullptr,
                                                  few.groups()),
                          test, kind),
                test.y);
        }
        ++runs;
        if (k < 0) break;  // all samples: one draw
      }
    }
    auto cell = [&](double v, bool none) {
      return none ? std::string("-") : std::to_string(v / runs).substr(0, 5);
    };
    std::printf("%6s %12s %9s %12s %9s %12s %9s\n", k < 0 ? "all" : std::to_string(k).c_str(),
                cell(transferred[0], false).c_str(), cell(scratch[0], k == 0).c_str(),
                cell(transferred[1], false).c_str(), cell(scratch[1], k == 0).c_str(),
                cell(transferred[2], false).c_str(), cell(scratch[2], k == 0).c_str());
    std::fflush(stdout);
  }
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
  // TPUv1's GEMMs in 256x256 layout tiles (its tuning space: docs/tuning.md).
  std::vector<Shape> tpu_shapes = {{256, 512, 256},  {512, 256, 512},  {512, 512, 512},
                                   {256, 1024, 512}, {1024, 512, 256}, {512, 1024, 1024}};
  if (quick) tpu_shapes.resize(3);
  auto gemmini = [](int64_t m, int64_t k, int64_t n) { return bench::gemmHlo(m, k, n); };
  std::printf("building the datasets (every schedule simulated in full):\n");
  const std::vector<Sample> source = dataset(dim16, "dim16", gemmini, source_shapes, cache);
  const std::vector<Sample> target = dataset(dim32, "dim32", gemmini, target_shapes, cache);
  const std::vector<Sample> amx_data = dataset(amx, "amx", bench::amxGemmHlo, source_shapes, cache);
  const std::vector<Sample> tpu_data =
      dataset(tpuv1, "tpuv1", bench::tpuGemmHlo, tpu_shapes, cache);
  heldOut(source, source_shapes, "Gemmini DIM=16");
  heldOut(amx_data, source_shapes, "AMX");
  heldOut(tpu_data, tpu_shapes, "TPUv1");
  transfer(source, target, target_shapes.size(), "Gemmini DIM=16 -> DIM=32");
  transfer(amx_data, source, source_shapes.size(), "AMX -> Gemmini DIM=16");
  transfer(source, tpu_data, tpu_shapes.size(), "Gemmini DIM=16 -> TPUv1");
  return 0;
}
