// tacit coverage (backend/coverage.h) over every module of ../shared/corpus/hlo (TACIT_SHARED_DIR
// overrides the path) for each shipped ISA: per module the operations offloaded, the shares of
// FLOPs and bytes, the regions and compiles, and the wall time; per ISA the totals. A module the
// HLO front end rejects is listed with its diagnostic. With --verify, each module is also run as
// accelerator programs plus host steps on random inputs and compared with the HLO evaluator's
// result for the whole module, bit for bit (`tacit run-module --verify`, backend/module_run.h):
// the column says "ok", "MISMATCH" or "not run" (with the first difference or the reason below),
// and the seconds the run and the reference evaluation took.
//
// With --mobilenet, instead of the corpus: every distinct convolution of MobileNetV2 (Sandler et
// al., CVPR 2018, Table 2; input 224x224) at its full size, int8 data and int32 sums saturated to
// int8, run and verified as modules (docs/backend.md, "Convolutions"): per layer the GEMMs
// offloaded, the share of the multiply-adds, the compiles and the seconds.
//
// Usage: bench_coverage [--isa NAME]... [--time-limit S] [--verify] [--mobilenet] [FILTER]
// (NAME: a spec of isa/, e.g. gemmini; default every isa/*.taidl, gemmini with --mobilenet;
// FILTER: a substring of the module's file name or of the layer's)
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
#include "hlo/parser.h"
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
    const hlo::HloModule& module = *partition.source;  // not the one whose convolutions are GEMMs
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

// One MobileNetV2 convolution: NHWC input hw x hw x in, kernel k x k, `out` output channels
// (depthwise: groups == in == out).
struct Layer {
  std::string name;
  int64_t hw, in, out, k, stride, groups;
};

std::vector<Layer> mobileNetV2Convolutions() {
  std::vector<Layer> layers = {{"stem 3x3 s2", 224, 3, 32, 3, 2, 1}};
  // The bottlenecks: expansion t, output channels c, repeats n, first stride s (Table 2).
  struct Stage {
    int64_t t, c, n, s;
  };
  int64_t hw = 112, channels = 32;
  for (const Stage& st :
       {Stage{1, 16, 1, 1}, Stage{6, 24, 2, 2}, Stage{6, 32, 3, 2}, Stage{6, 64, 4, 2},
        Stage{6, 96, 3, 1}, Stage{6, 160, 3, 2}, Stage{6, 320, 1, 1}}) {
    for (int64_t r = 0; r < std::min<int64_t>(st.n, 2); ++r) {  // repeats 3+ repeat the 2nd
      const int64_t stride = r == 0 ? st.s : 1, wide = channels * st.t;
      const std::string at = std::to_string(hw) + "x" + std::to_string(hw);
      if (st.t > 1) layers.push_back({"expand 1x1 " + at, hw, channels, wide, 1, 1, 1});
      layers.push_back(
          {"depthwise 3x3 s" + std::to_string(stride) + " " + at, hw, wide, wide, 3, stride, wide});
      hw /= stride;
      layers.push_back({"project 1x1 " + std::to_string(hw) + "x" + std::to_string(hw), hw, wide,
                        st.c, 1, 1, 1});
      channels = st.c;
    }
  }
  layers.push_back({"head 1x1 7x7", 7, 320, 1280, 1, 1, 1});
  return layers;
}

std::string layerHlo(const Layer& l) {
  const int64_t out_hw = l.hw / l.stride;
  const std::string pad = l.k == 1 ? "0_0" : l.stride == 1 ? "1_1" : "0_1";  // TF's SAME
  auto dims = [](std::initializer_list<int64_t> d) {
    std::string s = "[";
    for (int64_t x : d)
      s += (s.size() > 1 ? "," : "") + std::to_string(x);
    return s + "]";
  };
  const std::string out = dims({1, out_hw, out_hw, l.out});
  const std::string k = std::to_string(l.k), st = std::to_string(l.stride);
  return "HloModule mobilenet_layer\nENTRY main {\n  x = s8" + dims({1, l.hw, l.hw, l.in}) +
         " parameter(0)\n  w = s8" + dims({l.k, l.k, l.in / l.groups, l.out}) +
         " parameter(1)\n  conv = s32" + out + " convolution(x, w), window={size=" + k + "x" + k +
         " stride=" + st + "x" + st + " pad=" + pad + "x" + pad + "}, dim_labels=b01f_01io->b01f" +
         (l.groups > 1 ? ", feature_group_count=" + std::to_string(l.groups) : std::string()) +
         "\n  lo = s32[] constant(-128)\n  hi = s32[] constant(127)\n  c = s32" + out +
         " clamp(lo, conv, hi)\n  ROOT y = s8" + out + " convert(c)\n}\n";
}

int mobileNet(const std::vector<std::string>& isas, const std::string& filter,
              const backend::CoverageOptions& options, bool verify) {
  for (const std::string& name : isas) {
    const taidl::Isa isa =
        taidl::loadIsaFile(std::string(TACIT_SOURCE_DIR) + "/isa/" + name + ".taidl");
    const isel::Target target(isa);
    std::printf(
        "\nMobileNetV2's convolutions on %s (int8, sums saturated to int8)\n%-26s %7s "
        "%8s %9s %10s %8s %9s%s\n",
        name.c_str(), "layer", "GEMMs", "offload", "MACs", "GEMM MACs", "compiles", "seconds",
        verify ? "  run-module --verify  seconds" : "");
    for (const Layer& l : mobileNetV2Convolutions()) {
      if (l.name.find(filter) == std::string::npos) continue;
      const auto module = hlo::parseModule(layerHlo(l), l.name);
      const auto t0 = std::chrono::steady_clock::now();
      backend::ModulePartition partition = backend::partition(target, *module, options);
      const backend::CoverageReport r = backend::coverageOf(partition, isa.name);
      const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      const backend::OpcodeCoverage* conv = nullptr;
      for (const backend::OpcodeCoverage& c : r.opcodes)
        if (c.opcode == "convolution") conv = &c;
      // The convolution's multiply-adds, and the GEMMs' (with their zero padding and diagonal
      // blocks).
      const double macs = backend::operationFlops(*module->entry()->findInstruction("conv")) / 2;
      std::printf("%-26s %3lld/%-3lld %8s %9.3g %10.3g %8lld %9.2f", l.name.c_str(),
                  static_cast<long long>(conv ? conv->offloaded : 0),
                  static_cast<long long>(conv ? conv->operations : 0),
                  conv ? share(conv->flops_offloaded, conv->flops).c_str() : "-", macs,
                  conv ? conv->flops / 2 : 0.0, static_cast<long long>(r.compiles), s);
      if (verify) {
        std::fflush(stdout);
        const Verified v = runAndVerify(isa, std::move(partition));
        std::printf("  %-20s %8.2f", v.outcome.c_str(), v.seconds);
        if (!v.detail.empty()) std::printf("\n    %s", v.detail.c_str());
      }
      std::printf("\n");
      if (conv && conv->offloaded < conv->operations && !conv->reasons.empty())
        std::printf("    %s\n", conv->reasons.begin()->first.c_str());
      std::fflush(stdout);
    }
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> isas;
  std::string filter;
  bool verify = false, mobilenet = false;
  backend::CoverageOptions options;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--isa") == 0 && i + 1 < argc) {
      isas.push_back(argv[++i]);
    } else if (std::strcmp(argv[i], "--time-limit") == 0 && i + 1 < argc) {
      options.time_limit = std::chrono::milliseconds(std::atoi(argv[++i]) * 1000);
    } else if (std::strcmp(argv[i], "--verify") == 0) {
      verify = true;
    } else if (std::strcmp(argv[i], "--mobilenet") == 0) {
      mobilenet = true;
    } else {
      filter = argv[i];
    }
  }
  if (mobilenet)
    return mobileNet(isas.empty() ? std::vector<std::string>{"gemmini"} : isas, filter, options,
                     verify);
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
