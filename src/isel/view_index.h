// The strided views (view.h) of every e-class over older classes, through the movement e-nodes of
// the e-graph, memoised for one clean e-graph; refresh() carries the memo over changes of the
// e-graph, computing again only classes whose movement closure changed (the selector's view pass,
// row split and matcher share one for a whole saturation).
#pragma once

#include <cstdint>
#include <limits>
#include <optional>
#include <vector>

#include "isel/ir_builder.h"
#include "isel/view.h"

namespace tacit::isel {

// `view` of the class's bytes over `base`'s bytes. A pad on the way (padView) extends the base
// with bytes that are not the base's: the view is exact (the class *is* those base bytes) only if
// every position it reads is below `valid_end`.
struct BaseView {
  ClassId base;
  StridedView view;
  int64_t valid_end = std::numeric_limits<int64_t>::max();
  bool exact() const { return minPosition(view) >= 0 && maxPosition(view) < valid_end; }
  friend bool operator==(const BaseView&, const BaseView&) = default;
};

class ViewIndex {
 public:
  static constexpr size_t kMaxViewsPerClass = 8;
  ViewIndex(const egraph::EGraph& g, IrBuilder& b) : g_(g), b_(b) {}

  // The identity view of c first, then views over other classes (at most kMaxViewsPerClass, those
  // of the oldest bases), exact or not. The reference is valid until the next call.
  const std::vector<BaseView>& views(ClassId c);

  // The e-graph may have changed since the last views() (it must be clean again): views memoised
  // before stay only for classes whose movement and pad e-nodes, their canonical children, and so
  // on down, are what they were when the views were computed (nodes are never removed, so a class
  // whose closure is unchanged has the same views). Linear in the e-nodes of memoised classes.
  void refresh();
  // When the views of c were computed: a number that grows with every refresh() (0: not known).
  // Views computed since the last refresh() (not taken from the memo) have the current one.
  uint32_t computedAt(ClassId c) const;
  bool computedNow(ClassId c) const { return computedAt(c) == epoch_; }

 private:
  // A movement or pad e-node of a class and its child's canonical id when the views were computed.
  struct Edge {
    NodeId node;
    ClassId child;
    friend bool operator==(const Edge&, const Edge&) = default;
  };
  void extend(ClassId c, NodeId n, std::vector<BaseView>& result);
  bool isViewEdge(NodeId n) const;
  void edgesOf(ClassId c, std::vector<Edge>& out) const;
  void grow(size_t id);

  const egraph::EGraph& g_;
  IrBuilder& b_;
  // Per class id: its views once known_ (dense: the memo of an unordered_map was a large part of
  // the view pass).
  std::vector<std::vector<BaseView>> memo_;
  std::vector<uint8_t> known_;
  // Classes being computed, outermost first. A class reached again is a cycle (x = bitcast(y),
  // y = bitcast(x)): it contributes only its identity there, so the classes computed above it on
  // the stack may miss views; they are forgotten when the outermost query ends and computed again
  // on their next query (by then the rest of the cycle is known).
  std::vector<uint32_t> stack_;
  std::vector<uint8_t> visiting_;  // per class id: on stack_ (dense, like known_)
  std::vector<uint32_t> incomplete_;
  std::vector<BaseView> cut_;
  // Across refresh(): per class id, the edges its views were computed from, and the refresh in
  // which views() computed them.
  std::vector<std::vector<Edge>> edges_;
  std::vector<uint32_t> computed_at_;
  std::vector<Edge> scratch_;
  uint32_t epoch_ = 1;
  uint64_t refreshed_at_version_ = UINT64_MAX;  // EGraph::version() at the last full refresh
};

bool isByteVector(const hlo::Shape& s);

// The index a pass uses: `shared` (kept across passes) refreshed, else a fresh one built in `own`.
ViewIndex& refreshedOrOwn(ViewIndex* shared, std::optional<ViewIndex>& own, const egraph::EGraph& g,
                          IrBuilder& b);

}  // namespace tacit::isel
