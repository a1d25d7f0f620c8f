#include "isel/explain.h"

#include <map>

#include "hlo/printer.h"
#include "support/strings.h"

namespace tacit::isel {

std::vector<std::vector<bool>> producibleBuffers(const Selector& sel) {
  const egraph::EGraph& g = sel.egraph();
  const IrLanguage& ir = sel.ir();
  const taidl::Isa& isa = sel.isa();
  size_t classes = 0;
  for (ClassId c : g.classes())
    classes = std::max<size_t>(classes, c.value + 1);
  std::vector<std::vector<bool>> can(classes, std::vector<bool>(isa.buffers.size(), false));
  auto extractor = sel.extractor({});
  bool changed = true;
  while (changed) {
    changed = false;
    for (ClassId c : g.classes()) {
      for (NodeId n : g.nodes(c)) {
        egraph::ENode e = g.node(n);
        for (uint32_t b = 0; b < isa.buffers.size(); ++b) {
          if (can[c.value][b] || !extractor->allowed(n, b)) continue;
          bool ok = true;
          for (size_t i = 0; i < e.arity() && ok; ++i) {
            uint32_t need = b;
            if (e.op() == ir.piiOp()) {
              const PiiDesc& p = ir.piiDesc(e.attr());
              const Unit& u = sel.units().units[static_cast<size_t>(p.unit)];
              need = static_cast<uint32_t>(
                  u.semantics->cases[static_cast<size_t>(p.case_index)].inputs[i].buffer);
            }
            ok = can[g.find(e.child(i)).value][need];
          }
          if (ok) {
            can[c.value][b] = true;
            changed = true;
          }
        }
      }
    }
  }
  return can;
}

Diagnostic explainNoCandidate(const Selector& sel) {
  const egraph::EGraph& g = sel.egraph();
  std::vector<std::vector<bool>> can = producibleBuffers(sel);
  auto anywhere = [&](ClassId c) {
    for (bool b : can[g.find(c).value]) {
      if (b) return true;
    }
    return false;
  };
  const std::string& file = sel.kernel().file;
  // The first kernel instruction (in definition order, so its operands come first) that no unit
  // produces in any buffer.
  for (const Origin& o : sel.kernel().origins) {
    // Parameters and constants are HBM data; their values need no instruction.
    hlo::HloOpcode op = o.instruction->opcode();
    if (op == hlo::HloOpcode::kParameter || op == hlo::HloOpcode::kConstant || anywhere(o.eclass))
      continue;
    const hlo::HloInstruction* inst = o.instruction;
    std::string what =
        "'" + inst->name() + "' (" + inst->shape().shortStr() + " " + inst->opcodeSpelling() + ")";
    Diagnostic d = makeError(
        file, inst->loc(), "no instruction of ISA '" + sel.isa().name + "' can compute " + what,
        "the ISA cannot express this operation; `tacit isa rules` lists what it can");
    // The closest units: those whose root matched structurally at this class, with why they failed.
    std::map<std::string, std::string> reasons;
    for (const MatchFailure& f : sel.matcher().failures()) {
      if (!g.same(f.eclass, o.eclass)) continue;
      const Unit& u = sel.units().units[static_cast<size_t>(
          sel.units().patterns[static_cast<size_t>(f.pattern)].unit)];
      reasons.emplace(u.name, f.reason);
    }
    for (const auto& [unit, reason] : reasons) {
      if (d.notes.size() >= 5) break;
      d.notes.push_back(
          Diagnostic{Severity::kNote, file, inst->loc(), unit + ": " + reason, "", {}});
    }
    return d;
  }
  // Everything is computable somewhere, but some result cannot be brought to HBM.
  for (size_t i = 0; i < sel.kernel().results.size(); ++i) {
    if (!can[g.find(sel.kernel().results[i].bytes_class).value][0]) {
      return makeError(file, {},
                       "result " + std::to_string(i) + " (" + sel.kernel().results[i].shape.str() +
                           ") can be computed but no instruction stores it to HBM in this layout");
    }
  }
  return makeError(
      file, {}, "no instruction graph within the search limits",
      "raise --time-limit or the e-graph limits; the e-graph stopped before a program was found");
}

}  // namespace tacit::isel
