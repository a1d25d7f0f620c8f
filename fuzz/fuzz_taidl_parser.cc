// libFuzzer target for the .taidl front end. Any input may be rejected with a DiagnosticError;
// anything else escaping is a bug. Accepted input must print canonically to a fixed point; a
// spec that loads must load again from its printed form; every instruction of a loaded spec is
// walked (and specialised) at the low end of its attribute ranges, and its timing clause
// evaluated there, without crashing.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "support/diagnostic.h"
#include "taidl/isa.h"
#include "taidl/ops.h"
#include "taidl/specialize.h"
#include "taidl/walk.h"

namespace {

using namespace tacit::taidl;

// Constants of the instruction at these attribute values, in elements (a guard against
// materialising huge literals in specialisation, which is legal but slow).
int64_t constantElements(const std::vector<Stmt>& body, const EvalEnv& env) {
  int64_t total = 0;
  for (const Stmt& s : body) {
    if (s.kind == StmtKind::kConstant) {
      try {
        total += evalType(s.type, env).elementCount();
      } catch (const ExprError&) {
      }
    }
    total += constantElements(s.body, env) + constantElements(s.else_body, env);
  }
  return total;
}

void exercise(const Isa& isa) {
  for (size_t i = 0; i < isa.instructions.size(); ++i) {
    const Instruction& inst = isa.instructions[i];
    std::vector<int64_t> attrs(inst.attrs.size(), 0);
    for (int32_t a = 0; a < inst.num_alpha; ++a) {
      const Interval& r = isa.instruction_ranges[i][static_cast<size_t>(a)].range;
      attrs[static_cast<size_t>(a)] = r.hasLo() ? r.lo : (r.hasHi() ? r.hi : 1);
    }
    std::vector<int64_t> regs = isa.initialRegisters();
    WalkResult walked;
    WalkOptions options;
    options.constraints = ConstraintMode::kWarn;
    static const std::vector<uint8_t> zeros(4096);  // every buffer, for lets
    options.memory = [](int32_t) {
      return BufferBytes{zeros.data(), static_cast<int64_t>(zeros.size())};
    };
    try {
      walk(isa, static_cast<int32_t>(i), attrs, regs, options, walked);
      std::vector<int64_t> loops(inst.loop_names.size(), 0);
      if (constantElements(inst.body, EvalEnv{attrs, regs, loops}) > (1 << 16)) continue;
      specialize(isa, static_cast<int32_t>(i), walked.key);
    } catch (const tacit::DiagnosticError&) {
    }
    // The timing clause, as the timing model evaluates it (docs/timing.md).
    if (inst.timing) {
      for (const Expr* e : {&inst.timing->expr, &inst.timing->expr2, &inst.timing->expr3}) {
        try {
          if (!e->empty()) evalExpr(*e, EvalEnv{attrs, {}, {}});
        } catch (const ExprError&) {
        }
      }
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  std::string printed;
  try {
    printed = printIsa(parseIsa(text, "fuzz.taidl"));
  } catch (const tacit::DiagnosticError&) {
    return 0;
  }
  try {
    if (printIsa(parseIsa(printed, "printed.taidl")) != printed) __builtin_trap();
  } catch (const tacit::DiagnosticError&) {
    __builtin_trap();  // the printer wrote text the parser rejects
  }
  tacit::DiagnosticSink warnings;
  Isa isa;
  try {
    isa = loadIsa(text, "fuzz.taidl", {}, &warnings);
  } catch (const tacit::DiagnosticError&) {
    return 0;
  }
  std::string canonical = printIsa(isa);
  try {
    Isa again = loadIsa(canonical, "printed.taidl", {}, nullptr);
    if (printIsa(again) != canonical) __builtin_trap();
  } catch (const tacit::DiagnosticError&) {
    __builtin_trap();  // a loaded spec's canonical form must load too
  }
  exercise(isa);
  return 0;
}
