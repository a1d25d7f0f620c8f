// Loading + checking the shipped ISA specs (isa/*.taidl): parse, fold, check, infer ranges and
// compose the symbolic semantics. BM_LoadAllSpecs is the number to watch (target < 50 ms for
// all specs together); the per-spec and per-phase benchmarks say where the time goes, and
// BM_Walk / BM_Specialize measure the oracle-facing calls on Gemmini's matmul8 compute.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "support/source.h"
#include "taidl/isa.h"
#include "taidl/specialize.h"
#include "taidl/walk.h"

namespace {

using namespace tacit::taidl;

struct Spec {
  std::string path;
  std::string text;
};

const std::vector<Spec>& specs() {
  static const std::vector<Spec> all = [] {
    std::vector<Spec> out;
    for (const auto& e :
         std::filesystem::directory_iterator(std::string(TACIT_SOURCE_DIR) + "/isa")) {
      if (e.path().extension() == ".taidl")
        out.push_back({e.path().string(), tacit::readFile(e.path().string())});
    }
    std::sort(out.begin(), out.end(), [](const Spec& a, const Spec& b) { return a.path < b.path; });
    return out;
  }();
  return all;
}

void BM_LoadAllSpecs(benchmark::State& state) {
  for (auto _ : state) {
    for (const Spec& s : specs()) {
      Isa isa = loadIsa(s.text, s.path);
      benchmark::DoNotOptimize(isa.instructions.data());
    }
  }
  state.counters["specs"] = static_cast<double>(specs().size());
}
BENCHMARK(BM_LoadAllSpecs)->Unit(benchmark::kMillisecond);

void BM_LoadSpec(benchmark::State& state) {
  const Spec& s = specs()[static_cast<size_t>(state.range(0))];
  state.SetLabel(std::filesystem::path(s.path).filename().string());
  for (auto _ : state) {
    Isa isa = loadIsa(s.text, s.path);
    benchmark::DoNotOptimize(isa.instructions.data());
  }
}
BENCHMARK(BM_LoadSpec)->DenseRange(0, 4)->Unit(benchmark::kMillisecond);

void BM_ParseOnly(benchmark::State& state) {
  for (auto _ : state) {
    for (const Spec& s : specs()) {
      Isa isa = parseIsa(s.text, s.path);
      benchmark::DoNotOptimize(isa.instructions.data());
    }
  }
}
BENCHMARK(BM_ParseOnly)->Unit(benchmark::kMicrosecond);

void BM_LoadGemmini(benchmark::State& state) {
  std::string path = std::string(TACIT_SOURCE_DIR) + "/isa/gemmini.taidl";
  std::string text = tacit::readFile(path);
  for (auto _ : state) {
    Isa isa = loadIsa(text, path, {{"DIM", state.range(0)}});
    benchmark::DoNotOptimize(isa.instructions.data());
  }
}
BENCHMARK(BM_LoadGemmini)->Arg(16)->Arg(64)->Arg(256)->Unit(benchmark::kMillisecond);

// The oracle's per-execution call: one walk of matmul8_compute_preloaded after a preload.
void BM_Walk(benchmark::State& state) {
  std::string path = std::string(TACIT_SOURCE_DIR) + "/isa/gemmini.taidl";
  Isa isa = loadIsaFile(path);
  int32_t preload = isa.findInstruction("matmul_preload");
  int32_t compute = isa.findInstruction("matmul8_compute_preloaded");
  std::vector<int64_t> regs = isa.initialRegisters();
  WalkResult w;
  std::vector<int64_t> p = {32, 48}, c = {0, 16};
  for (auto _ : state) {
    walk(isa, preload, p, regs, {}, w);
    walk(isa, compute, c, regs, {}, w);
    benchmark::DoNotOptimize(w.starts.data());
  }
  state.SetItemsProcessed(state.iterations() * 2);
}
BENCHMARK(BM_Walk);

void BM_Specialize(benchmark::State& state) {
  std::string path = std::string(TACIT_SOURCE_DIR) + "/isa/gemmini.taidl";
  Isa isa = loadIsaFile(path);
  int32_t preload = isa.findInstruction("matmul_preload");
  int32_t compute = isa.findInstruction("matmul8_compute_preloaded");
  std::vector<int64_t> regs = isa.initialRegisters();
  WalkResult w;
  walk(isa, preload, std::vector<int64_t>{32, 48}, regs, {}, w);
  walk(isa, compute, std::vector<int64_t>{0, 16}, regs, {}, w);
  for (auto _ : state) {
    auto s = specialize(isa, compute, w.key);
    benchmark::DoNotOptimize(s.get());
  }
}
BENCHMARK(BM_Specialize)->Unit(benchmark::kMicrosecond);

}  // namespace

BENCHMARK_MAIN();
