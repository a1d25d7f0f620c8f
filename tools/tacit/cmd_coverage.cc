// `tacit coverage --isa SPEC MODULE.hlo [--json]`: which operations of a whole HLO module the ISA
// can compute, each asked of the compiler on its own (backend/coverage.h, docs/backend.md
// "Coverage").
#include "backend/coverage.h"
#include "cli.h"
#include "isel/target.h"
#include "module_command.h"

namespace tacit::cli {
namespace {

int runCoverage(const Args& args) {
  const ModuleInputs in = loadModuleInputs(args, "coverage");
  backend::CoverageOptions options;
  if (auto t = regionTimeLimit(args)) options.time_limit = *t;
  const isel::Target target(in.isa);
  const backend::CoverageReport report = backend::coverage(target, *in.module, options);
  writeReport(args, args.has("json") ? report.json() : report.text());
  return 0;
}

const Registration kCoverage{Command{
    "coverage",
    "MODULE.hlo",
    "report which operations of an HLO module an ISA can compute",
    "Splits MODULE's entry computation into connected regions and compiles each as a kernel of\n"
    "its own (the values it takes from outside as parameters): a region that does not compile\n"
    "leaves the operation its diagnostic names on the host, with that reason, and the rest is\n"
    "asked again. Prints per opcode the operations, the share of their FLOPs and bytes\n"
    "offloaded, and the reasons; --json for scripts. MODULE may be HLO or StableHLO.\n"
    "`tacit run-module` runs the same partition. docs/backend.md, \"Coverage\".",
    {{"isa", "SPEC", "the ISA description (.taidl)"},
     {"param", "K=V", "override a spec parameter", true},
     {"json", "", "print the report as JSON"},
     {"output", "FILE", "write the report to FILE instead of stdout", false, false, "o"},
     {"time-limit", "S", "each region's compile (default 2)"}},
    1,
    1,
    runCoverage}};

}  // namespace
}  // namespace tacit::cli
