// What the whole-module commands (`tacit coverage`, `tacit run-module`) share: the ISA and the
// module they read, the compile budget of each region, and where their report goes.
#pragma once

#include <chrono>
#include <memory>
#include <optional>
#include <string>

#include "cli.h"
#include "hlo/instruction.h"
#include "taidl/isa.h"

namespace tacit::cli {

struct ModuleInputs {
  taidl::Isa isa;                          // --isa SPEC with its --param overrides
  std::unique_ptr<hlo::HloModule> module;  // the positional MODULE (HLO or StableHLO), verified
};
// `command` names the command in the diagnostic for a missing --isa.
ModuleInputs loadModuleInputs(const Args& args, const std::string& command);

// --time-limit S, seconds in (0, 3600], as milliseconds; nullopt when absent.
std::optional<std::chrono::milliseconds> regionTimeLimit(const Args& args);

// The report to --output (atomically) or to stdout.
void writeReport(const Args& args, const std::string& text);

}  // namespace tacit::cli
