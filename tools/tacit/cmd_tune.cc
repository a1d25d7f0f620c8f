// `tacit tune --isa SPEC KERNEL.hlo -o OUT.tasm`: searches the kernel's tiling schedules under
// the timing model (backend/tune.h, docs/tuning.md) and writes the fastest program.
#include <cstdio>
#include <fstream>
#include <iostream>

#include "backend/driver.h"
#include "backend/tune.h"
#include "backend/verify.h"
#include "cli.h"
#include "hlo/verifier.h"
#include "isel/target.h"
#include "oracle/tasm.h"
#include "stablehlo/input.h"
#include "support/output.h"
#include "support/source.h"
#include "taidl/isa.h"

namespace tacit::cli {
namespace {

backend::TuneMethod methodOf(const std::string& name) {
  if (name == "multi") return backend::TuneMethod::kMultiFidelity;
  if (name == "single") return backend::TuneMethod::kSingleFidelity;
  if (name == "exhaustive") return backend::TuneMethod::kExhaustive;
  fail("--method expects multi, single or exhaustive, got '" + name + "'");
}

int runTune(const Args& args) {
  const std::string kernel_path = args.positionals()[0];
  auto isa_path = args.get("isa");
  if (!isa_path)
    fail("tacit tune needs --isa SPEC",
         "e.g. tacit tune --isa isa/gemmini.taidl gemm.hlo -o gemm.tasm");
  auto out_path = args.get("output");
  if (!out_path) fail("tacit tune needs -o OUT.tasm");
  taidl::Isa isa = taidl::loadIsaFile(*isa_path, backend::parseParamOverrides(args.all("param")));
  auto kernel = stablehlo::parseAnyModule(readFile(kernel_path), kernel_path);
  hlo::verifyModule(*kernel);
  backend::TuneOptions tune;
  tune.method = methodOf(args.getOr("method", "multi"));
  if (auto s = args.getInt("seed")) tune.seed = static_cast<uint64_t>(*s);
  if (auto b = args.getDouble("budget")) tune.budget = *b;
  if (auto t = args.getInt("threads")) tune.threads = static_cast<int>(*t);
  tune.log = [](const std::string& line) { std::cerr << line << "\n"; };
  if (auto resume = args.get("resume")) {
    // One evaluation per line; a last line without its newline was cut by an interruption.
    const std::string text = readFile(*resume);
    uint32_t number = 0;
    for (size_t at = 0; at < text.size();) {
      const size_t end = text.find('\n', at);
      ++number;
      if (end == std::string::npos) break;
      if (end > at)
        tune.known.push_back(
            backend::TuneEvaluation::parse(text.substr(at, end - at), *resume, number));
      at = end + 1;
    }
  }
  std::ofstream log_file;
  if (auto log = args.get("log")) {
    // A progress file, written as the search goes (not staged: what an interrupted search did
    // is what --resume reads).
    log_file.open(*log, std::ios::trunc);
    if (!log_file) fail("cannot write --log " + *log);
    tune.evaluated = [&](const backend::TuneEvaluation& e) { log_file << e.json() << std::flush; };
  }
  backend::CompileOptions options;
  // Float contractions split in blocks (docs/numerics.md): the space gains the split schedules,
  // each marked "reassociate" in the log and the emitted schedule.
  options.reassociate = args.has("reassociate");
  if (auto l = args.getDouble("time-limit"))
    options.time_limit =
        std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::duration<double>(*l));
  const isel::Target target(isa);
  backend::TuneResult r = backend::tune(target, *kernel, options, tune);
  if (auto n = args.getInt("verify")) {
    // The best program on the oracle against the HLO evaluator; a program that re-associates a
    // float sum against the kernel it computes, its difference from the kernel's sums measured.
    if (*n < 1 || *n > 10000) fail("--verify expects a number of random input sets (1..10000)");
    std::cerr << backend::verifyProgram(isa, *kernel, r.best.computes.get(),
                                        r.best.schedule ? r.best.schedule->contraction : 0,
                                        r.best.program, {.sets = static_cast<int>(*n)}, kernel_path,
                                        "tuned")
              << "\n";
  }
  OutputTransaction out;
  out.write(*out_path, oracle::printProgram(isa, r.best.program));
  if (auto s = args.get("emit-schedule")) out.write(*s, r.best.schedule->json());
  out.commit();
  char summary[256];
  std::snprintf(summary, sizeof(summary),
                "%lld cycles; %zu simulations = %.2f full-program equivalents (%zu more taken "
                "from --resume) over %zu schedules (%.1f s building, %.2f s simulating)",
                static_cast<long long>(r.best.costs.cycles), r.simulations, r.full_evaluations,
                r.reused, r.built, r.build_seconds, r.simulate_seconds);
  std::cerr << "tuned " << kernel_path << " for " << isa.name << ": " << summary << "\nschedule "
            << r.best.schedule->json();
  return 0;
}

const Registration kTune{Command{
    "tune",
    "KERNEL.hlo",
    "search a kernel's tiling schedules under the timing model",
    "Builds the loop nest of every schedule of the kernel's tuning space (tile sizes, loop "
    "orders,\n"
    "contraction blocks and accumulators, 1 to 8 buffers; tile kernels compiled once each) and\n"
    "finds the one with the fewest cycles on the timing model (docs/timing.md). The default\n"
    "search, multi, is successive halving: every schedule estimated by the probe (its loop nest\n"
    "cut to three iterations per loop, extrapolated), the best quarter simulated on 1/16 of its\n"
    "instruction stream, then 1/4, then the best in full; single spends the same budget on full\n"
    "simulations of random schedules; exhaustive simulates every one in full.\n"
    "Writes the fastest program to OUT (.tasm) and its schedule with --emit-schedule; prints the\n"
    "search's progress to stderr; --log FILE records every simulation, and --resume FILE takes\n"
    "them from such a log instead of running them again. docs/tuning.md.",
    {{"isa", "SPEC", "the ISA description (.taidl)"},
     {"param", "K=V", "override a spec parameter", true},
     {"output", "OUT", "write the fastest program here (.tasm)", false, false, "o"},
     {"emit-schedule", "FILE", "write its schedule (JSON; tacit compile --schedule reads it)"},
     {"method", "M", "multi (default), single or exhaustive"},
     {"seed", "N", "the order of the space and its ties (default 1)"},
     {"budget", "N", "single: full simulations (default: what multi spends)"},
     {"threads", "N", "simulations in parallel (default: the cores)"},
     {"time-limit", "S", "each schedule's compile (default 10)"},
     {"reassociate", "",
      "split float contractions too (blocks summed in block order, docs/numerics.md); such "
      "schedules are marked \"reassociate\""},
     {"verify", "N", "check the tuned program on the oracle with N random input sets"},
     {"log", "FILE", "write every simulation as a JSON line, as the search goes"},
     {"resume", "FILE", "take the simulations of an earlier search's --log instead of rerunning"}},
    1,
    1,
    runTune}};

}  // namespace
}  // namespace tacit::cli
