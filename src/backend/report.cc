#include "backend/report.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <sstream>

#include "alloc/schedule.h"
#include "isel/storage.h"
#include "oracle/machine.h"
#include "oracle/tasm.h"
#include "support/strings.h"
#include "timing/timing.h"

namespace tacit::backend {
namespace {

// Colours of the buffers' rectangles (by buffer index) and the graph's boxes.
const char* const kPalette[] = {"#4e79a7", "#f28e2b", "#59a14f", "#e15759",
                                "#76b7b2", "#edc948", "#b07aa1", "#9c755f"};

std::string colour(int32_t buffer) {
  return kPalette[static_cast<size_t>(buffer) % (sizeof(kPalette) / sizeof(kPalette[0]))];
}

std::string num(double v) {
  char b[32];
  std::snprintf(b, sizeof(b), "%.1f", v);
  return b;
}

// A call's label: its unit and its attribute values.
std::string callLabel(const isel::Target& target, const CompileResult& r, int32_t node) {
  const isel::PiiNode& n = r.graph.nodes[static_cast<size_t>(node)];
  std::string label = target.units().units[static_cast<size_t>(n.unit)].name + "(";
  const auto& attrs = r.allocation.placement.attrs[static_cast<size_t>(node)];
  for (size_t i = 0; i < attrs.size(); ++i)
    label += (i ? ", " : "") + std::to_string(attrs[i]);
  return label + ")";
}

// The calls that produce `value`, through views (a concatenation's parts, a slice's operand).
void producers(const isel::PiiGraph& g, int32_t value, std::vector<int32_t>& out, int depth = 0) {
  const int32_t p = g.values[static_cast<size_t>(value)].producer;
  if (p < 0 || depth > 8) return;
  const isel::PiiNode& n = g.nodes[static_cast<size_t>(p)];
  if (n.kind == isel::PiiKind::kCall) {
    out.push_back(p);
    return;
  }
  for (int32_t operand : n.operands)
    producers(g, operand, out, depth + 1);
}

std::string timelineSvg(const taidl::Isa& isa, const std::vector<TimelineRect>& rects,
                        int32_t buffer, int64_t points) {
  int64_t top = 1;
  for (const TimelineRect& r : rects) {
    if (r.buffer == buffer) top = std::max(top, r.start + r.extent);
  }
  const double width = 760, height = 220, left = 60, bottom = 24;
  const double xs = (width - left - 10) / static_cast<double>(std::max<int64_t>(points + 1, 1));
  const double ys = (height - bottom - 10) / static_cast<double>(top);
  std::ostringstream s;
  const std::string name = isa.buffers[static_cast<size_t>(buffer)].name.text;
  s << "<svg class=\"timeline\" data-buffer=\"" << escapeHtml(name) << "\" width=\"" << width
    << "\" height=\"" << height << "\" viewBox=\"0 0 " << width << " " << height
    << "\" xmlns=\"http://www.w3.org/2000/svg\">\n"
    << "<text x=\"4\" y=\"14\" class=\"axis\">" << escapeHtml(name) << "</text>\n"
    << "<text x=\"4\" y=\"" << height - 6 << "\" class=\"axis\">" << top
    << (isa.buffers[static_cast<size_t>(buffer)].is_hbm ? " bytes" : " rows") << " &#215; "
    << points << " calls</text>\n"
    << "<line x1=\"" << left << "\" y1=\"" << height - bottom << "\" x2=\"" << width - 10
    << "\" y2=\"" << height - bottom << "\" stroke=\"#888\"/>\n";
  for (const TimelineRect& r : rects) {
    if (r.buffer != buffer) continue;
    const double x = left + static_cast<double>(r.begin) * xs;
    const double w = std::max(1.0, static_cast<double>(r.end - r.begin + 1) * xs);
    const double y = height - bottom - static_cast<double>(r.start + r.extent) * ys;
    const double h = std::max(1.0, static_cast<double>(r.extent) * ys);
    s << "<rect class=\"value\" data-value=\"" << r.value << "\" data-begin=\"" << r.begin
      << "\" data-end=\"" << r.end << "\" data-start=\"" << r.start << "\" data-extent=\""
      << r.extent << "\" x=\"" << num(x) << "\" y=\"" << num(y) << "\" width=\"" << num(w)
      << "\" height=\"" << num(h) << "\" fill=\"" << colour(buffer)
      << "\" fill-opacity=\"0.6\" stroke=\"#222\" stroke-width=\"0.5\"><title>value " << r.value
      << ": [" << r.start << ", " << r.start + r.extent << ") live at calls " << r.begin << ".."
      << r.end << "</title></rect>\n";
  }
  s << "</svg>\n";
  return s.str();
}

std::string graphSvg(const isel::Target& target, const CompileResult& r) {
  const std::vector<int32_t>& order = r.allocation.order;
  std::map<int32_t, size_t> row;
  for (size_t i = 0; i < order.size(); ++i)
    row[order[i]] = i;
  const double box_h = 18, gap = 8, left = 120,
               height = 20 + static_cast<double>(order.size()) * (box_h + gap);
  std::ostringstream s;
  s << "<svg class=\"graph\" width=\"760\" height=\"" << height << "\" viewBox=\"0 0 760 " << height
    << "\" xmlns=\"http://www.w3.org/2000/svg\">\n";
  auto y = [&](size_t i) { return 10 + static_cast<double>(i) * (box_h + gap); };
  // Edges first (under the boxes): producer to consumer, as arcs on the left.
  for (size_t i = 0; i < order.size(); ++i) {
    const isel::PiiNode& n = r.graph.nodes[static_cast<size_t>(order[i])];
    std::vector<int32_t> from;
    for (int32_t operand : n.operands)
      producers(r.graph, operand, from);
    for (int32_t p : from) {
      auto it = row.find(p);
      if (it == row.end()) continue;
      const double y0 = y(it->second) + box_h / 2, y1 = y(i) + box_h / 2;
      const double bend = left - 12 - std::min(100.0, (y1 - y0) / 6);
      s << "<path class=\"edge\" d=\"M " << left << " " << num(y0) << " C " << num(bend) << " "
        << num(y0) << ", " << num(bend) << " " << num(y1) << ", " << left << " " << num(y1)
        << "\" fill=\"none\" stroke=\"#999\"/>\n";
    }
  }
  for (size_t i = 0; i < order.size(); ++i) {
    const isel::PiiNode& n = r.graph.nodes[static_cast<size_t>(order[i])];
    const int32_t out_buffer =
        n.outputs.empty() ? 0 : r.graph.values[static_cast<size_t>(n.outputs[0])].buffer;
    s << "<g class=\"call\"><rect x=\"" << left << "\" y=\"" << num(y(i))
      << "\" width=\"620\" height=\"" << box_h << "\" rx=\"3\" fill=\"" << colour(out_buffer)
      << "\" fill-opacity=\"0.25\" stroke=\"" << colour(out_buffer) << "\"/><text x=\"" << left + 6
      << "\" y=\"" << num(y(i) + 13) << "\">" << (i + 1) << ". "
      << escapeHtml(callLabel(target, r, order[i])) << "</text></g>\n";
  }
  s << "</svg>\n";
  return s.str();
}

std::string egraphSvg(const isel::SaturationStats& sat, const std::vector<PartStats>& parts) {
  std::vector<isel::SaturationIteration> its = sat.per_iteration;
  const char* bar_class = "iteration";
  if (its.empty()) {  // a piecewise program: one bar per part, its e-graph when saturated
    bar_class = "part";
    for (const PartStats& p : parts)
      its.push_back(isel::SaturationIteration{0, 0, 0, 0, p.enodes, 0});
  }
  size_t most = 1;
  for (const isel::SaturationIteration& it : its)
    most = std::max(most, it.nodes);
  const double width = 760, height = 180, bottom = 24,
               bar = 600.0 / static_cast<double>(std::max<size_t>(its.size(), 1));
  std::ostringstream s;
  s << "<svg class=\"egraph\" width=\"" << width << "\" height=\"" << height << "\" viewBox=\"0 0 "
    << width << " " << height << "\" xmlns=\"http://www.w3.org/2000/svg\">\n";
  for (size_t i = 0; i < its.size(); ++i) {
    const double h =
        (height - bottom - 20) * static_cast<double>(its[i].nodes) / static_cast<double>(most);
    const double x = 60 + static_cast<double>(i) * bar;
    s << "<rect class=\"" << bar_class << "\" data-nodes=\"" << its[i].nodes << "\" x=\"" << num(x)
      << "\" y=\"" << num(height - bottom - h) << "\" width=\"" << num(bar * 0.8) << "\" height=\""
      << num(h) << "\" fill=\"#4e79a7\"><title>iteration " << i + 1 << ": " << its[i].nodes
      << " e-nodes, " << its[i].classes << " e-classes</title></rect>\n"
      << "<text x=\"" << num(x) << "\" y=\"" << height - 8 << "\" class=\"axis\">" << i + 1
      << "</text>\n";
  }
  s << "<text x=\"4\" y=\"14\" class=\"axis\">" << most << " e-nodes</text>\n</svg>\n";
  return s.str();
}

}  // namespace

std::vector<TimelineRect> memoryTimeline(const taidl::Isa& isa, const CompileResult& result,
                                         bool repeated) {
  const isel::PiiGraph& g = result.graph;
  const isel::Storage storage = isel::buildStorage(isa, g);
  const std::vector<alloc::Interval> live =
      alloc::liveIntervals(g, storage, result.allocation.order, repeated);
  std::vector<TimelineRect> out;
  const auto& start = result.allocation.placement.start;
  for (int32_t root : storage.roots) {
    const auto r = static_cast<size_t>(root);
    if (r >= live.size() || live[r].empty() || r >= start.size()) continue;
    // A buffer without access dimensions (one slot: Gemmini's `bias` register) is one row.
    const bool slot = storage.extents[r].empty() || start[r].empty();
    out.push_back(TimelineRect{root, g.values[r].buffer, live[r].begin, live[r].end,
                               slot ? 0 : start[r][0], slot ? 1 : storage.extents[r][0]});
  }
  return out;
}

std::string htmlReport(const isel::Target& target, const hlo::HloModule& kernel,
                       const std::string& kernel_text, const CompileResult& r) {
  const taidl::Isa& isa = target.isa();
  std::ostringstream s;
  const std::string title = "tacit compile report: " + kernel.name() + " for " + isa.name;
  s << "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>"
    << escapeHtml(title) << "</title>\n<style>\n"
    << "body{font-family:sans-serif;margin:2em;max-width:900px}"
       "table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:2px 8px;"
       "text-align:right}td:first-child,th:first-child{text-align:left}"
       "pre{background:#f6f6f6;padding:8px;overflow:auto;max-height:400px}"
       "svg text{font-family:monospace;font-size:11px}.axis{fill:#444}\n"
    << "</style>\n</head>\n<body>\n<h1>" << escapeHtml(title) << "</h1>\n";

  // Summary.
  s << "<section id=\"summary\"><h2>Summary</h2><table>\n"
    << "<tr><td>program</td><td>" << r.costs.instructions << " instructions ("
    << escapeHtml(r.stats.tiling.empty() ? "compiled whole or piecewise" : r.stats.tiling)
    << ")</td></tr>\n<tr><td>cost model</td><td>" << costModelName(r.model) << ": "
    << r.costs.of(r.model) << "</td></tr>\n<tr><td>spec cost</td><td>" << r.costs.spec
    << "</td></tr>\n<tr><td>bytes between buffers</td><td>" << r.costs.bytes
    << "</td></tr>\n<tr><td>bytes between HBM and the chip</td><td>" << r.costs.hbm_bytes
    << "</td></tr>\n<tr><td>compile time</td><td>" << num(r.stats.total_seconds * 1e3)
    << " ms</td></tr>\n<tr><td>search</td><td>" << r.stats.candidates << " candidates, "
    << r.stats.allocated << " placed; " << escapeHtml(r.stats.stop) << "</td></tr>\n</table>"
    << "</section>\n";

  // Costs per instruction, executed on the oracle, and the timing model's cycles.
  oracle::Stats stats;
  const timing::Report timed =
      timing::simulate(isa, r.program, timing::zeroInputs(r.program), nullptr, {}, &stats);
  s << "<section id=\"costs\"><h2>Cost per instruction</h2><table>\n"
    << "<tr><th>instruction</th><th>executed</th><th>spec cost</th></tr>\n";
  for (size_t i = 0; i < stats.per_instruction.size(); ++i) {
    if (stats.per_instruction[i] == 0) continue;
    s << "<tr><td>" << escapeHtml(isa.instructions[i].name.text) << "</td><td>"
      << stats.per_instruction[i] << "</td><td>" << stats.cost_per_instruction[i] << "</td></tr>\n";
  }
  s << "<tr><th>total</th><th>" << stats.instructions << "</th><th>" << stats.total_cost
    << "</th></tr>\n</table>\n<p>The timing model (docs/timing.md):</p><pre>"
    << escapeHtml(timed.text()) << "</pre></section>\n";

  // The candidates.
  s << "<section id=\"candidates\"><h2>Candidates</h2>\n";
  if (r.stats.candidate_log.empty()) {
    // A piecewise program: each part had a search of its own.
    s << "<p>The program joins separately compiled parts (piecewise, docs/backend.md); each "
         "had its own search:</p>\n<table>\n<tr><th>part</th><th>copies</th><th>e-nodes</th>"
         "<th>iterations</th><th>candidates</th><th>ms</th></tr>\n";
    for (const PartStats& p : r.stats.parts) {
      s << "<tr class=\"part\"><td>" << escapeHtml(p.name) << "</td><td>" << p.copies << "</td><td>"
        << p.enodes << "</td><td>" << p.iterations << "</td><td>" << p.candidates << "</td><td>"
        << num(p.seconds * 1e3) << "</td></tr>\n";
    }
    s << "</table>\n";
  } else {
    if (!r.stats.tiling.empty())
      s << "<p>The search of the tile kernel shown below (the last step of the first tile); "
           "<code>--stats</code> lists every tile kernel.</p>\n";
    s << "<table>\n<tr><th>#</th><th>calls</th><th>placed</th><th>cost (" << costModelName(r.model)
      << ")</th><th>outcome</th></tr>\n";
    for (const CandidateRecord& c : r.stats.candidate_log) {
      s << "<tr class=\"candidate\"><td>" << c.index << "</td><td>" << c.calls << "</td><td>"
        << (c.placed ? "yes" : "no") << "</td><td>" << (c.placed ? std::to_string(c.cost) : "")
        << "</td><td>" << escapeHtml(c.note.substr(0, 300)) << "</td></tr>\n";
    }
    s << "</table>\n";
  }
  s << "</section>\n";

  // The memory timeline: one picture per buffer that holds anything. A piecewise program's graph
  // is its parts' join, whose allocation is theirs: no single timeline.
  const bool tiled = !r.stats.tiling.empty();
  if (r.allocation.placement.attrs.size() != r.graph.nodes.size() || r.allocation.order.empty()) {
    s << "<section id=\"timeline\"><h2>Memory timeline</h2><p>The program joins separately "
         "allocated parts (piecewise): no single allocation to draw.</p></section>\n"
      << "<section id=\"egraph\"><h2>Phase 1: e-graph per iteration</h2>\n"
      << egraphSvg(r.stats.saturation, r.stats.parts)
      << "</section>\n<section id=\"kernel\"><h2>Kernel</h2><pre>" << escapeHtml(kernel_text)
      << "</pre></section>\n<section id=\"program\"><h2>Program</h2><pre>"
      << escapeHtml(oracle::printProgram(isa, r.program)) << "</pre></section>\n</body>\n</html>\n";
    return s.str();
  }
  const std::vector<TimelineRect> rects = memoryTimeline(isa, r, tiled);
  s << "<section id=\"timeline\"><h2>Memory timeline</h2>\n<p>Each rectangle is one value (a "
       "storage root) in one buffer: its live range in program points (the calls, in their "
       "order) across, its addresses up"
    << (tiled ? "; the tile kernel shown below" : "") << ".</p>\n";
  std::vector<int32_t> buffers;
  for (const TimelineRect& t : rects) {
    if (std::find(buffers.begin(), buffers.end(), t.buffer) == buffers.end())
      buffers.push_back(t.buffer);
  }
  std::sort(buffers.begin(), buffers.end());
  const auto points = static_cast<int64_t>(r.allocation.order.size());
  for (int32_t b : buffers)
    s << timelineSvg(isa, rects, b, points);
  s << "</section>\n";

  s << "<section id=\"graph\"><h2>Instruction graph</h2>\n<p>The calls in program order; each "
       "arc joins a call to one that reads what it wrote"
    << (tiled ? " (the tile kernel)" : "") << ".</p>\n"
    << graphSvg(target, r) << "</section>\n";
  s << "<section id=\"egraph\"><h2>Phase 1: e-graph per iteration</h2>\n"
    << egraphSvg(r.stats.saturation, r.stats.parts) << "</section>\n";
  s << "<section id=\"kernel\"><h2>Kernel</h2><pre>" << escapeHtml(kernel_text)
    << "</pre></section>\n<section id=\"program\"><h2>Program</h2><pre>"
    << escapeHtml(oracle::printProgram(isa, r.program)) << "</pre></section>\n</body>\n</html>\n";
  return s.str();
}

}  // namespace tacit::backend
