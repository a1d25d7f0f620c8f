// The one entry point for reading a kernel file: StableHLO text or HLO text, told apart by the
// file's first token (or its .mlir extension), each to the HLO IR.
//
//   auto module = tacit::stablehlo::parseAnyModule(readFile(path), path);
//
// The hlo module knows nothing of StableHLO; the front ends (tacit's commands, the compile driver,
// the Python module) call this instead of hlo::parseModule.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "hlo/instruction.h"

namespace tacit::stablehlo {

// StableHLO text to an HLO module (docs/stablehlo.md). `filename` names the file in diagnostics.
std::unique_ptr<hlo::HloModule> parseStableHlo(std::string_view text, const std::string& filename);

// True if the text is StableHLO: its first token (after comments) is `module`, `func.func`,
// `"builtin.module"`, `"func.func"` or a `#` alias, or the path ends in .mlir.
bool isStableHlo(std::string_view text, const std::string& path = {});

// One module of either language.
std::unique_ptr<hlo::HloModule> parseAnyModule(std::string_view text, const std::string& filename,
                                               DiagnosticSink* warnings = nullptr);
// Every `// -----` part of a file, each of either language.
std::vector<std::unique_ptr<hlo::HloModule>> parseAnyModules(std::string_view text,
                                                             const std::string& filename,
                                                             DiagnosticSink* warnings = nullptr);

}  // namespace tacit::stablehlo
