// `tacit hlo check FILE...` and `tacit hlo print FILE [--stablehlo] [-o OUT]`: the HLO text front
// end on the command line. Files may be HLO or StableHLO text (stablehlo::parseAnyModule);
// lit-style files with `// -----` separators are split and each part handled as one module.
#include <iostream>

#include "cli.h"
#include "hlo/parser.h"
#include "hlo/printer.h"
#include "hlo/shape_inference.h"
#include "hlo/verifier.h"
#include "stablehlo/input.h"
#include "stablehlo/printer.h"
#include "support/output.h"
#include "support/source.h"
#include "support/strings.h"

namespace tacit::cli {
namespace {

std::string signature(const hlo::HloComputation& entry) {
  hlo::ProgramShape ps = hlo::programShape(entry);
  return "(" + joinWith(ps.parameters, ", ", [](const hlo::Shape& s) { return s.shortStr(); }) +
         ") -> " + ps.result.shortStr();
}

std::string summary(const hlo::HloModule& m) {
  int64_t instructions = 0;
  for (const auto& c : m.computations())
    instructions += c->instructionCount();
  return m.name() + ": " + plural(static_cast<int64_t>(m.computations().size()), "computation") +
         ", " + plural(instructions, "instruction") + ", entry " + m.entry()->name() + " " +
         signature(*m.entry());
}

// Warnings go to stderr as they are found; errors are thrown to the dispatcher.
void printWarnings(DiagnosticSink& sink) {
  for (const Diagnostic& d : sink.all())
    std::cerr << d.str() << "\n";
  sink.clear();
}

int runCheck(const Args& args) {
  DiagnosticSink warnings;
  for (const std::string& path : args.positionals()) {
    std::string text = readFile(path);
    for (const hlo::InputPart& part : hlo::splitInputFile(text)) {
      auto module = stablehlo::parseAnyModule(part.text, path, &warnings);
      printWarnings(warnings);
      hlo::verifyModule(*module);
      std::cout << path << ":" << part.first_line << ": " << summary(*module) << "\n";
    }
  }
  return 0;
}

int runPrint(const Args& args) {
  const std::string& path = args.positionals()[0];
  std::string out;
  DiagnosticSink warnings;
  auto modules = stablehlo::parseAnyModules(readFile(path), path, &warnings);
  printWarnings(warnings);
  for (const auto& module : modules) {
    if (!out.empty()) out += "\n// -----\n\n";
    out += args.has("stablehlo") ? stablehlo::printStableHlo(*module) : hlo::printModule(*module);
  }
  if (args.has("output") && args.has("o")) fail("give either -o or --output, not both");
  if (auto target = args.has("o") ? args.get("o") : args.get("output")) {
    writeFileAtomic(*target, out);
  } else {
    std::cout << out;
  }
  return 0;
}

Registration check_command{Command{"hlo check",
                                   "FILE...",
                                   "parse and verify HLO or StableHLO text modules",
                                   "Parses each file (each `// -----` part of a lit-style file is "
                                   "one module), verifies it, and prints\n"
                                   "one line per module: name, computations, instructions, entry "
                                   "signature. Stops at the first error\n"
                                   "with its diagnostic and exit status 1.",
                                   {},
                                   1,
                                   -1,
                                   runCheck}};

Registration print_command{Command{
    "hlo print",
    "FILE",
    "print HLO text in canonical form",
    "Parses FILE and prints its modules in tacit's canonical HLO text (parts of a "
    "lit-style file are\n"
    "separated by `// -----`). The output parses back to the same module. FILE may be HLO or\n"
    "StableHLO text; --stablehlo prints StableHLO (docs/stablehlo.md) instead of HLO.",
    {{"stablehlo", "", "print StableHLO text (MLIR's pretty form, as JAX prints it)"},
     {"output", "FILE", "write to FILE (atomically) instead of stdout"},
     {"o", "FILE", "same as --output"}},
    1,
    1,
    runPrint}};

}  // namespace
}  // namespace tacit::cli
