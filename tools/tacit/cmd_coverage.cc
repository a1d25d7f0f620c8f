// `tacit coverage --isa SPEC MODULE.hlo [--json]`: which operations of a whole HLO module the ISA
// can compute, each asked of the compiler on its own (backend/coverage.h, docs/backend.md
// "Coverage").
#include <iostream>

#include "backend/coverage.h"
#include "backend/driver.h"
#include "cli.h"
#include "hlo/verifier.h"
#include "isel/target.h"
#include "stablehlo/input.h"
#include "support/output.h"
#include "support/source.h"
#include "taidl/isa.h"

namespace tacit::cli {
namespace {

int runCoverage(const Args& args) {
  const std::string module_path = args.positionals()[0];
  auto isa_path = args.get("isa");
  if (!isa_path)
    fail("tacit coverage needs --isa SPEC",
         "e.g. tacit coverage --isa isa/gemmini.taidl model.hlo");
  taidl::Isa isa = taidl::loadIsaFile(*isa_path, backend::parseParamOverrides(args.all("param")));
  auto module = stablehlo::parseAnyModule(readFile(module_path), module_path);
  hlo::verifyModule(*module);
  backend::CoverageOptions options;
  if (auto t = args.getDouble("time-limit")) {
    if (!(*t > 0 && *t <= 3600)) fail("--time-limit expects seconds in (0, 3600]");
    options.time_limit = std::chrono::milliseconds(static_cast<int64_t>(*t * 1000));
  }
  const isel::Target target(isa);
  const backend::CoverageReport report = backend::coverage(target, *module, options);
  const std::string out = args.has("json") ? report.json() : report.text();
  if (auto path = args.get("output")) {
    writeFileAtomic(*path, out);
  } else {
    std::cout << out;
  }
  return 0;
}

const Registration kCoverage{Command{
    "coverage",
    "MODULE.hlo",
    "report which operations of an HLO module an ISA can compute",
    "Asks the compiler, for each operation of MODULE's entry computation on its own (its\n"
    "operands as parameters), whether the ISA computes it: the ones that compile could be\n"
    "offloaded, the others stay on the host for the reason the compiler gives. Prints per opcode\n"
    "the operations, the share of their FLOPs and bytes offloaded, and the reasons; --json for\n"
    "scripts. Operations equal up to names are compiled once. MODULE may be HLO or StableHLO.\n"
    "docs/backend.md, \"Coverage\".",
    {{"isa", "SPEC", "the ISA description (.taidl)"},
     {"param", "K=V", "override a spec parameter", true},
     {"json", "", "print the report as JSON"},
     {"output", "FILE", "write the report to FILE instead of stdout", false, false, "o"},
     {"time-limit", "S", "each operation's compile (default 2)"}},
    1,
    1,
    runCoverage}};

}  // namespace
}  // namespace tacit::cli
