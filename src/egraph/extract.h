// Extraction: choosing one e-node per e-class to build a term.
//
// GreedyExtractor — egg's bottom-up extractor. Tree cost: cost(node) is a client function of the
// node and its children's costs (e.g. 1 + sum for term size). Computed for every class by a
// Dijkstra-style fixpoint over the class graph, so cycles are fine. Guarantee: for a monotone cost
// (cost(node) >= every child cost) the result is a minimum-cost term of each class (optimal on
// trees); the choice graph is then acyclic. For other cost functions it is the fixpoint that the
// relaxation reaches (bounded; EGraphError if it does not converge or the choice is cyclic).
//
// DagExtractor — for additive per-node costs where a sub-term used twice is paid once (the cost of
// a program is the sum over its distinct instructions). Minimising this is NP-hard; we give:
//  1. never worse than greedy: it starts from the greedy tree-cost choice and only accepts
//     strictly cheaper choices (so cost <= DAG cost of the greedy term <= its tree cost);
//  2. local search: switching any single class of the current DAG to another e-node, repeated
//     until no switch helps (bounded by DagOptions);
//  3. exact for small problems: when the classes reachable from the root are at most
//     exact_class_limit, a branch-and-bound over all choices (budgeted by exact_node_budget);
//     DagResult::optimal says whether optimality was proven.
#pragma once

#include <cstddef>
#include <functional>
#include <limits>
#include <optional>
#include <span>
#include <vector>

#include "egraph/egraph.h"
#include "egraph/term.h"

namespace tacit::egraph {

using TreeCost =
    std::function<double(const EGraph& g, NodeId n, std::span<const double> child_costs)>;
using NodeCost = std::function<double(const EGraph& g, NodeId n)>;

inline constexpr double kInfiniteCost = std::numeric_limits<double>::infinity();

// 1 + sum of the children: the number of nodes of the tree (egg's AstSize).
TreeCost astSizeCost();
// 1 per node: the number of distinct nodes of the DAG.
NodeCost unitNodeCost();

class GreedyExtractor {
 public:
  // Computes the best node of every class. The e-graph must be clean() and must not change while
  // the extractor is used. A node whose cost is +inf is never chosen (use it to forbid nodes).
  GreedyExtractor(const EGraph& g, TreeCost cost);

  double cost(ClassId c) const;  // +inf if the class has no finite-cost term
  std::optional<NodeId> best(ClassId c) const;
  // The best term of the class, sub-terms of one class shared. Throws if cost(c) is infinite.
  Term term(ClassId c) const;

 private:
  const EGraph& g_;
  TreeCost fn_;
  std::vector<double> cost_;    // by class id
  std::vector<uint32_t> best_;  // by class id; node id or UINT32_MAX
};

struct DagOptions {
  size_t max_local_rounds = 16;          // passes of single-class switches
  size_t max_local_evaluations = 20000;  // candidate choices evaluated by local search
  size_t exact_class_limit = 24;         // run branch-and-bound when reachable classes <= this
  size_t exact_node_budget = 200000;     // search nodes for branch-and-bound
};

struct DagResult {
  Term term;                           // shared sub-terms appear once
  double cost = kInfiniteCost;         // sum of node costs over the term's distinct nodes
  double greedy_cost = kInfiniteCost;  // the same measure for the greedy tree-cost choice
  bool optimal = false;                // branch-and-bound proved the cost minimal
};

class DagExtractor {
 public:
  // The e-graph must be clean() and must not change while the extractor is used. Node costs must
  // be >= 0 (+inf forbids a node).
  DagExtractor(const EGraph& g, NodeCost cost, DagOptions opts = {});
  // Throws EGraphError if the class has no finite-cost term.
  DagResult extract(ClassId root) const;

 private:
  const EGraph& g_;
  NodeCost fn_;
  DagOptions opts_;
  std::vector<double> node_cost_;  // by node id
};

}  // namespace tacit::egraph
