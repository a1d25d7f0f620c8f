#include "timing/probe.h"

#include <algorithm>
#include <cmath>

#include "support/diagnostic.h"
#include "timing/timing.h"

namespace tacit::timing {
namespace {

// Every loop of `body` cut to at most `trips` iterations.
void cut(std::vector<oracle::Stmt>& body, int64_t trips) {
  for (oracle::Stmt& s : body) {
    if (s.kind != oracle::StmtKind::kLoop) continue;
    // Bounds affine in outer loops keep their form: the cut loop starts where the loop does.
    if (!s.hi.isConstant() || !s.lo.isConstant() || s.hi.constant - s.lo.constant > trips)
      s.hi = s.lo + oracle::Affine(trips);
    cut(s.body, trips);
  }
}

// Calls the loop nest executes `times` times over (loop bounds at their constant parts).
double calls(const std::vector<oracle::Stmt>& body, double times) {
  double n = 0;
  for (const oracle::Stmt& s : body) {
    if (s.kind == oracle::StmtKind::kLoop)
      n += calls(s.body,
                 times * static_cast<double>(std::max<int64_t>(0, s.hi.constant - s.lo.constant)));
    else if (s.kind == oracle::StmtKind::kCall)
      n += times;
  }
  return n;
}

struct Cut {
  Report report;
  double calls = 0;
  bool ran = false;
};

Cut runCut(oracle::Machine& m, const oracle::Program& program, int64_t trips) {
  Cut out;
  oracle::Program p = program;
  cut(p.body, trips);
  out.calls = calls(p.body, 1);
  Simulator sim(m.isa());
  m.options().trace = [&](const oracle::TraceEvent& e) { sim.add(e); };
  try {
    m.run(p, zeroInputs(p));
    out.ran = true;
  } catch (const DiagnosticError&) {
  }
  out.report = sim.report();
  return out;
}

}  // namespace

Probe probe(const taidl::Isa& isa, const oracle::Program& program) {
  oracle::Machine m(isa);  // one machine: the second run reuses the first's specialisations
  const Cut two = runCut(m, program, 2);
  const Cut three = runCut(m, program, 3);
  Probe out;
  out.instructions = two.report.instructions + three.report.instructions;
  if (!two.ran || !three.ran || three.report.cycles < two.report.cycles) return out;
  out.ran = true;
  out.calls = calls(program.body, 1);
  out.cut_calls = three.calls;
  out.cut_cycles = three.report.cycles;
  out.cycles_per_call =
      three.calls > two.calls
          ? static_cast<double>(three.report.cycles - two.report.cycles) / (three.calls - two.calls)
          : 0;
  out.estimate = std::llround(static_cast<double>(two.report.cycles) +
                              out.cycles_per_call * std::max(0.0, out.calls - two.calls));
  return out;
}

}  // namespace tacit::timing
