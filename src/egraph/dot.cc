#include "egraph/dot.h"

#include <algorithm>
#include <sstream>

#include "support/strings.h"

namespace tacit::egraph {

namespace {

// Classes to export: all, or a breadth-first neighbourhood of the roots.
std::vector<uint32_t> selectClasses(const EGraph& g, const DotOptions& opts, bool& truncated) {
  std::vector<uint32_t> out;
  truncated = false;
  if (opts.roots.empty()) {
    for (ClassId c : g.classes())
      out.push_back(c.value);
  } else {
    std::vector<uint8_t> seen(g.nodeIdCount(), 0);
    std::vector<std::pair<uint32_t, size_t>> queue;  // (class, distance)
    for (ClassId r : opts.roots) {
      uint32_t c = g.find(r).value;
      if (!seen[c]) queue.push_back({c, 0});
      seen[c] = 1;
    }
    for (size_t i = 0; i < queue.size(); ++i) {
      const uint32_t c = queue[i].first;
      const size_t dist = queue[i].second;
      out.push_back(c);
      if (dist == opts.depth) continue;
      auto visit = [&](uint32_t k) {
        if (seen[k]) return;
        seen[k] = 1;
        queue.push_back({k, dist + 1});
      };
      for (NodeId n : g.nodes(ClassId(c)))
        for (ClassId k : g.node(n).children())
          visit(k.value);
      if (opts.follow_parents)
        g.forEachParent(ClassId(c), [&](NodeId p) { visit(g.classOf(p).value); });
    }
  }
  std::sort(out.begin(), out.end());
  if (out.size() > opts.max_classes) {
    out.resize(opts.max_classes);
    truncated = true;
  }
  return out;
}

}  // namespace

std::string toDot(const EGraph& g, const DotOptions& opts) {
  if (!g.clean()) throw EGraphError("toDot: the e-graph needs rebuild() first");
  bool truncated = false;
  std::vector<uint32_t> classes = selectClasses(g, opts, truncated);
  auto shown = [&](uint32_t c) { return std::binary_search(classes.begin(), classes.end(), c); };
  auto nodeLabel = [&](NodeId n) {
    if (opts.node_label) return opts.node_label(g, n);
    ENode e = g.node(n);
    std::string s = g.language().name(e.op());
    if (e.attr() != kNoAttr) s += "[" + g.language().formatAttr(e.op(), e.attr()) + "]";
    return s;
  };
  auto classLabel = [&](uint32_t c) {
    return opts.class_label ? opts.class_label(g, ClassId(c)) : "c" + std::to_string(c);
  };

  std::ostringstream out;
  out << "digraph egraph {\n  compound=true\n  clusterrank=local\n  node [shape=box]\n";
  if (truncated) out << "  // truncated to " << opts.max_classes << " classes\n";
  for (uint32_t c : classes) {
    out << "  subgraph cluster_" << c << " {\n    style=dotted\n    label=" << quote(classLabel(c))
        << "\n";
    for (NodeId n : g.nodes(ClassId(c)))
      out << "    n" << n.value << " [label=" << quote(nodeLabel(n)) << "]\n";
    out << "  }\n";
  }
  std::vector<uint32_t> outside;
  for (uint32_t c : classes) {
    for (NodeId n : g.nodes(ClassId(c))) {
      ENode e = g.node(n);
      for (size_t i = 0; i < e.arity(); ++i) {
        uint32_t k = e.child(i).value;
        out << "  n" << n.value << " -> ";
        if (shown(k)) {
          out << "n" << g.nodes(ClassId(k)).front().value << " [lhead=cluster_" << k;
        } else {
          out << "outside_" << k << " [style=dashed";
          outside.push_back(k);
        }
        if (e.arity() > 1) out << ", label=" << i;
        out << "]\n";
      }
    }
  }
  std::sort(outside.begin(), outside.end());
  outside.erase(std::unique(outside.begin(), outside.end()), outside.end());
  for (uint32_t k : outside)
    out << "  outside_" << k << " [label=" << quote(classLabel(k)) << ", style=dashed]\n";
  out << "}\n";
  return out.str();
}

}  // namespace tacit::egraph
