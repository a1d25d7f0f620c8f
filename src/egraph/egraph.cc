#include "egraph/egraph.h"

#include <algorithm>
#include <cstring>
#include <exception>

namespace tacit::egraph {

// Marks the e-graph poisoned if an exception leaves a mutation half done (an analysis or modify
// hook threw). Nested scopes (modify -> add -> ...) are fine.
class EGraph::MutationScope {
 public:
  explicit MutationScope(EGraph& g) : g_(g), uncaught_(std::uncaught_exceptions()) {}
  ~MutationScope() {
    if (std::uncaught_exceptions() > uncaught_) g_.poisoned_ = true;
  }
  MutationScope(const MutationScope&) = delete;
  MutationScope& operator=(const MutationScope&) = delete;

 private:
  EGraph& g_;
  int uncaught_;
};

ClassId* EGraph::ChildArena::alloc(size_t n) {
  if (n == 0) return nullptr;
  if (cap_ - used_ < n) {
    // Geometric chunk sizes keep small e-graphs small and big ones at a handful of chunks.
    size_t size = std::max(next_cap_, n);
    next_cap_ = std::min<size_t>(next_cap_ * 2, size_t{1} << 16);
    chunks_.push_back(std::make_unique<ClassId[]>(size));
    used_ = 0;
    cap_ = size;
    bytes_ += size * sizeof(ClassId);
  }
  ClassId* p = chunks_.back().get() + used_;
  used_ += n;
  return p;
}

EGraph::EGraph(std::shared_ptr<Language> lang) : lang_(std::move(lang)) {
  if (!lang_) throw EGraphError("EGraph: null language");
}

EGraph::~EGraph() = default;

void EGraph::attachAnalysis(std::unique_ptr<Analysis> a) {
  if (!a) throw EGraphError("EGraph::addAnalysis: null analysis");
  if (!nodes_.empty())
    throw EGraphError("EGraph::addAnalysis: attach analyses before adding nodes");
  if (a->graph_ != nullptr) throw EGraphError("EGraph::addAnalysis: analysis already attached");
  a->graph_ = this;
  analyses_.push_back(std::move(a));
}

// ---------------------------------------------------------------------------------------------
// Checks

void EGraph::throwPoisoned() const {
  throw EGraphError(
      "e-graph is unusable: an exception escaped from an analysis or modify hook during a "
      "mutation");
}

void EGraph::throwBadClass(ClassId c, const char* what) const {
  throw EGraphError(std::string(what) + ": class id " + std::to_string(c.value) +
                    " does not exist (the e-graph has " + std::to_string(uf_.size()) +
                    " class ids)");
}

void EGraph::throwNotClean(const char* what) const {
  throw EGraphError(std::string(what) + ": the e-graph has pending changes; call rebuild() first");
}

// ---------------------------------------------------------------------------------------------
// Union-find and hashing

uint32_t EGraph::findRoot(uint32_t c) const {
  // Path halving: every other node on the path skips to its grandparent.
  while (uf_[c] != c) {
    uf_[c] = uf_[uf_[c]];
    c = uf_[c];
  }
  return c;
}

ClassId EGraph::find(ClassId c) const {
  checkClass(c, "EGraph::find");
  return ClassId(findRoot(c.value));
}

uint32_t EGraph::hashNode(OpId op, AttrId attr, const ClassId* kids, size_t n) {
  uint64_t h = detail::hashMix(op.value | (uint64_t{attr.value} << 32), n);
  size_t i = 0;
  for (; i + 2 <= n; i += 2)
    h = detail::hashMix(h, kids[i].value | (uint64_t{kids[i + 1].value} << 32));
  if (i < n) h = detail::hashMix(h, kids[i].value);
  return static_cast<uint32_t>(detail::hashFinish(h));
}

uint32_t EGraph::hashOf(uint32_t n) const {
  const NodeRec& r = nodes_[n];
  return hashNode(r.op, r.attr, kidsOf(r), r.arity);
}

uint32_t EGraph::findInMemo(uint32_t hash, OpId op, AttrId attr, const ClassId* kids,
                            size_t n) const {
  return memo_.find(hash, [&](uint32_t cand) {
    const NodeRec& r = nodes_[cand];
    return r.op == op && r.attr == attr && r.arity == n && std::equal(kids, kids + n, kidsOf(r));
  });
}

// ---------------------------------------------------------------------------------------------
// Adding nodes

ClassId EGraph::add(OpId op, AttrId attr, std::span<const ClassId> children) {
  lang_->checkNode(op, children.size());
  if (!lang_->attrs().contains(attr))
    throw EGraphError("EGraph::add: attribute id " + std::to_string(attr.value) +
                      " is not in the language's attribute table");
  checkUsable();
  if (nodes_.size() >= NodeId::kInvalidValue - 1)
    throw EGraphError("EGraph::add: too many e-nodes");
  scratch_.resize(children.size());
  for (size_t i = 0; i < children.size(); ++i) {
    checkClass(children[i], "EGraph::add");
    scratch_[i] = ClassId(findRoot(children[i].value));
  }
  uint32_t h = hashNode(op, attr, scratch_.data(), scratch_.size());
  uint32_t found = findInMemo(h, op, attr, scratch_.data(), scratch_.size());
  if (found != detail::IdTable::kEmpty) return ClassId(findRoot(nodes_[found].cls));
  return insertNode(op, attr, h);
}

ClassId EGraph::insertNode(OpId op, AttrId attr, uint32_t hash) {
  MutationScope scope(*this);
  auto id = static_cast<uint32_t>(nodes_.size());
  size_t n = scratch_.size();
  NodeRec rec_node{{}, static_cast<uint32_t>(n), op, attr, id, kNil, 0};
  if (n > 2) {
    if (far_.size() >= UINT32_MAX - 1) throw EGraphError("EGraph::add: too many large nodes");
    ClassId* far = arena_.alloc(n);
    std::memcpy(far, scratch_.data(), n * sizeof(ClassId));
    rec_node.small[0] = ClassId(static_cast<uint32_t>(far_.size()));
    far_.push_back(far);
  } else {
    for (size_t i = 0; i < n; ++i)
      rec_node.small[i] = scratch_[i];
  }
  nodes_.push_back(rec_node);
  const ClassId* kids = kidsOf(nodes_[id]);
  uf_.push_back(id);
  ClassRec rec;
  rec.head = rec.tail = id;
  classes_.push_back(rec);
  memo_.insert(hash, id);
  for (size_t i = 0; i < n; ++i) {
    // A repeated child needs one parent link only (small arities; duplicates are harmless).
    bool repeated = false;
    for (size_t j = 0; j < i && j < 8; ++j)
      repeated = repeated || kids[j] == kids[i];
    if (!repeated) addParentLink(kids[i].value, id);
  }
  ++class_count_;
  ++version_;
  index_dirty_ = true;
  ENode e = view(id);
  for (auto& a : analyses_)
    a->onMake(*this, ClassId(id), e);
  for (auto& a : analyses_)
    a->modify(*this, ClassId(findRoot(id)));
  return ClassId(findRoot(id));
}

void EGraph::addParentLink(uint32_t cls, uint32_t node) {
  auto l = static_cast<uint32_t>(plinks_.size());
  plinks_.push_back(ParentLink{node, kNil});
  ClassRec& c = classes_[cls];
  if (c.ptail == kNil) {
    c.phead = l;
  } else {
    plinks_[c.ptail].next = l;
  }
  c.ptail = l;
  ++c.pcount;
}

void EGraph::prefetchNode(OpId op, AttrId attr, std::span<const ClassId> children) const {
  constexpr size_t kMax = 8;
  if (children.size() > kMax) return;
  ClassId kids[kMax];
  for (size_t i = 0; i < children.size(); ++i) {
    if (children[i].value >= uf_.size()) return;
    kids[i] = ClassId(findRoot(children[i].value));
  }
  memo_.prefetch(hashNode(op, attr, kids, children.size()));
}

std::optional<ClassId> EGraph::lookup(OpId op, AttrId attr,
                                      std::span<const ClassId> children) const {
  lang_->checkNode(op, children.size());
  lookup_scratch_.resize(children.size());
  for (size_t i = 0; i < children.size(); ++i) {
    checkClass(children[i], "EGraph::lookup");
    lookup_scratch_[i] = ClassId(findRoot(children[i].value));
  }
  uint32_t h = hashNode(op, attr, lookup_scratch_.data(), children.size());
  uint32_t found = findInMemo(h, op, attr, lookup_scratch_.data(), children.size());
  if (found == detail::IdTable::kEmpty) return std::nullopt;
  return ClassId(findRoot(nodes_[found].cls));
}

// ---------------------------------------------------------------------------------------------
// Union and rebuild

// Appends the live parents of `cls` to `out` and drops dead links from its list on the way.
void EGraph::collectParents(uint32_t cls, std::vector<uint32_t>& out) {
  ClassRec& c = classes_[cls];
  uint32_t prev = kNil;
  uint32_t count = 0;
  for (uint32_t l = c.phead; l != kNil; l = plinks_[l].next) {
    uint32_t n = plinks_[l].node;
    if (nodes_[n].flags & kDead) continue;
    out.push_back(n);
    if (prev == kNil) {
      c.phead = l;
    } else {
      plinks_[prev].next = l;
    }
    prev = l;
    ++count;
  }
  if (prev == kNil) {
    c.phead = kNil;
  } else {
    plinks_[prev].next = kNil;
  }
  c.ptail = prev;
  c.pcount = count;
}

bool EGraph::unite(ClassId a, ClassId b) {
  checkClass(a, "EGraph::unite");
  checkClass(b, "EGraph::unite");
  checkUsable();
  return uniteRoots(findRoot(a.value), findRoot(b.value));
}

bool EGraph::uniteRoots(uint32_t a, uint32_t b) {
  a = findRoot(a);
  b = findRoot(b);
  if (a == b) return false;
  MutationScope scope(*this);
  // The class with more parents stays the root: only the other one's parents need repair.
  if (classes_[a].pcount < classes_[b].pcount ||
      (classes_[a].pcount == classes_[b].pcount && b < a))
    std::swap(a, b);
  uf_[b] = a;
  size_t first = pending_.size();
  collectParents(b, pending_);
  DidMerge dm;
  for (auto& an : analyses_)
    dm = dm | an->onMerge(ClassId(a), ClassId(b));
  if (dm.into_changed) collectParents(a, analysis_pending_);
  if (dm.from_changed)
    analysis_pending_.insert(analysis_pending_.end(),
                             pending_.begin() + static_cast<ptrdiff_t>(first), pending_.end());
  ClassRec& ra = classes_[a];
  ClassRec& rb = classes_[b];
  if (rb.phead != kNil) {
    if (ra.ptail == kNil) {
      ra.phead = rb.phead;
    } else {
      plinks_[ra.ptail].next = rb.phead;
    }
    ra.ptail = rb.ptail;
    ra.pcount += rb.pcount;
  }
  nodes_[ra.tail].next = rb.head;  // every class has at least one node
  ra.tail = rb.tail;
  rb = ClassRec{};
  --class_count_;
  ++unions_;
  ++version_;
  index_dirty_ = true;
  for (auto& an : analyses_)
    an->modify(*this, ClassId(findRoot(a)));
  return true;
}

size_t EGraph::rebuild() {
  checkUsable();
  uint64_t before = unions_;
  MutationScope scope(*this);
  processPending();
  if (index_dirty_) buildIndex();
  return static_cast<size_t>(unions_ - before);
}

size_t EGraph::propagate() {
  checkUsable();
  uint64_t before = unions_;
  MutationScope scope(*this);
  processPending();
  return static_cast<size_t>(unions_ - before);
}

void EGraph::processPending() {
  // Alternate between restoring congruence and propagating analysis data until both are quiet:
  // propagation may call modify(), which may add nodes and unite classes.
  while (!pending_.empty() || !analysis_pending_.empty()) {
    while (!pending_.empty()) {
      uint32_t n = pending_.back();
      pending_.pop_back();
      repair(n);
    }
    while (!analysis_pending_.empty()) {
      uint32_t n = analysis_pending_.back();
      analysis_pending_.pop_back();
      refresh(n);
    }
  }
}

// Re-canonicalises one node's children; if it now equals another node, the two classes are
// congruent and get united (the node itself is retired as a duplicate).
void EGraph::repair(uint32_t n) {
  if (nodes_[n].flags & kDead) return;
  bool canonical = true;
  {
    const NodeRec& r = nodes_[n];
    for (uint32_t i = 0; i < r.arity; ++i)
      canonical = canonical && findRoot(kidsOf(r)[i].value) == kidsOf(r)[i].value;
  }
  if (canonical) return;
  bool erased = memo_.erase(hashOf(n), n);
  if (!erased) throw EGraphError("EGraph internal error: live node missing from the hash-cons");
  NodeRec& r = nodes_[n];
  ClassId* kids = kidsOf(r);
  for (uint32_t i = 0; i < r.arity; ++i)
    kids[i] = ClassId(findRoot(kids[i].value));
  uint32_t h = hashNode(r.op, r.attr, kids, r.arity);
  uint32_t other = findInMemo(h, r.op, r.attr, kids, r.arity);
  if (other == detail::IdTable::kEmpty) {
    memo_.insert(h, n);
    return;
  }
  r.flags |= kDead;
  index_dirty_ = true;
  uniteRoots(nodes_[n].cls, nodes_[other].cls);
}

void EGraph::refresh(uint32_t n) {
  if (nodes_[n].flags & kDead) return;
  uint32_t c = findRoot(nodes_[n].cls);
  ENode e = view(n);
  bool changed = false;
  for (auto& a : analyses_)
    changed = a->onRefresh(*this, ClassId(c), e) || changed;
  if (!changed) return;
  collectParents(c, analysis_pending_);
  for (auto& a : analyses_)
    a->modify(*this, ClassId(findRoot(c)));
}

// Sorts one class's items by (op, attr, first child, NodeId): deterministic, and the first child
// is in the key so that the matcher can binary-search a class for the nodes whose first child is
// already bound (repeated variables, ground sub-terms).
void EGraph::sortClassItems(uint32_t begin, uint32_t count) {
  auto less = [](const IndexItem& a, const IndexItem& b) {
    uint64_t ka = (uint64_t{a.op} << 32) | a.attr, kb = (uint64_t{b.op} << 32) | b.attr;
    if (ka != kb) return ka < kb;
    return ((uint64_t{a.child0} << 32) | a.id) < ((uint64_t{b.child0} << 32) | b.id);
  };
  IndexItem* first = index_items_.data() + begin;
  if (count <= 16) {  // most classes are small: insertion sort, no calls
    for (uint32_t i = 1; i < count; ++i) {
      IndexItem x = first[i];
      uint32_t j = i;
      for (; j > 0 && less(x, first[j - 1]); --j)
        first[j] = first[j - 1];
      first[j] = x;
    }
    return;
  }
  std::sort(first, first + count, less);
}

// Flattens the union-find and rebuilds the sorted per-class and per-operator node lists. Sort
// keys are gathered in one sequential pass over the node table, so the sorting itself touches
// only the compact item array.
void EGraph::buildIndex() {
  ++index_generation_;
  const auto total = static_cast<uint32_t>(nodes_.size());
  for (uint32_t i = 0; i < total; ++i)
    uf_[i] = findRoot(i);
  class_list_.clear();
  for (uint32_t i = 0; i < total; ++i) {
    if (uf_[i] != i) continue;
    class_list_.push_back(ClassId(i));
    classes_[i].size = 0;
  }
  uint32_t live = 0;
  for (uint32_t n = 0; n < total; ++n) {
    if (nodes_[n].flags & kDead) continue;
    ++classes_[uf_[nodes_[n].cls]].size;
    ++live;
  }
  index_cursor_.resize(total);
  uint32_t offset = 0;
  for (ClassId c : class_list_) {
    ClassRec& rec = classes_[c.value];
    rec.index = offset;
    index_cursor_[c.value] = offset;
    offset += rec.size;
  }
  index_items_.resize(live);
  for (uint32_t n = 0; n < total; ++n) {
    const NodeRec& r = nodes_[n];
    if (r.flags & kDead) continue;
    index_items_[index_cursor_[uf_[r.cls]]++] =
        IndexItem{r.op.value, r.attr.value, r.arity == 0 ? 0u : kidsOf(r)[0].value, n};
  }
  op_begin_.assign(lang_->opCount() + 1, 0);
  class_nodes_.resize(live);
  for (ClassId c : class_list_) {
    const ClassRec& rec = classes_[c.value];
    if (rec.size > 1) sortClassItems(rec.index, rec.size);
  }
  for (uint32_t k = 0; k < live; ++k) {
    class_nodes_[k] = NodeId(index_items_[k].id);
    ++op_begin_[index_items_[k].op + 1];
  }
  for (size_t o = 1; o < op_begin_.size(); ++o)
    op_begin_[o] += op_begin_[o - 1];
  op_nodes_.resize(live);
  op_classes_.resize(live);
  index_cursor_.assign(op_begin_.begin(), op_begin_.end() - 1);
  for (ClassId c : class_list_) {
    const ClassRec& rec = classes_[c.value];
    for (uint32_t k = rec.index; k < rec.index + rec.size; ++k) {
      uint32_t at = index_cursor_[index_items_[k].op]++;
      op_nodes_[at] = NodeId(index_items_[k].id);
      op_classes_[at] = c;
    }
  }
  index_dirty_ = false;
}

// ---------------------------------------------------------------------------------------------
// Queries

ENode EGraph::node(NodeId n) const {
  if (n.value >= nodes_.size())
    throw EGraphError("EGraph::node: node id " + std::to_string(n.value) + " does not exist");
  return view(n.value);
}

ClassId EGraph::classOf(NodeId n) const {
  if (n.value >= nodes_.size())
    throw EGraphError("EGraph::classOf: node id " + std::to_string(n.value) + " does not exist");
  return ClassId(findRoot(nodes_[n.value].cls));
}

bool EGraph::alive(NodeId n) const {
  return n.value < nodes_.size() && !(nodes_[n.value].flags & kDead);
}

std::span<const ClassId> EGraph::classes() const {
  checkClean("EGraph::classes");
  return class_list_;
}

std::span<const NodeId> EGraph::nodes(ClassId c) const {
  checkClean("EGraph::nodes");
  const ClassRec& rec = classes_[find(c).value];
  return {class_nodes_.data() + rec.index, rec.size};
}

std::span<const NodeId> EGraph::nodes(ClassId c, OpId op) const {
  std::span<const NodeId> all = nodes(c);
  auto lo = std::lower_bound(all.begin(), all.end(), op,
                             [&](NodeId n, OpId o) { return nodes_[n.value].op < o; });
  auto hi = lo;
  while (hi != all.end() && nodes_[hi->value].op == op)
    ++hi;
  return {lo, hi};
}

std::span<const NodeId> EGraph::nodesWithOp(OpId op) const {
  checkClean("EGraph::nodesWithOp");
  if (op.value + 1 >= op_begin_.size()) return {};
  return {op_nodes_.data() + op_begin_[op.value], op_begin_[op.value + 1] - op_begin_[op.value]};
}

std::span<const ClassId> EGraph::classesWithOp(OpId op) const {
  checkClean("EGraph::classesWithOp");
  if (op.value + 1 >= op_begin_.size()) return {};
  return {op_classes_.data() + op_begin_[op.value], op_begin_[op.value + 1] - op_begin_[op.value]};
}

size_t EGraph::memoryBytes() const {
  size_t bytes = nodes_.memoryBytes() + arena_.memoryBytes() + far_.capacity() * sizeof(void*) +
                 uf_.capacity() * sizeof(uint32_t) + classes_.capacity() * sizeof(ClassRec) +
                 plinks_.capacity() * sizeof(ParentLink) + memo_.memoryBytes() +
                 (pending_.capacity() + analysis_pending_.capacity()) * sizeof(uint32_t) +
                 (class_list_.capacity() + class_nodes_.capacity() + op_nodes_.capacity() +
                  op_classes_.capacity() + index_cursor_.capacity()) *
                     sizeof(uint32_t) +
                 op_begin_.capacity() * sizeof(uint32_t) +
                 index_items_.capacity() * sizeof(IndexItem);
  for (const auto& a : analyses_)
    bytes += a->memoryBytes();
  return bytes;
}

// ---------------------------------------------------------------------------------------------
// Invariant check (tests and debugging): recomputes everything from the node table.

void EGraph::checkInvariants() const {
  checkClean("EGraph::checkInvariants");
  auto fail = [](const std::string& what) {
    throw EGraphError("e-graph invariant violated: " + what);
  };
  size_t live = 0;
  size_t roots = 0;
  for (uint32_t i = 0; i < uf_.size(); ++i)
    if (uf_[i] == i) ++roots;
  if (roots != class_count_ || roots != class_list_.size()) fail("class count");
  for (uint32_t n = 0; n < nodes_.size(); ++n) {
    const NodeRec& r = nodes_[n];
    if (r.flags & kDead) continue;
    ++live;
    for (uint32_t i = 0; i < r.arity; ++i)
      if (uf_[kidsOf(r)[i].value] != kidsOf(r)[i].value)
        fail("node " + std::to_string(n) + " has a non-canonical child");
    uint32_t m = findInMemo(hashOf(n), r.op, r.attr, kidsOf(r), r.arity);
    if (m != n) fail("node " + std::to_string(n) + " is not its own hash-cons entry (duplicate?)");
  }
  if (live != memo_.size()) fail("hash-cons holds entries that are not live nodes");
  size_t listed = 0;
  std::vector<uint32_t> walked;
  for (ClassId c : class_list_) {
    const ClassRec& rec = classes_[c.value];
    if (rec.size == 0) fail("empty class " + std::to_string(c.value));
    walked.clear();
    for (uint32_t n = rec.head; n != kNil; n = nodes_[n].next)
      if (!(nodes_[n].flags & kDead)) walked.push_back(n);
    std::sort(walked.begin(), walked.end());
    std::vector<uint32_t> indexed;
    for (NodeId n : classNodesUnchecked(c.value)) {
      if (uf_[nodes_[n.value].cls] != c.value) fail("node indexed in the wrong class");
      indexed.push_back(n.value);
    }
    std::sort(indexed.begin(), indexed.end());
    if (walked != indexed)
      fail("class list and index disagree for class " + std::to_string(c.value));
    listed += rec.size;
  }
  if (listed != live) fail("not every live node is in a class");
  // Every live node is reachable from the parent list of each of its child classes.
  std::vector<std::vector<uint32_t>> parents(uf_.size());
  for (ClassId c : class_list_) {
    forEachParent(c, [&](NodeId p) { parents[c.value].push_back(p.value); });
    std::sort(parents[c.value].begin(), parents[c.value].end());
  }
  for (uint32_t n = 0; n < nodes_.size(); ++n) {
    const NodeRec& r = nodes_[n];
    if (r.flags & kDead) continue;
    for (uint32_t i = 0; i < r.arity; ++i) {
      const auto& ps = parents[kidsOf(r)[i].value];
      if (!std::binary_search(ps.begin(), ps.end(), n))
        fail("node " + std::to_string(n) + " missing from its child's parent list");
    }
  }
}

}  // namespace tacit::egraph
