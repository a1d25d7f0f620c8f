// tacit coverage (backend/coverage.h) over every module of ../shared/corpus/hlo (TACIT_SHARED_DIR
// overrides the path) for each shipped ISA: per module the operations offloaded, the shares of
// FLOPs and bytes, the regions and compiles, and the wall time; per ISA the totals. A module the
// HLO front end rejects is listed with its diagnostic. With --verify, each module is also run as
// accelerator programs plus host steps on random inputs and compared with the HLO evaluator's
// result for the whole module, bit for bit (`tacit run-module --verify`, backend/module_run.h):
// the column says "ok", "MISMATCH" or "not run" (with the first difference or the reason below),
// and the seconds the run and the reference evaluation took.
//
// Usage: bench_coverage [--isa NAME]... [--time-limit S] [--verify] [FILTER]   (NAME: a spec of
// isa/, e.g. gemmini; default every isa/*.taidl; FILTER: a substring of the module's file name)
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "backend/coverage.h"
#include "backend/module_program.h"
#include "backend/module_run.h"
#include "hlo/verifier.h"
#include "hlo_eval/evaluator.h"
#include "isel/target.h"
#include "stablehlo/input.h"
#include "support/diagnostic.h"
#include "support/source.h"
#include "taidl/isa.h"

using namespace tacit;
using backend::share;

namespace {

struct Verified {
  std::string outcome;  // "ok", "MISMATCH" or "not run"
  std::string detail;   // a mismatch's first difference, or why the module did not run
  double seconds = 0;
};

// The module run as `tacit run-module --verify --seed 1` does it.
Verified runAndVerify(const taidl::Isa& isa, backend::ModulePartition partition) {
  Verified v;
  const auto t0 = std::chrono::steady_clock::now();
  try {
    const hlo::HloModule& module = *partition.module;
    const backend::ModuleProgram program = backend::moduleProgram(std::move(partition));
    const std::vector<hlo::Literal> args = backend::randomArguments(module, 1);
    const backend::ModuleRun run = backend::runModule(isa, program, args);
    v.detail = backend::firstOutputDifference(module, run.result, hlo::evaluate(module, args));
    v.outcome = v.detail.empty() ? "ok" : "MISMATCH";
  } catch (const DiagnosticError& e) {
    v.outcome = "not run";
    v.detail = e.diagnostic().message;
  }
  v.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return v;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> isas;
  std::string filter;
  bool verify = false;
  backend::CoverageOptions options;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--isa") == 0 && i + 1 < argc) {
      isas.push_back(argv[++i]);
    } else if (std::strcmp(argv[i], "--time-limit") == 0 && i + 1 < argc) {
      options.time_limit = std::chrono::milliseconds(std::atoi(argv[++i]) * 1000);
    } else if (std::strcmp(argv[i], "--verify") == 0) {
      verify = true;
    } else {
      filter = argv[i];
    }
  }
  if (isas.empty()) {
    std::error_code isa_ec;
    for (const auto& e :
         std::filesystem::directory_iterator(std::string(TACIT_SOURCE_DIR) + "/isa", isa_ec)) {
      if (e.path().extension() == ".taidl") isas.push_back(e.path().stem().string());
    }
    std::sort(isas.begin(), isas.end());
  }
  const char* env = std::getenv("TACIT_SHARED_DIR");
  const std::string corpus = std::string(env && *env ? env : TACIT_SHARED_DIR) + "/corpus/hlo";
  std::vector<std::string> files;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(corpus, ec)) {
    if (e.path().extension() == ".hlo" &&
        e.path().filename().string().find(filter) != std::string::npos)
      files.push_back(e.path().string());
  }
  std::sort(files.begin(), files.end());
  if (files.empty()) {
    std::fprintf(stderr, "bench_coverage: no module of %s matches \"%s\"\n", corpus.c_str(),
                 filter.c_str());
    return 1;
  }
  for (const std::string& name : isas) {
    const taidl::Isa isa =
        taidl::loadIsaFile(std::string(TACIT_SOURCE_DIR) + "/isa/" + name + ".taidl");
    const isel::Target target(isa);
    std::printf("\n%s (%zu modules)\n%-52s %6s %9s %8s %8s %7s %8s %8s%s\n", name.c_str(),
                files.size(), "module", "ops", "offloaded", "FLOPs", "bytes", "regions", "compiles",
                "seconds", verify ? "  run-module --verify  seconds" : "");
    int64_t ops = 0, offloaded = 0, rejected = 0, verified = 0, mismatches = 0, not_run = 0;
    double verify_seconds = 0;
    double flops = 0, flops_off = 0, bytes = 0, bytes_off = 0, seconds = 0;
    for (const std::string& path : files) {
      const std::string stem = std::filesystem::path(path).stem().string();
      const auto t0 = std::chrono::steady_clock::now();
      try {
        auto module = stablehlo::parseAnyModule(readFile(path), path);
        hlo::verifyModule(*module);
        backend::ModulePartition partition = backend::partition(target, *module, options);
        const backend::CoverageReport r = backend::coverageOf(partition, isa.name);
        const double s =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        std::printf("%-52s %6lld %9lld %8s %8s %7zu %8lld %8.2f", stem.c_str(),
                    static_cast<long long>(r.operations), static_cast<long long>(r.offloaded),
                    share(r.flops_offloaded, r.flops).c_str(),
                    share(r.bytes_offloaded, r.bytes).c_str(), r.regions.size(),
                    static_cast<long long>(r.compiles), s);
        if (verify) {
          std::fflush(stdout);
          const Verified v = runAndVerify(isa, std::move(partition));
          std::printf("  %-20s %8.2f", v.outcome.c_str(), v.seconds);
          if (!v.detail.empty()) std::printf("\n    %s", v.detail.c_str());
          verified += v.outcome == "ok";
          mismatches += v.outcome == "MISMATCH";
          not_run += v.outcome == "not run";
          verify_seconds += v.seconds;
        }
        std::printf("\n");
        ops += r.operations;
        offloaded += r.offloaded;
        flops += r.flops;
        flops_off += r.flops_offloaded;
        bytes += r.bytes;
        bytes_off += r.bytes_offloaded;
        seconds += s;
      } catch (const DiagnosticError& e) {
        ++rejected;
        std::printf("%-52s rejected: %s\n", stem.c_str(), e.diagnostic().message.c_str());
      }
      std::fflush(stdout);
    }
    std::printf("%-52s %6lld %9lld %8s %8s %7s %8s %8.2f   (%lld rejected by the front end)\n",
                "total", static_cast<long long>(ops), static_cast<long long>(offloaded),
                share(flops_off, flops).c_str(), share(bytes_off, bytes).c_str(), "", "", seconds,
                static_cast<long long>(rejected));
    if (verify)
      std::printf("run-module --verify: %lld ok, %lld mismatches, %lld not run, %.2f s\n",
                  static_cast<long long>(verified), static_cast<long long>(mismatches),
                  static_cast<long long>(not_run), verify_seconds);
  }
  return 0;
}
