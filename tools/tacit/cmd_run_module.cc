// `tacit run-module --isa SPEC MODULE.hlo [--verify] [--seed N] [--json] [--time-limit S]`: runs
// a whole HLO module as accelerator programs plus host steps on random inputs
// (backend/module_run.h, docs/backend.md "Module execution"); --verify compares every output with
// the HLO evaluator's for the whole module, bit for bit.
#include "backend/module_program.h"
#include "backend/module_report.h"
#include "backend/module_run.h"
#include "backend/partition.h"
#include "cli.h"
#include "hlo_eval/evaluator.h"
#include "isel/target.h"
#include "module_command.h"

namespace tacit::cli {
namespace {

int runModuleCommand(const Args& args) {
  const std::string module_path = args.positionals()[0];
  const ModuleInputs in = loadModuleInputs(args, "run-module");
  backend::PartitionOptions options;
  if (auto t = regionTimeLimit(args)) options.time_limit = *t;
  uint64_t seed = 1;
  if (auto s = args.getInt("seed")) {
    if (*s < 0) fail("--seed expects a non-negative number, got " + std::to_string(*s));
    seed = static_cast<uint64_t>(*s);
  }
  const taidl::Isa& isa = in.isa;
  const hlo::HloModule& module = *in.module;
  const isel::Target target(isa);
  const backend::ModuleProgram program =
      backend::moduleProgram(backend::partition(target, module, options));
  const std::vector<hlo::Literal> arguments = backend::randomArguments(module, seed);
  const backend::ModuleRun run = backend::runModule(isa, program, arguments);
  backend::ModuleRunReport report = backend::moduleRunReport(program, run, isa.name, seed);
  if (args.has("verify")) {
    const hlo::Literal want = hlo::evaluate(module, arguments);
    report.mismatch = backend::firstOutputDifference(module, run.result, want);
    if (!report.mismatch->empty())
      fail(module_path, {},
           "verification failed: the module run differs from the HLO evaluator (random inputs "
           "from seed " +
               std::to_string(seed) + "): " + *report.mismatch,
           "an accelerator step computed a wrong value (a compiler bug) or the steps were "
           "plumbed wrong (a run-module bug); please report it with the module and the ISA");
  }
  writeReport(args, args.has("json") ? report.json() : report.text());
  return 0;
}

const Registration kRunModule{Command{
    "run-module",
    "MODULE.hlo",
    "run a whole HLO module as accelerator programs plus host steps",
    "Partitions MODULE's entry computation as `tacit coverage` does (regions the ISA computes,\n"
    "each compiled as a kernel of its own; operations that stay on the host, with the compiler's\n"
    "reason), orders the regions and host operations as steps, and runs them on random inputs\n"
    "(seeded): each region's program on the oracle, each host operation (with the computations it\n"
    "calls) by the HLO evaluator. Prints the steps, which ran on the accelerator, the "
    "instructions\n"
    "and cost executed, and the host operations with their reasons. --verify also evaluates the\n"
    "whole module with the HLO evaluator on the same inputs and compares every output bit for\n"
    "bit: a difference is an error naming the output and element. MODULE may be HLO or\n"
    "StableHLO. docs/backend.md, \"Module execution\".",
    {{"isa", "SPEC", "the ISA description (.taidl)"},
     {"param", "K=V", "override a spec parameter", true},
     {"verify", "", "compare every output with the HLO evaluator's for the whole module"},
     {"seed", "N", "random input seed (default 1)"},
     {"json", "", "print the report as JSON"},
     {"output", "FILE", "write the report to FILE instead of stdout", false, false, "o"},
     {"time-limit", "S", "each region's compile (default 2)"}},
    1,
    1,
    runModuleCommand}};

}  // namespace
}  // namespace tacit::cli
