// `tacit isa rules SPEC [--param K=V]...`: what the instruction selector derives from a spec — the
// IR->ISA pattern of every (unit, case, output), the units that yield none and why, what the
// patterns need, and the IR->IR rules selected for them (docs/isel.md).
#include <charconv>
#include <iostream>

#include "backend/driver.h"
#include "cli.h"
#include "isel/rules.h"
#include "isel/target.h"
#include "isel/units.h"
#include "support/strings.h"
#include "taidl/isa.h"
#include "taidl/printer.h"

namespace tacit::cli {
namespace {

// --param K=V, parsed as `tacit compile` and generated backends parse it.
taidl::ParamOverrides paramsOf(const Args& args) {
  return backend::parseParamOverrides(args.all("param"));
}

// The pattern as an s-expression over the unit's inputs. Movement chains the matcher constructs
// (cut off the pattern) are shown in braces: `{transpose reshape}(in0)`.
std::string nodeText(const isel::UnitPattern& p, int32_t node) {
  const isel::PatternNode& n = p.nodes[static_cast<size_t>(node)];
  const taidl::SymOp& op = p.sym->ops[static_cast<size_t>(n.op)];
  if (n.input >= 0) return "in" + std::to_string(n.input);
  std::string out = "(" + std::string(hlo::opcodeName(op.opcode)) + ":" + taidl::typeText(op.type);
  for (const taidl::OpAttr& a : op.attrs)
    out += " " + taidl::opAttrText(a);
  for (int32_t c : n.children)
    out += " " + nodeText(p, c);
  return out + ")";
}

std::string chainText(const isel::UnitPattern& p, const std::vector<int32_t>& chain) {
  std::string out;
  for (int32_t node : chain) {
    const isel::PatternNode& n = p.nodes[static_cast<size_t>(node)];
    if (n.input >= 0) continue;
    out += (out.empty() ? "" : " ") +
           std::string(hlo::opcodeName(p.sym->ops[static_cast<size_t>(n.op)].opcode));
  }
  return out;
}

std::string patternText(const taidl::Isa& isa, const isel::UnitPattern& p) {
  std::string body = nodeText(p, p.skeleton_root);
  std::string out_chain = chainText(p, p.out_chain);
  if (!out_chain.empty()) body = "{" + out_chain + "}" + body;
  std::string inputs;
  for (size_t i = 0; i < p.inputs.size(); ++i) {
    const taidl::SymSlice& s = p.sym->inputs[i];
    std::string chain = chainText(p, p.inputs[i].chain);
    inputs += "      in" + std::to_string(i) + " = " + (chain.empty() ? "" : "{" + chain + "} ") +
              "read " + isa.buffers[static_cast<size_t>(s.buffer)].name.text + " : " +
              taidl::typeText(s.type) + "\n";
  }
  const taidl::SymSlice& o = p.sym->outputs[static_cast<size_t>(p.output)];
  return "    " + body + "\n" + inputs + "      -> " +
         isa.buffers[static_cast<size_t>(o.buffer)].name.text + " : " + taidl::typeText(o.type) +
         (p.pure_movement ? "  (pure data movement)" : "") + "\n";
}

int runRules(const Args& args) {
  DiagnosticSink warnings;
  taidl::Isa isa = taidl::loadIsaFile(args.positionals().at(0), paramsOf(args), &warnings);
  const isel::Target target(isa);
  const isel::UnitSet& units = target.units();
  std::cout << "IR->ISA patterns (" << units.patterns.size() << "):\n";
  for (const isel::UnitPattern& p : units.patterns) {
    const isel::Unit& u = units.units[static_cast<size_t>(p.unit)];
    std::cout << "  " << (u.is_macro ? "macro " : "") << u.name << " case " << p.case_index
              << " output " << p.output << ":\n"
              << patternText(isa, p);
  }
  for (size_t i = 0; i < units.units.size(); ++i) {
    if (!units.not_selectable[i].empty())
      std::cout << "  not selectable: " << units.units[i].name << ": " << units.not_selectable[i]
                << "\n";
  }
  std::cout << "operators used: " << joinWith(target.needs().ops, " ", [](hlo::HloOpcode op) {
    return hlo::opcodeName(op);
  }) << "\n";
  const std::vector<const isel::IrRule*>& rules = target.rules();
  std::cout << "IR->IR rules selected (" << rules.size() << " of " << isel::ruleLibrary().size()
            << "):\n";
  for (const isel::IrRule* r : rules)
    std::cout << "  " << r->name() << ": " << r->identity() << "\n";
  std::cout << "data movement (reshape/transpose/slice/bitcast identities): the view pass\n";
  return 0;
}

Registration rules_command{Command{
    "isa rules",
    "SPEC",
    "list the instruction patterns and IR rules the selector derives from a spec",
    "Loads SPEC and prints, for every selectable instruction and macro, the IR->ISA pattern of\n"
    "each case and output (an s-expression over the unit's inputs; movement chains the matcher\n"
    "constructs are shown in braces), the units that are not selectable and why, the operators\n"
    "the patterns use, and the IR->IR rules selected for them (the closure described in\n"
    "docs/isel.md).",
    {CommandLineOption("param", "K=V", "override a spec parameter (repeatable)", true)},
    1,
    1,
    runRules}};

}  // namespace
}  // namespace tacit::cli
