// `tacit isa check SPEC [--param K=V]...` and `tacit isa print SPEC [--param K=V]...`: load a
// .taidl spec (parse, fold, check) and summarise it or print it canonically (docs/taidl.md).
#include <algorithm>
#include <charconv>
#include <iostream>
#include <set>

#include "backend/driver.h"
#include "cli.h"
#include "support/output.h"
#include "support/strings.h"
#include "taidl/isa.h"
#include "taidl/symbolic.h"

namespace tacit::cli {
namespace {

using taidl::Isa;

// --param K=V, parsed as `tacit compile` and generated backends parse it.
taidl::ParamOverrides overrides(const Args& args) {
  return backend::parseParamOverrides(args.all("param"));
}

Isa load(const Args& args) {
  DiagnosticSink warnings;
  Isa isa = taidl::loadIsaFile(args.positionals().at(0), overrides(args), &warnings);
  for (const Diagnostic& d : warnings.all())
    std::cerr << d.str() << "\n";
  return isa;
}

std::string signature(const std::vector<taidl::Attribute>& attrs, int32_t num_alpha) {
  std::string alpha, beta;
  for (size_t i = 0; i < attrs.size(); ++i) {
    std::string& out = static_cast<int32_t>(i) < num_alpha ? alpha : beta;
    out += (out.empty() ? "" : ", ") + attrs[i].name.text;
  }
  return "(" + alpha + (beta.empty() ? "" : "; " + beta) + ")";
}

// "n 1..128, k 0..?" for the computational attributes (inferred ranges).
std::string rangesText(const std::vector<taidl::Attribute>& attrs,
                       const std::vector<taidl::AlphaRange>& ranges) {
  std::string out;
  for (size_t i = 0; i < ranges.size(); ++i) {
    const taidl::Interval& r = ranges[i].range;
    out += (out.empty() ? "" : ", ") + attrs[i].name.text + " " +
           (r.hasLo() ? std::to_string(r.lo) : "?") + ".." +
           (r.hasHi() ? std::to_string(r.hi) : "?");
  }
  return out.empty() ? "" : "  [" + out + "]";
}

std::string shapeText(const taidl::Buffer& b) {
  std::vector<std::string> dims;
  for (int64_t d : b.access)
    dims.push_back(d == taidl::kUnknownSize ? "N" : std::to_string(d));
  for (int64_t d : b.unit)
    dims.push_back(std::to_string(d));
  return std::string(hlo::primitiveTypeName(b.dtype)) + "[" + join(dims, ", ") + "]";
}

// Buffers read and written by the statements (both branches), in order of first appearance.
void collectBuffers(const Isa& isa, const std::vector<taidl::Stmt>& body,
                    std::vector<std::string>& reads, std::vector<std::string>& writes) {
  auto add = [](std::vector<std::string>& list, const std::string& name) {
    if (std::find(list.begin(), list.end(), name) == list.end()) list.push_back(name);
  };
  for (const taidl::Stmt& s : body) {
    if (s.buffer_index >= 0) {
      const std::string& name = isa.buffers[static_cast<size_t>(s.buffer_index)].name.text;
      bool is_read = s.kind == taidl::StmtKind::kReads || s.kind == taidl::StmtKind::kRead;
      add(is_read ? reads : writes, name);
    }
    collectBuffers(isa, s.body, reads, writes);
    collectBuffers(isa, s.else_body, reads, writes);
  }
}

std::string flow(std::vector<std::string> reads, std::vector<std::string> writes) {
  return (reads.empty() ? std::string("-") : join(reads, ", ")) + " -> " +
         (writes.empty() ? std::string("-") : join(writes, ", "));
}

std::string status(const taidl::Semantics& s) {
  if (!s.selectable) return "not selectable: " + s.reason;
  return "selectable" +
         (s.cases.size() > 1 ? " (" + std::to_string(s.cases.size()) + " cases)" : "");
}

void macroBuffers(const Isa& isa, const taidl::Macro& m, std::vector<std::string>& reads,
                  std::vector<std::string>& writes) {
  for (const taidl::Call& c : m.calls) {
    if (c.callee_is_macro) {
      macroBuffers(isa, isa.macros[static_cast<size_t>(c.callee_index)], reads, writes);
    } else {
      collectBuffers(isa, isa.instructions[static_cast<size_t>(c.callee_index)].body, reads,
                     writes);
    }
  }
}

int runCheck(const Args& args) {
  Isa isa = load(args);
  bool semantics = args.has("semantics");
  std::cout << "isa " << isa.name;
  if (!isa.params.empty()) {
    std::cout << " (" << joinWith(isa.params, ", ", [](const taidl::Param& p) {
      return p.name.text + "=" + std::to_string(p.value);
    }) << ")";
  }
  std::cout << "\nbuffers:\n";
  for (const taidl::Buffer& b : isa.buffers) {
    std::string size = "HBM, sized per program";
    if (!b.is_hbm) {
      int64_t bytes = hlo::byteSize(b.dtype);
      for (int64_t d : b.access)
        bytes *= d;
      for (int64_t d : b.unit)
        bytes *= d;
      size = std::to_string(bytes) + " bytes";
    }
    std::cout << "  " << b.name.text << " " << shapeText(b) << "  " << size << "\n";
  }
  if (!isa.registers.empty()) {
    std::cout << "registers: " << joinWith(isa.registers, ", ", [](const taidl::Register& r) {
      return "$" + r.name.text + " = " + std::to_string(r.value);
    }) << "\n";
  }
  std::cout << "instructions (" << isa.instructions.size() << "):\n";
  for (size_t i = 0; i < isa.instructions.size(); ++i) {
    const taidl::Instruction& inst = isa.instructions[i];
    std::vector<std::string> reads, writes;
    collectBuffers(isa, inst.body, reads, writes);
    std::cout << "  " << inst.name.text << signature(inst.attrs, inst.num_alpha)
              << rangesText(inst.attrs, isa.instruction_ranges[i]) << "  " << flow(reads, writes)
              << "  " << status(isa.instruction_semantics[i]) << "\n";
    if (semantics) std::cout << taidl::semanticsText(isa, isa.instruction_semantics[i]);
  }
  if (!isa.macros.empty()) {
    std::cout << "macros (" << isa.macros.size() << "):\n";
    for (size_t i = 0; i < isa.macros.size(); ++i) {
      const taidl::Macro& m = isa.macros[i];
      std::vector<std::string> reads, writes;
      macroBuffers(isa, m, reads, writes);
      std::cout << "  " << m.name.text << signature(m.attrs, m.num_alpha)
                << rangesText(m.attrs, isa.macro_ranges[i]) << "  " << flow(reads, writes) << "  "
                << status(isa.macro_semantics[i]) << "\n";
      if (semantics) std::cout << taidl::semanticsText(isa, isa.macro_semantics[i]);
    }
  }
  return 0;
}

int runPrint(const Args& args) {
  Isa isa = load(args);
  std::string text = taidl::printIsa(isa);
  if (args.has("output") && args.has("o")) fail("give either -o or --output, not both");
  if (auto target = args.has("o") ? args.get("o") : args.get("output")) {
    writeFileAtomic(*target, text);
  } else {
    std::cout << text;
  }
  return 0;
}

Registration check_command{Command{
    "isa check",
    "SPEC",
    "load and check a .taidl ISA spec and summarise it",
    "Parses SPEC, folds its parameters (--param K=V overrides a default), checks names, types,\n"
    "slice bounds and macros (docs/taidl.md section 8), and prints the ISA: buffers with their\n"
    "shapes and sizes, registers, instructions and macros with their attributes, the buffers\n"
    "they read and write, and whether the compiler can select them (or why not). Warnings go\n"
    "to stderr; the first error stops with its diagnostic and exit status 1.",
    {CommandLineOption("param", "K=V", "override a spec parameter (repeatable)", true),
     CommandLineOption("semantics", "", "also print the symbolic semantics of every unit")},
    1,
    1,
    runCheck}};

Registration print_command{Command{
    "isa print",
    "SPEC",
    "print a .taidl spec in canonical form",
    "Loads SPEC (as `tacit isa check` does) and prints it canonically: declarations in source\n"
    "order, one statement per line, minimal parentheses, comments dropped. Overridden\n"
    "parameters print with their given values. The output loads back to the same spec.",
    {CommandLineOption("param", "K=V", "override a spec parameter (repeatable)", true),
     CommandLineOption("output", "FILE", "write to FILE (atomically) instead of stdout"),
     CommandLineOption("o", "FILE", "same as --output")},
    1,
    1,
    runPrint}};

}  // namespace
}  // namespace tacit::cli
