// Candidate extraction (docs/algorithm.md §3.7): instruction graphs, smallest first.
//
// Top-down from the kernel results (all of them, in HBM), each value in the buffer its consumer
// requires: a pii may stand for a value in the buffer it writes; in HBM a kernel input or a
// constant (compile-time data) may too; slices and concatenations along a buffer's access
// dimensions are identity views in that buffer. Plain operators are never selected. Terms come from
// egraph::Enumerator with the buffer as the context, revisiting (class, buffer) pairs (spills)
// after the revisit-free terms of the same size; each term becomes a DAG by sharing equal calls
// (GVN keyed by unit, α, operands and buffer), and graphs already produced are skipped.
#pragma once

#include <memory>
#include <optional>
#include <set>
#include <unordered_set>

#include "egraph/enumerate.h"
#include "isel/ir_builder.h"
#include "isel/kernel.h"
#include "isel/pii_graph.h"

namespace tacit::isel {

struct ExtractOptions {
  size_t max_size = 64;          // term size bound (nodes of the tree)
  size_t max_steps = 2'000'000;  // enumeration work budget
  bool spills = true;            // also yield revisiting terms (after the revisit-free ones)
};

class CandidateExtractor {
 public:
  // `root` is the class of the `results` node over every kernel result.
  // `resident_results`: per kernel result, the on-chip buffer it must be produced in (kernel.h
  // Residence), or 0: written into its HBM region.
  CandidateExtractor(const egraph::EGraph& g, const IrLanguage& ir, const ShapeAnalysis& shapes,
                     const taidl::Isa& isa, const UnitSet& units, ClassId root,
                     ExtractOptions options, std::vector<int32_t> resident_results = {});

  // The next instruction graph not produced before, or nullopt when none is left within the bounds.
  // The first is the greedy graph (below); then the enumeration's, smallest first.
  std::optional<PiiGraph> next();
  // The graph that picks, for every (class, buffer), the cheapest way by tree cost (an instruction
  // costs 1, views and HBM data 0), computed by a Bellman-Ford fixpoint over the e-graph and built
  // as a DAG (each (class, buffer) extracted once). Scales to programs of any size, which
  // enumerating trees cannot; nullopt if the results cannot be produced at all.
  std::optional<PiiGraph> greedy() const;
  bool budgetExhausted() const { return enumerator_->budgetExhausted(); }
  size_t produced() const { return produced_; }

  // Whether e-node `n` may stand for a value living in `buffer` (exposed for diagnostics).
  bool allowed(NodeId n, uint32_t buffer) const;

 private:
  uint32_t childBuffer(NodeId n, uint32_t buffer, size_t child) const;
  bool conformsTo(const hlo::Shape& s, uint32_t buffer) const;
  // `origins` (optional) receives the e-node and buffer each graph node came from.
  PiiGraph toGraph(const egraph::Term& t,
                   std::vector<std::pair<NodeId, uint32_t>>* origins = nullptr) const;
  void rematerializeInPlaceOperands(PiiGraph& graph, const PiiDesc& call,
                                    std::vector<int32_t>& operands,
                                    std::vector<std::pair<NodeId, uint32_t>>* origins) const;
  void separateResults(PiiGraph& graph, std::vector<std::pair<NodeId, uint32_t>>* origins) const;
  int32_t copyWriter(PiiGraph& graph, int32_t value,
                     std::vector<std::pair<NodeId, uint32_t>>* origins) const;
  void dropDeadSources(PiiGraph& graph, std::vector<std::pair<NodeId, uint32_t>>* origins) const;
  std::optional<PiiGraph> greedyAvoiding(const std::set<std::pair<uint32_t, uint32_t>>& forbidden,
                                         std::vector<std::pair<NodeId, uint32_t>>* origins) const;

  const egraph::EGraph& g_;
  const IrLanguage& ir_;
  const ShapeAnalysis& shapes_;
  const taidl::Isa& isa_;
  const UnitSet& units_;
  // Contexts: one per buffer (the buffer a value must be in), then the results node's, then
  // "written into a result's HBM region" (see allowed()).
  uint32_t results_context_;
  uint32_t written_context_;
  std::vector<int32_t> resident_results_;
  uint32_t bufferOf(uint32_t ctx) const { return ctx == written_context_ ? 0 : ctx; }
  std::unique_ptr<egraph::Enumerator> enumerator_;
  ClassId root_;
  bool greedy_done_ = false;
  std::unordered_set<uint64_t> seen_;
  size_t produced_ = 0;
};

}  // namespace tacit::isel
