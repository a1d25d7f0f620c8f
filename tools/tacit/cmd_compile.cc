// `tacit compile --isa SPEC KERNEL.hlo -o OUT`: the compiler backend (docs/backend.md). The flags
// after --isa and --param, their checks and the pipeline are the driver's (backend/driver.h),
// shared with the standalone backends of `tacit gen-backend`.
#include <iostream>

#include "backend/driver.h"
#include "cli.h"
#include "support/diagnostic.h"
#include "taidl/isa.h"

namespace tacit::cli {
namespace {

int runCompile(const Args& args) {
  std::string kernel_path = args.positionals()[0];
  auto isa_path = args.get("isa");
  if (!isa_path)
    fail("tacit compile needs --isa SPEC",
         "e.g. tacit compile --isa isa/qkv.taidl kernel.hlo -o out.tasm");
  backend::FlagValues flags;
  for (const CommandLineOption& f : backend::compileFlags()) {
    if (args.has(f.name)) flags[f.name] = args.getOr(f.name, "");
  }
  backend::CompileRequest request = backend::makeCompileRequest(kernel_path, flags);
  taidl::Isa isa = taidl::loadIsaFile(*isa_path, backend::parseParamOverrides(args.all("param")));
  backend::runCompile(isa, request, std::cout, std::cerr);
  return 0;
}

std::vector<CommandLineOption> compileOptions() {
  std::vector<CommandLineOption> options = {
      {"isa", "SPEC", "the ISA description (.taidl)"},
      {"param", "K=V", "override a spec parameter", true},
  };
  options.insert(options.end(), backend::compileFlags().begin(), backend::compileFlags().end());
  return options;
}

const Registration kCompile{Command{
    "compile", "KERNEL.hlo",
    "compile an HLO or StableHLO kernel for an ISA (instruction selection + Gecode allocation)",
    std::string(backend::compileDescription()), compileOptions(), 1, 1, runCompile}};

}  // namespace
}  // namespace tacit::cli
