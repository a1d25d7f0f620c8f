// `tacit tune`'s searches against the exhaustive one (issue 24, acceptance 4; docs/tuning.md): a
// Gemmini int8 GEMM's (or, --isa amx, oneDNN's u8·s8 AMX GEMM's; --isa tpuv1, TPUv1's int8 GEMM in
// 256x256 layout tiles) tuning space built once, then the
// exhaustive search (every schedule simulated in full: the optimum), successive halving over prefix
// simulations (seeds 1..S) and the single-fidelity search at the same budget (same seeds). Per
// search: the cycles found, their ratio to the optimum, the simulations run and what they cost in
// full-program equivalents, as a share of the exhaustive search's.
//
// Usage: bench_tune [--isa gemmini|amx|tpuv1] [--size N] [--seeds S]   (default gemmini, 512, 5)
#include <cstdio>
#include <cstring>
#include <string>

#include "backend/tune.h"
#include "common/gemm_hlo.h"
#include "hlo/parser.h"
#include "isel/target.h"
#include "taidl/isa.h"

namespace {

using namespace tacit;

}  // namespace

int main(int argc, char** argv) {
  int64_t size = 512, seeds = 5;
  std::string isa_name = "gemmini";
  for (int i = 1; i + 1 < argc; i += 2) {
    if (std::strcmp(argv[i], "--size") == 0) size = std::atoll(argv[i + 1]);
    if (std::strcmp(argv[i], "--seeds") == 0) seeds = std::atoll(argv[i + 1]);
    if (std::strcmp(argv[i], "--isa") == 0) isa_name = argv[i + 1];
  }
  const bool amx = isa_name == "amx", tpu = isa_name == "tpuv1";
  const taidl::Isa isa =
      taidl::loadIsaFile(std::string(TACIT_SOURCE_DIR) + "/isa/" + isa_name + ".taidl");
  const isel::Target target(isa);
  auto kernel = hlo::parseModule(amx   ? bench::amxGemmHlo(size, size, size)
                                 : tpu ? bench::tpuGemmHlo(size, size, size)
                                       : bench::gemmHlo(size, size, size),
                                 "gemm.hlo");
  backend::CompileOptions options;
  backend::Tuner tuner(target, *kernel, options);
  std::printf("%s GEMM %lld^3: %zu schedules, %zu built in %.1f s\n",
              amx   ? "amx u8s8->s32"
              : tpu ? "tpuv1 int8"
                    : "gemmini int8",
              static_cast<long long>(size), tuner.space(), tuner.built(), tuner.buildSeconds());
  backend::TuneResult all = tuner.search({.method = backend::TuneMethod::kExhaustive});
  const double optimum = static_cast<double>(all.best.costs.cycles);
  std::printf("%-14s %4s %12s %7s %6s %10s %9s %8s  %s\n", "search", "seed", "cycles", "x opt",
              "sims", "full-eq.", "of exh.", "sim s", "schedule");
  auto row = [&](const char* name, int64_t seed, const backend::TuneResult& r) {
    std::string s = r.best.schedule->json();
    s.pop_back();
    std::printf("%-14s %4lld %12lld %7.3f %6zu %10.2f %8.1f%% %8.2f  %s\n", name,
                static_cast<long long>(seed), static_cast<long long>(r.best.costs.cycles),
                static_cast<double>(r.best.costs.cycles) / optimum, r.simulations,
                r.full_evaluations, 100 * r.full_evaluations / all.full_evaluations,
                r.simulate_seconds, s.c_str());
    std::fflush(stdout);
  };
  row("exhaustive", 0, all);
  for (int64_t seed = 1; seed <= seeds; ++seed) {
    row("multi", seed, tuner.search({.seed = static_cast<uint64_t>(seed)}));
    row("single", seed,
        tuner.search(
            {.method = backend::TuneMethod::kSingleFidelity, .seed = static_cast<uint64_t>(seed)}));
  }
  return 0;
}
