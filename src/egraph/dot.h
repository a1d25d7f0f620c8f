// Graphviz (DOT) export of an e-graph or of the neighbourhood of some classes.
//
// Each e-class is a dotted cluster of its e-nodes; an edge goes from an e-node to the cluster of
// each child class (labelled with the child index when the node has several children). Classes
// outside the exported part are drawn as small dashed boxes so that the boundary is visible.
//
//   std::string dot = toDot(g, {.roots = {c}, .depth = 2});   // render: dot -Tsvg
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <vector>

#include "egraph/egraph.h"

namespace tacit::egraph {

struct DotOptions {
  std::vector<ClassId> roots;  // empty: the whole e-graph
  size_t depth = 2;            // with roots: classes at most this many edges away
  bool follow_parents = true;  // the neighbourhood also grows towards users of a class
  size_t max_classes = 500;    // export at most this many classes (a comment says so)
  // Labels; defaults: "op[attr]" (Language::formatAttr) and "c<id>".
  std::function<std::string(const EGraph& g, NodeId n)> node_label;
  std::function<std::string(const EGraph& g, ClassId c)> class_label;
};

// The e-graph must be clean().
std::string toDot(const EGraph& g, const DotOptions& opts = {});

}  // namespace tacit::egraph
