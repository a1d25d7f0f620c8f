// The compile driver (compile, backend/compiler.h) and the statistics it reports.
#include "backend/compiler.h"

#include <iomanip>
#include <sstream>

#include "backend/piecewise.h"
#include "backend/tiling.h"
#include "support/strings.h"

namespace tacit::backend {

void CompileStats::addWork(const CompileStats& part) {
  isel::SaturationStats& s = saturation;
  const isel::SaturationStats& p = part.saturation;
  s.initial_nodes += p.initial_nodes;
  s.iterations = std::max(s.iterations, p.iterations);
  s.nodes += p.nodes;
  s.classes += p.classes;
  s.piis += p.piis;
  s.seconds += p.seconds;
  if (p.stop != isel::SaturationStop::kSaturated) s.stop = p.stop;
  import_seconds += part.import_seconds;
  saturate_seconds += part.saturate_seconds;
  extract_seconds += part.extract_seconds;
  alloc_seconds += part.alloc_seconds;
  solver_seconds += part.solver_seconds;
  candidates += part.candidates;
  allocated += part.allocated;
  infeasible += part.infeasible;
  solver_limits += part.solver_limits;
  orders_tried += part.orders_tried;
  rematerialised += part.rematerialised;
}

std::string CompileStats::text() const {
  std::ostringstream out;
  out << "phase 1: e-graph " << saturation.nodes << " e-nodes, " << saturation.classes
      << " e-classes, " << saturation.piis << " piis, " << saturation.iterations << " iterations ("
      << isel::saturationStopName(saturation.stop) << ")\n";
  // Per iteration (a rebuild may merge nodes: the change can be negative).
  int64_t before = static_cast<int64_t>(saturation.initial_nodes);
  for (size_t k = 0; k < saturation.per_iteration.size(); ++k) {
    const isel::SaturationIteration& it = saturation.per_iteration[k];
    const int64_t nodes = static_cast<int64_t>(it.nodes);
    std::ostringstream line;
    line << std::fixed << std::setprecision(2) << "  iteration " << k + 1 << ": " << nodes
         << " e-nodes (" << std::showpos << nodes - before << std::noshowpos << "); rules "
         << it.rules_seconds * 1e3 << " ms, view pass " << it.views_seconds * 1e3
         << " ms, folding and row split " << it.passes_seconds * 1e3 << " ms, matching "
         << it.matching_seconds * 1e3 << " ms\n";
    out << line.str();
    before = nodes;
  }
  out << "time: import " << import_seconds * 1e3 << " ms, saturation " << saturate_seconds * 1e3
      << " ms, extraction " << extract_seconds * 1e3 << " ms, allocation " << alloc_seconds * 1e3
      << " ms (solver " << solver_seconds * 1e3 << " ms), total " << total_seconds * 1e3 << " ms\n"
      << "candidates: " << candidates << " examined, " << allocated << " allocated, " << infeasible
      << " infeasible, " << solver_limits << " hit the solver limit; best #" << best_candidate
      << "; " << orders_tried << " orders tried, " << rematerialised << " values rematerialised\n"
      << "search ended: " << stop << "\n";
  if (!tiling.empty()) out << "tiled: " << tiling << "\n";
  if (!piecewise.empty() || !tiling.empty()) {
    if (!piecewise.empty()) out << "piecewise: " << piecewise << "\n";
    for (const PartStats& p : parts) {
      std::ostringstream line;
      line << std::fixed << std::setprecision(2) << "  part " << p.name;
      if (p.copies > 1) line << " (x" << p.copies << ")";
      line << ": " << p.enodes << " e-nodes, " << p.iterations << " iterations, " << p.candidates
           << " candidates, " << p.seconds * 1e3 << " ms\n";
      out << line.str();
    }
    if (!piecewise.empty()) {
      std::ostringstream line;
      line << std::fixed << std::setprecision(2) << "  join: " << join_calls
           << " calls, allocated in " << join_alloc_seconds * 1e3 << " ms\n";
      out << line.str();
    }
  }
  return out.str();
}

std::string CompileStats::json() const {
  std::ostringstream out;
  out << "{\"enodes\": " << saturation.nodes << ", \"eclasses\": " << saturation.classes
      << ", \"piis\": " << saturation.piis << ", \"initial_enodes\": " << saturation.initial_nodes
      << ", \"iterations\": " << saturation.iterations << ", \"per_iteration\": [";
  for (size_t k = 0; k < saturation.per_iteration.size(); ++k) {
    const isel::SaturationIteration& it = saturation.per_iteration[k];
    out << (k ? ", " : "") << "{\"enodes\": " << it.nodes << ", \"eclasses\": " << it.classes
        << ", \"rules_ms\": " << it.rules_seconds * 1e3
        << ", \"view_pass_ms\": " << it.views_seconds * 1e3
        << ", \"folding_row_split_ms\": " << it.passes_seconds * 1e3
        << ", \"matching_ms\": " << it.matching_seconds * 1e3 << "}";
  }
  out << "]"
      << ", \"saturation\": " << quote(isel::saturationStopName(saturation.stop), Escapes::kJson)
      << ", \"import_ms\": " << import_seconds * 1e3
      << ", \"saturation_ms\": " << saturate_seconds * 1e3
      << ", \"extraction_ms\": " << extract_seconds * 1e3
      << ", \"allocation_ms\": " << alloc_seconds * 1e3
      << ", \"solver_ms\": " << solver_seconds * 1e3 << ", \"total_ms\": " << total_seconds * 1e3
      << ", \"candidates\": " << candidates << ", \"allocated\": " << allocated
      << ", \"infeasible\": " << infeasible << ", \"solver_limits\": " << solver_limits
      << ", \"best_candidate\": " << best_candidate << ", \"orders_tried\": " << orders_tried
      << ", \"rematerialised\": " << rematerialised << ", \"stop\": " << quote(stop, Escapes::kJson)
      << ", \"piecewise\": " << quote(piecewise, Escapes::kJson)
      << ", \"tiling\": " << quote(tiling, Escapes::kJson) << ", \"parts\": [";
  for (size_t k = 0; k < parts.size(); ++k) {
    const PartStats& p = parts[k];
    out << (k ? ", " : "") << "{\"name\": " << quote(p.name, Escapes::kJson)
        << ", \"copies\": " << p.copies << ", \"enodes\": " << p.enodes
        << ", \"iterations\": " << p.iterations << ", \"candidates\": " << p.candidates
        << ", \"ms\": " << p.seconds * 1e3 << "}";
  }
  out << "], \"join_calls\": " << join_calls << ", \"join_alloc_ms\": " << join_alloc_seconds * 1e3
      << "}";
  return out.str();
}

CompileResult compile(const isel::Target& target, const hlo::HloModule& kernel,
                      const CompileOptions& options) {
  const Deadline deadline = Deadline::after(options.time_limit);
  if ((options.tiling || options.schedule) && !options.after_saturation) {
    if (std::optional<CompileResult> tiles = compileTiled(target, kernel, options, deadline))
      return std::move(*tiles);
  }
  if (options.piecewise && !options.after_saturation) {
    if (std::optional<CompileResult> pieces = compilePiecewise(target, kernel, options, deadline)) {
      // Its parts were ranked on their own; the joined program's cycles are measured whole.
      if (pieces->model == CostModel::kCycles)
        pieces->costs.cycles = programCycles(target.isa(), pieces->program);
      return std::move(*pieces);
    }
  }
  // A kernel of several tiles or steps compiled whole leaves half its budget to its tiles, should
  // the whole not compile (below).
  const bool may_tile = options.tiling && !options.schedule && !options.after_saturation &&
                        tiling::hasSteps(target, kernel, options);
  const Deadline whole = may_tile ? Deadline::after(deadline.left() / 2) : deadline;
  try {
    return compileKernel(target, kernel, options, {}, whole);
  } catch (const DiagnosticError& e) {
    // A kernel of a few tiles that does not compile whole may compile as tiles: a contraction
    // deeper than the ISA's units is accumulated on chip only by split steps (docs/backend.md,
    // "Tiled compilation"). The whole kernel's diagnostic stands when no schedule compiles.
    if (may_tile && !deadline.passed()) {
      CompileOptions tiles_first = options;
      tiles_first.max_whole_tiles = 0;
      if (std::optional<CompileResult> tiles = compileTiled(target, kernel, tiles_first, deadline))
        return std::move(*tiles);
    }
    // A float contraction deeper than the ISA's dots has a program only with its sum split.
    if (options.reassociate || !tiling::deepFloatContraction(target, kernel)) throw;
    Diagnostic d = e.diagnostic();
    Diagnostic note = makeError(d.file, d.loc,
                                "the kernel's float contraction is deeper than the ISA's dots, "
                                "which tacit splits only with --reassociate (docs/numerics.md)");
    note.severity = Severity::kNote;
    d.notes.insert(d.notes.begin(), std::move(note));
    throw DiagnosticError(std::move(d));
  }
}

CompileResult compile(const taidl::Isa& isa, const hlo::HloModule& kernel,
                      const CompileOptions& options) {
  const isel::Target target(isa);
  return compile(target, kernel, options);
}

}  // namespace tacit::backend
