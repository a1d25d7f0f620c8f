#include "isel/view_index.h"

#include <algorithm>

namespace tacit::isel {

using hlo::HloOpcode;

bool isByteVector(const hlo::Shape& s) {
  return s.elementType() == hlo::PrimitiveType::kU8 && s.rank() == 1;
}

void ViewIndex::grow(size_t id) {
  if (id < known_.size()) return;
  size_t size = std::max<size_t>(id + 1, 2 * known_.size());
  known_.resize(size, 0);
  visiting_.resize(size, 0);
  memo_.resize(size);
  edges_.resize(size);
  computed_at_.resize(size, 0);
}

// Forgets the views of every class whose view edges changed (a new movement e-node, a child merged
// into another class, the class itself merged away) or lead to a class not remembered (one cut
// short on a cycle and forgotten, whose edges nobody checks), then of every class with an edge to
// a forgotten one, and so on up: the rest were computed from what is still there.
void ViewIndex::refresh() {
  ++epoch_;
  // Unchanged since the last refresh (a pass between two users added nothing): nothing to forget.
  if (g_.version() == refreshed_at_version_) return;
  refreshed_at_version_ = g_.version();
  std::vector<uint32_t> stale;
  for (uint32_t id = 0; id < known_.size(); ++id) {
    if (!known_[id]) continue;
    if (g_.find(ClassId(id)).value != id) {
      known_[id] = 0;
      continue;
    }
    edgesOf(ClassId(id), scratch_);
    const std::vector<Edge>& was = edges_[id];
    if (scratch_ == was && std::all_of(was.begin(), was.end(),
                                       [&](const Edge& e) { return known_[e.child.value] != 0; }))
      continue;
    known_[id] = 0;
    stale.push_back(id);
  }
  while (!stale.empty()) {
    ClassId c(stale.back());
    stale.pop_back();
    g_.forEachParent(c, [&](NodeId n) {
      if (!isViewEdge(n)) return;
      uint32_t parent = g_.classOf(n).value;
      if (parent < known_.size() && known_[parent]) {
        known_[parent] = 0;
        stale.push_back(parent);
      }
    });
  }
}

uint32_t ViewIndex::computedAt(ClassId c) const {
  c = g_.find(c);
  return c.value < known_.size() && known_[c.value] ? computed_at_[c.value] : 0;
}

bool ViewIndex::isViewEdge(NodeId n) const {
  auto opcode = b_.ir().opcodeOf(g_.node(n).op());
  return opcode && (isMovement(*opcode) || *opcode == HloOpcode::kPad);
}

void ViewIndex::edgesOf(ClassId c, std::vector<Edge>& out) const {
  out.clear();
  for (NodeId n : g_.nodes(c))
    if (isViewEdge(n)) out.push_back({n, g_.find(g_.node(n).child(0))});
}

const std::vector<BaseView>& ViewIndex::views(ClassId c) {
  c = g_.find(c);
  grow(c.value);
  if (known_[c.value]) return memo_[c.value];
  std::vector<BaseView> result{{c, StridedView::identity(b_.shape(c).byteSize())}};
  if (visiting_[c.value]) {  // a cycle: identity only, and not remembered
    auto at = std::find(stack_.begin(), stack_.end(), c.value);
    for (++at; at != stack_.end(); ++at)
      incomplete_.push_back(*at);
    cut_ = std::move(result);
    return cut_;
  }
  visiting_[c.value] = 1;
  stack_.push_back(c.value);
  for (NodeId n : g_.nodes(c))
    extend(c, n, result);
  stack_.pop_back();
  // Deterministic cap: keep the identity and the views of the oldest bases (mostly in order
  // already: a stable sort allocates and moves every view).
  auto older = [](const BaseView& a, const BaseView& x) { return a.base.value < x.base.value; };
  if (!std::is_sorted(result.begin() + 1, result.end(), older))
    std::stable_sort(result.begin() + 1, result.end(), older);
  if (result.size() > kMaxViewsPerClass) result.resize(kMaxViewsPerClass);
  visiting_[c.value] = 0;
  // memo_ does not grow below (views() of the children were queried above).
  memo_[c.value] = std::move(result);
  known_[c.value] = 1;
  computed_at_[c.value] = epoch_;
  edgesOf(c, edges_[c.value]);
  if (stack_.empty()) {
    // The outermost query is complete (cuts only mark classes above the cut one).
    for (uint32_t x : incomplete_) {
      known_[x] = 0;
      memo_[x].clear();
    }
    incomplete_.clear();
  }
  return memo_[c.value];
}

// The views of c through e-node n (a movement, or a pad that only grows dimension 0).
void ViewIndex::extend(ClassId c, NodeId n, std::vector<BaseView>& result) {
  egraph::ENode e = g_.node(n);
  auto opcode = b_.ir().opcodeOf(e.op());
  if (!opcode || (!isMovement(*opcode) && *opcode != HloOpcode::kPad)) return;
  ClassId child = g_.find(e.child(0));
  // A reference: nothing below queries views() (which could move memo_ or overwrite cut_) and memo
  // entries are erased only when the outermost query ends.
  const std::vector<BaseView>& child_views = views(child);
  const OpDesc& d = b_.ir().opDesc(e.attr());
  const hlo::Shape& operand = b_.shape(child);  // views() does not add classes
  for (const BaseView& bv : child_views) {
    if (bv.base == c) continue;
    BaseView candidate{bv.base, {}, bv.valid_end};
    if (*opcode == HloOpcode::kPad) {
      auto v = padView(bv.view, operand, *d.attrs.padding, d.shape);
      if (!v) continue;
      // The bytes past the operand's are padding, not the base's.
      candidate.valid_end = std::min(bv.valid_end, bv.view.offset + operand.byteSize());
      candidate.view = std::move(*v);
    } else {
      auto v = applyMovement(bv.view, operand, *opcode, d.attrs, d.shape);
      if (!v) continue;
      candidate.view = std::move(*v);
    }
    if (std::find(result.begin(), result.end(), candidate) == result.end())
      result.push_back(std::move(candidate));
  }
}

ViewIndex& refreshedOrOwn(ViewIndex* shared, std::optional<ViewIndex>& own, const egraph::EGraph& g,
                          IrBuilder& b) {
  if (!shared) return own.emplace(g, b);
  shared->refresh();
  return *shared;
}

}  // namespace tacit::isel
