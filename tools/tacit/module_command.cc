#include "module_command.h"

#include <iostream>

#include "backend/driver.h"
#include "hlo/verifier.h"
#include "stablehlo/input.h"
#include "support/diagnostic.h"
#include "support/output.h"
#include "support/source.h"

namespace tacit::cli {

ModuleInputs loadModuleInputs(const Args& args, const std::string& command) {
  const std::string module_path = args.positionals()[0];
  auto isa_path = args.get("isa");
  if (!isa_path)
    fail("tacit " + command + " needs --isa SPEC",
         "e.g. tacit " + command + " --isa isa/gemmini.taidl model.hlo");
  ModuleInputs in{taidl::loadIsaFile(*isa_path, backend::parseParamOverrides(args.all("param"))),
                  stablehlo::parseAnyModule(readFile(module_path), module_path)};
  hlo::verifyModule(*in.module);
  return in;
}

std::optional<std::chrono::milliseconds> regionTimeLimit(const Args& args) {
  auto t = args.getDouble("time-limit");
  if (!t) return std::nullopt;
  if (!(*t > 0 && *t <= 3600)) fail("--time-limit expects seconds in (0, 3600]");
  return std::chrono::milliseconds(static_cast<int64_t>(*t * 1000));
}

void writeReport(const Args& args, const std::string& text) {
  if (auto path = args.get("output")) {
    writeFileAtomic(*path, text);
  } else {
    std::cout << text;
  }
}

}  // namespace tacit::cli
