// bench_backend --sizes: tiled compilation against problem size (docs/backend.md, "Tiled
// compilation"). Per kernel: the schedule chosen, the program's .tasm lines, what it executes on
// the oracle (instructions, the spec's cost, bytes between HBM and the on-chip buffers), the
// median compile time and whether it verifies; then tacit's 512^3 program beside the Exo
// hand-scheduled one (examples/gemmini/exo_512x512x512.tasm) on the same inputs.
#include "sizes.h"

#include <time.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <sstream>

#include "backend/compiler.h"
#include "backend/verify.h"
#include "common/gemm_hlo.h"
#include "hlo/parser.h"
#include "hlo_eval/random_literal.h"
#include "oracle/machine.h"
#include "oracle/tasm.h"
#include "support/source.h"
#include "taidl/isa.h"

namespace {

using namespace tacit;

// int8 GEMM [m,k]x[k,n] with int32 sums, saturated to int8 (or, `wide`, kept as int32 after the
// clamp: the Exo kernel's output).

double threadCpuMs() {
  timespec t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) * 1e3 + static_cast<double>(t.tv_nsec) / 1e6;
}

struct Executed {
  int64_t instructions = 0, cost = 0, hbm = 0;
};

// What `program` executes on random inputs: instructions, spec cost, bytes HBM <-> on chip.
Executed execute(const taidl::Isa& isa, const oracle::Program& program) {
  std::map<std::string, hlo::Literal> inputs;
  uint64_t seed = 1;
  for (const oracle::Tensor& t : program.tensors) {
    if (t.kind == oracle::TensorKind::kInput) inputs[t.name] = hlo::randomLiteral(t.shape, seed++);
  }
  oracle::Stats stats;
  oracle::run(isa, program, inputs, {}, &stats);
  return Executed{stats.instructions, stats.total_cost, stats.hbmBytes(isa)};
}

size_t lines(const std::string& s) {
  return static_cast<size_t>(std::count(s.begin(), s.end(), '\n'));
}

// One row of the sweep: the kernel compiled `runs` times (median times), the program's lines,
// what it executes, its cycles and whether it verifies.
void row(const taidl::Isa& isa, const std::string& hlo, const std::string& name, int runs) {
  auto m = hlo::parseModule(hlo, "gemm.hlo");
  std::vector<double> wall, cpu;
  std::optional<backend::CompileResult> r;
  try {
    for (int i = 0; i < runs; ++i) {
      auto start = std::chrono::steady_clock::now();
      double cpu0 = threadCpuMs();
      r = backend::compile(isa, *m);
      cpu.push_back(threadCpuMs() - cpu0);
      wall.push_back(
          std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
              .count());
    }
  } catch (const std::exception& e) {
    std::string what = e.what();
    std::printf("%-22s does not compile: %s\n", name.c_str(), what.substr(0, 110).c_str());
    return;
  }
  std::sort(wall.begin(), wall.end());
  std::sort(cpu.begin(), cpu.end());
  const std::string text = oracle::printProgram(isa, r->program);
  const Executed e = execute(isa, r->program);
  std::string schedule = r->schedule ? r->schedule->json() : "whole\n";
  schedule.pop_back();
  const bool ok = backend::verify(isa, *m, r->program, {.sets = 1, .seed = 3}).ok;
  std::printf("%-22s %-44s %5zu %9lld %10lld %10lld %10lld | %6.1f ms %6.1f ms  %s\n", name.c_str(),
              schedule.substr(0, 44).c_str(), lines(text), static_cast<long long>(e.instructions),
              static_cast<long long>(e.cost), static_cast<long long>(e.hbm),
              static_cast<long long>(backend::programCycles(isa, r->program)),
              wall[wall.size() / 2], cpu[cpu.size() / 2], ok ? "ok" : "MISMATCH");
  std::fflush(stdout);
}

void header(const char* kernel) {
  std::printf("%-22s %-44s %5s %9s %10s %10s %10s | %9s %9s  %s\n", kernel, "schedule", "lines",
              "instr", "spec", "hbm", "cycles", "wall", "cpu", "verify");
}

std::string shape(int64_t m, int64_t k, int64_t n) {
  return std::to_string(m) + "x" + std::to_string(k) + "x" + std::to_string(n);
}

}  // namespace

int sizeSweep(const std::string& source_dir, int runs) {
  const taidl::Isa gemmini = taidl::loadIsaFile(source_dir + "/isa/gemmini.taidl");
  header("kernel (gemmini DIM=16)");
  struct Size {
    int64_t m, k, n;
  };
  for (Size s :
       {Size{16, 16, 16}, Size{32, 32, 32}, Size{64, 64, 64}, Size{128, 128, 128},
        Size{256, 256, 256}, Size{512, 512, 512}, Size{1024, 1024, 1024}, Size{100, 64, 70}})
    row(gemmini, bench::gemmHlo(s.m, s.k, s.n), shape(s.m, s.k, s.n), runs);
  // Exo's kernel keeps the clamped int32 sums: the same GEMM with that output, then Exo's hand
  // schedule of it (examples/gemmini/exo_512x512x512.tasm), executed on the same oracle.
  row(gemmini, bench::gemmHlo(512, 512, 512, /*wide=*/true), "512x512x512 s32 out", runs);
  const oracle::Program exo =
      oracle::parseProgramFile(gemmini, source_dir + "/examples/gemmini/exo_512x512x512.tasm");
  const Executed x = execute(gemmini, exo);
  std::printf("%-22s %-44s %5zu %9lld %10lld %10lld %10lld\n", "512x512x512 s32 out", "Exo (hand)",
              lines(oracle::printProgram(gemmini, exo)), static_cast<long long>(x.instructions),
              static_cast<long long>(x.cost), static_cast<long long>(x.hbm),
              static_cast<long long>(backend::programCycles(gemmini, exo)));
  // AMX: oneDNN's u8 x s8 GEMM (VNNI weights, s32 result); K in multiples of a tile's 64 bytes.
  const taidl::Isa amx = taidl::loadIsaFile(source_dir + "/isa/amx.taidl");
  std::printf("\n");
  header("kernel (amx u8s8->s32)");
  for (Size s : {Size{16, 64, 16}, Size{32, 64, 32}, Size{64, 64, 64}, Size{128, 128, 128},
                 Size{256, 256, 256}, Size{512, 512, 512}, Size{1024, 1024, 1024}})
    row(amx, bench::amxGemmHlo(s.m, s.k, s.n), shape(s.m, s.k, s.n), runs);
  // TPUv1 (256x256 array, 4096 accumulator rows) and QKV (64x64x64 gemm), operands in layout
  // tiles: deep contractions accumulate in place, windows are whole layout tiles.
  const taidl::Isa tpuv1 = taidl::loadIsaFile(source_dir + "/isa/tpuv1.taidl");
  std::printf("\n");
  header("kernel (tpuv1 int8)");
  for (Size s :
       {Size{256, 256, 256}, Size{256, 512, 256}, Size{512, 512, 512}, Size{1024, 1024, 1024}})
    row(tpuv1, bench::tpuGemmHlo(s.m, s.k, s.n), shape(s.m, s.k, s.n), runs);
  const taidl::Isa qkv = taidl::loadIsaFile(source_dir + "/isa/qkv.taidl");
  std::printf("\n");
  header("kernel (qkv bf16)");
  for (Size s : {Size{64, 64, 64}, Size{128, 64, 128}, Size{256, 64, 256}})
    row(qkv, bench::qkvGemmHlo(s.m, s.k, s.n), shape(s.m, s.k, s.n), runs);
  return 0;
}
