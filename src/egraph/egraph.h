// The e-graph: hash-consed e-nodes, union-find over e-classes, deferred rebuild, and e-class
// analyses. A generic engine in the spirit of egg (Willsey et al., POPL 2021); it knows nothing
// about tensors or ISAs.
//
// Usage:
//   auto lang = std::make_shared<Language>();
//   OpId add = lang->addOp("+", 2), num = lang->addOp("num", 0);
//   EGraph g(lang);
//   auto& sizes = g.addAnalysis<MySizeAnalysis>();        // optional, before the first node
//   ClassId one = g.add(num, lang->attrs().internInt(1));
//   ClassId x = g.add(add, {one, one});
//   g.unite(x, one);                                      // deferred: ...
//   g.rebuild();                                          // ... congruence restored here
//   for (NodeId n : g.nodes(g.find(x))) { ENode e = g.node(n); ... }
//
// Invariants after rebuild() (clean() == true): every e-node's children are canonical class ids;
// no two e-nodes are equal (hash-cons has no duplicates) and so congruent e-nodes are in one class;
// every analysis value equals the merge of make() over the class's e-nodes (a fixpoint);
// nodes()/classes() are sorted and deterministic. Between a mutation and rebuild() the structural
// queries marked "requires clean()" throw EGraphError; find(), node(), forEachNode(), add(),
// unite() and the counters work at any time.
//
// Memory: e-nodes live in one chunked table (32-byte records that never move; up to two children
// inside the record, longer child lists in a chunked arena); class node lists and parent lists
// are intrusive linked lists, so there is no heap allocation per e-node or per e-class. Retired
// duplicates stay in the table: memory is proportional to the e-nodes ever added.
// memoryBytes() reports the total.
//
// Not thread-safe, not even for concurrent const calls (find() compresses paths).
#pragma once

#include <cstdint>
#include <initializer_list>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "egraph/id_table.h"
#include "egraph/ids.h"
#include "egraph/language.h"

namespace tacit::egraph {

class EGraph;

// A read-only view of one e-node. It stays valid for the e-graph's lifetime (node records and
// child lists never move); children() sees the ids that rebuild() canonicalises in place.
class ENode {
 public:
  ENode() = default;
  ENode(OpId op, AttrId attr, std::span<const ClassId> children)
      : kids_(children.data()),
        arity_(static_cast<uint32_t>(children.size())),
        op_(op),
        attr_(attr) {}
  OpId op() const { return op_; }
  AttrId attr() const { return attr_; }
  size_t arity() const { return arity_; }
  std::span<const ClassId> children() const { return {kids_, arity_}; }
  ClassId child(size_t i) const { return kids_[i]; }

 private:
  const ClassId* kids_ = nullptr;
  uint32_t arity_ = 0;
  OpId op_;
  AttrId attr_;
};

// What a merge of analysis data changed (egg's DidMerge): into_changed = the merged value differs
// from the old `into`; from_changed = it differs from `from`. The engine re-runs make() on the
// parents of each side that changed. When unsure, return {true, true}: that is always correct,
// only slower.
struct DidMerge {
  bool into_changed = false;
  bool from_changed = false;
  DidMerge operator|(DidMerge o) const {
    return {into_changed || o.into_changed, from_changed || o.from_changed};
  }
};

// An e-class analysis (egg §4). Derive from TypedAnalysis<Data> rather than from this class.
//
// The engine calls make() for the e-node that creates a class, merge() when two classes are
// united, and make()+merge() again for every parent of a class whose data changed (upward
// propagation), until a fixpoint; then modify(), which may add e-nodes and unite classes (constant
// folding). An exception thrown from make/merge/modify (e.g. "merging classes with different
// shapes") propagates to the caller of add()/unite()/rebuild() and leaves the e-graph poisoned:
// every later mutation throws EGraphError, reads remain memory-safe (for diagnostics, DOT export).
class Analysis {
 public:
  virtual ~Analysis() = default;
  // Called after the class's data was created or changed. `c` is canonical at the time of the
  // call. The default does nothing.
  virtual void modify(EGraph& g, ClassId c) {
    (void)g;
    (void)c;
  }
  virtual size_t memoryBytes() const { return 0; }
  // The e-graph this analysis is attached to (nullptr before EGraph::addAnalysis).
  const EGraph* egraph() const { return graph_; }

 private:
  friend class EGraph;
  virtual void onMake(const EGraph& g, ClassId c, const ENode& n) = 0;
  virtual DidMerge onMerge(ClassId into, ClassId from) = 0;
  virtual bool onRefresh(const EGraph& g, ClassId c, const ENode& n) = 0;
  const EGraph* graph_ = nullptr;
};

// An analysis whose per-class value is a `D` (shape, dtype, constant-ness, ...).
template <typename D>
class TypedAnalysis : public Analysis {
 public:
  using Data = D;
  // The value of one e-node; data(child) is valid for each child. Must be a pure function of the
  // node and its children's data.
  virtual D make(const EGraph& g, const ENode& node) = 0;
  // Joins `from` into `into` and says what changed. Throw to report a conflict.
  virtual DidMerge merge(D& into, D from) = 0;

  // The value of find(c).
  const D& data(ClassId c) const;
  size_t memoryBytes() const override { return data_.capacity() * sizeof(D); }

 private:
  void onMake(const EGraph& g, ClassId c, const ENode& n) override;
  DidMerge onMerge(ClassId into, ClassId from) override {
    return merge(data_[into.value], std::move(data_[from.value]));
  }
  bool onRefresh(const EGraph& g, ClassId c, const ENode& n) override {
    return merge(data_[c.value], make(g, n)).into_changed;
  }
  std::vector<D> data_;  // indexed by class id; only canonical entries are meaningful
};

class EGraph {
 public:
  explicit EGraph(std::shared_ptr<Language> lang);
  ~EGraph();
  EGraph(const EGraph&) = delete;
  EGraph& operator=(const EGraph&) = delete;

  Language& language() { return *lang_; }
  const Language& language() const { return *lang_; }
  const std::shared_ptr<Language>& languagePtr() const { return lang_; }

  // --- analyses -------------------------------------------------------------------------------
  // Attaches an analysis; only allowed while the e-graph is empty. Several analyses may be
  // attached; each sees every event in attachment order.
  template <typename A, typename... Args>
  A& addAnalysis(Args&&... args) {
    auto a = std::make_unique<A>(std::forward<Args>(args)...);
    A& ref = *a;
    attachAnalysis(std::move(a));
    return ref;
  }
  void attachAnalysis(std::unique_ptr<Analysis> a);

  // --- building -------------------------------------------------------------------------------
  // Adds the e-node (op, attr, children) and returns its (canonical) class: the existing class if
  // an equal e-node exists, else a new class. Throws EGraphError for an unknown operator, a wrong
  // number of children, an attribute id not in the language's table or a class id that does not
  // exist.
  ClassId add(OpId op, AttrId attr, std::span<const ClassId> children);
  ClassId add(OpId op, AttrId attr, std::initializer_list<ClassId> children) {
    return add(op, attr, std::span<const ClassId>(children.begin(), children.size()));
  }
  ClassId add(OpId op, std::span<const ClassId> children) { return add(op, kNoAttr, children); }
  ClassId add(OpId op, std::initializer_list<ClassId> children) {
    return add(op, kNoAttr, children);
  }
  ClassId add(OpId op, AttrId attr) { return add(op, attr, std::span<const ClassId>()); }
  // Cache hints for a later add()/unite(): load the union-find entry of a class, or the
  // hash-cons slot an add() of this node would probe. No effect on the e-graph's contents. The
  // Runner issues them a few matches ahead, because add() is bound by memory latency.
  void prefetchClass(ClassId c) const {
    if (c.value < uf_.size()) __builtin_prefetch(&uf_[c.value]);
  }
  void prefetchNode(OpId op, AttrId attr, std::span<const ClassId> children) const;
  // The class of an existing e-node equal to (op, attr, find(children)...), without adding it.
  // Before rebuild() this may miss a node whose stored children are not canonical yet.
  std::optional<ClassId> lookup(OpId op, AttrId attr, std::span<const ClassId> children) const;

  // Merges two classes; returns false if they were already one. Congruence closure and analysis
  // propagation are deferred to rebuild().
  bool unite(ClassId a, ClassId b);
  // Restores every invariant (see the top of this file) and rebuilds the sorted class index.
  // Returns the number of unions rebuild() itself performed (congruences found). Cost is
  // proportional to the pending work plus a linear pass over the node table for the index.
  size_t rebuild();
  // The first half of rebuild(): congruence closure and analysis propagation, without the sorted
  // index (so clean() stays false). Afterwards nodeCount() and classCount() are exact. Cost is
  // proportional to the pending work only; the Runner uses it to check limits mid-iteration.
  size_t propagate();
  // No pending work: the invariants hold and the "requires clean()" queries may be used.
  bool clean() const { return !index_dirty_ && pending_.empty() && analysis_pending_.empty(); }
  // Nodes waiting for congruence repair or analysis propagation (the work propagate() will do,
  // not counting cascades).
  size_t pendingWork() const { return pending_.size() + analysis_pending_.size(); }
  // No node waits for congruence repair: every hash-cons entry is keyed by canonical children, so
  // add() finds every existing equal node (after a union it may miss one until propagate() and
  // add a duplicate, which the rebuild merges).
  bool hashConsCanonical() const { return pending_.empty(); }

  // --- queries at any time --------------------------------------------------------------------
  ClassId find(ClassId c) const;  // the canonical id; throws for an id that does not exist
  bool same(ClassId a, ClassId b) const { return find(a) == find(b); }
  bool containsClass(ClassId c) const { return c.value < uf_.size(); }
  ENode node(NodeId n) const;       // throws for an id that does not exist
  ClassId classOf(NodeId n) const;  // find() of the class the node belongs to
  // False for an e-node that rebuild() found to duplicate another (it stays in the table).
  bool alive(NodeId n) const;
  // Calls fn(NodeId) for every live e-node of find(c) (children may be non-canonical before
  // rebuild()). fn must not add nodes or unite classes.
  template <typename Fn>
  void forEachNode(ClassId c, Fn&& fn) const;
  // Calls fn(NodeId) for every live e-node that has find(c) as a child. A node may be reported
  // more than once. fn must not add nodes or unite classes.
  template <typename Fn>
  void forEachParent(ClassId c, Fn&& fn) const;

  size_t nodeCount() const { return memo_.size(); }  // live e-nodes
  size_t classCount() const { return class_count_; }
  size_t nodeIdCount() const { return nodes_.size(); }  // every NodeId ever handed out
  uint64_t unionCount() const { return unions_; }
  // Changes whenever a node is added or two classes are united (iterators compare it).
  uint64_t version() const { return version_; }
  // Changes whenever rebuild() builds a new sorted index (not when it had nothing to do): caches
  // of derived facts may live for one generation.
  uint64_t indexGeneration() const { return index_generation_; }
  size_t memoryBytes() const;
  bool poisoned() const { return poisoned_; }

  // --- queries that require clean() -----------------------------------------------------------
  // Canonical class ids, ascending.
  std::span<const ClassId> classes() const;
  // The e-nodes of find(c), sorted by (op, attr, first child, NodeId).
  std::span<const NodeId> nodes(ClassId c) const;
  // The e-nodes of find(c) with operator `op` (a sub-range of nodes(c)).
  std::span<const NodeId> nodes(ClassId c, OpId op) const;
  // Every e-node with operator `op`, sorted by class, then as in nodes(c).
  std::span<const NodeId> nodesWithOp(OpId op) const;
  // The class of each entry of nodesWithOp(op) (the same order).
  std::span<const ClassId> classesWithOp(OpId op) const;
  // Checks every invariant from scratch; throws EGraphError naming the first violation.
  void checkInvariants() const;

  std::span<const std::unique_ptr<Analysis>> analyses() const { return analyses_; }

 private:
  friend class MatchRun;  // the e-matching VM reads the index through the unchecked accessors
  static constexpr uint32_t kNil = 0xFFFFFFFFu;
  static constexpr uint32_t kDead = 1;

  // 32 bytes. Up to two children live in the record itself (one cache miss reads a binary node
  // whole); larger child lists live in the arena, reached through far_.
  struct NodeRec {
    ClassId small[2];  // the children if arity <= 2, else small[0].value indexes far_
    uint32_t arity;
    OpId op;
    AttrId attr;
    uint32_t cls;   // the class the node created; find() it
    uint32_t next;  // next node of the same class (intrusive list)
    uint32_t flags;
  };
  struct ClassRec {
    uint32_t head = kNil, tail = kNil;  // every node ever merged in (dead ones are skipped)
    uint32_t phead = kNil, ptail = kNil, pcount = 0;  // parent links
    uint32_t index = 0, size = 0;  // the class's live nodes in class_nodes_ (when clean)
  };
  struct IndexItem {  // sort key of a live node while building the index
    uint32_t op, attr, child0, id;
  };
  struct ParentLink {
    uint32_t node;
    uint32_t next;
  };
  // Chunked storage for children: chunks never move, so ENode views stay valid.
  class ChildArena {
   public:
    ClassId* alloc(size_t n);
    size_t memoryBytes() const { return bytes_ + chunks_.capacity() * sizeof(void*); }

   private:
    std::vector<std::unique_ptr<ClassId[]>> chunks_;
    size_t used_ = 0, cap_ = 0, next_cap_ = 256, bytes_ = 0;
  };
  class MutationScope;

  void checkUsable() const {
    if (poisoned_) [[unlikely]]
      throwPoisoned();
  }
  void checkClass(ClassId c, const char* what) const {
    if (c.value >= uf_.size()) [[unlikely]]
      throwBadClass(c, what);
  }
  void checkClean(const char* what) const {
    if (!clean()) [[unlikely]]
      throwNotClean(what);
  }
  [[noreturn]] void throwPoisoned() const;
  [[noreturn]] void throwBadClass(ClassId c, const char* what) const;
  [[noreturn]] void throwNotClean(const char* what) const;
  // Unchecked accessors for a clean e-graph (the matcher's inner loop).
  std::span<const NodeId> classNodesUnchecked(uint32_t root) const {
    const ClassRec& r = classes_[root];
    return {class_nodes_.data() + r.index, r.size};
  }
  const NodeRec& record(uint32_t n) const { return nodes_[n]; }
  const ClassId* kidsOf(const NodeRec& r) const {
    return r.arity <= 2 ? r.small : far_[r.small[0].value];
  }
  ClassId* kidsOf(NodeRec& r) { return r.arity <= 2 ? r.small : far_[r.small[0].value]; }
  uint32_t findRoot(uint32_t c) const;
  static uint32_t hashNode(OpId op, AttrId attr, const ClassId* kids, size_t n);
  uint32_t hashOf(uint32_t n) const;
  uint32_t findInMemo(uint32_t hash, OpId op, AttrId attr, const ClassId* kids, size_t n) const;
  ClassId insertNode(OpId op, AttrId attr, uint32_t hash);
  void addParentLink(uint32_t cls, uint32_t node);
  void collectParents(uint32_t cls, std::vector<uint32_t>& out);
  bool uniteRoots(uint32_t a, uint32_t b);
  void processPending();
  void repair(uint32_t n);
  void refresh(uint32_t n);
  void buildIndex();
  void sortClassItems(uint32_t begin, uint32_t count);
  ENode view(uint32_t n) const {
    const NodeRec& r = nodes_[n];
    return ENode(r.op, r.attr, std::span<const ClassId>(kidsOf(r), r.arity));
  }

  std::shared_ptr<Language> lang_;
  std::vector<std::unique_ptr<Analysis>> analyses_;

  detail::StableVector<NodeRec> nodes_;  // stable: ENode views point into records
  ChildArena arena_;
  std::vector<ClassId*> far_;         // child lists of nodes with more than two children
  mutable std::vector<uint32_t> uf_;  // union-find parent per class id (path halving in find)
  std::vector<ClassRec> classes_;     // per class id; meaningful for canonical ids
  std::vector<ParentLink> plinks_;
  detail::IdTable memo_;  // hash-cons: live nodes keyed by their content

  std::vector<uint32_t> pending_;           // nodes to re-canonicalise
  std::vector<uint32_t> analysis_pending_;  // nodes whose make() must be merged again
  std::vector<ClassId> scratch_;            // add(): canonical children
  mutable std::vector<ClassId> lookup_scratch_;

  // The index built by rebuild().
  bool index_dirty_ = false;
  std::vector<ClassId> class_list_;
  std::vector<NodeId> class_nodes_;
  std::vector<uint32_t> op_begin_;
  std::vector<NodeId> op_nodes_;
  std::vector<ClassId> op_classes_;
  std::vector<IndexItem> index_items_;  // scratch kept between rebuilds (no page faults)
  std::vector<uint32_t> index_cursor_;

  size_t class_count_ = 0;
  uint64_t unions_ = 0;
  uint64_t version_ = 0;
  uint64_t index_generation_ = 0;
  bool poisoned_ = false;
};

// ---------------------------------------------------------------------------------------------
// Template implementations.

template <typename D>
const D& TypedAnalysis<D>::data(ClassId c) const {
  if (egraph() == nullptr) throw EGraphError("TypedAnalysis::data: analysis is not attached");
  return data_[egraph()->find(c).value];
}

template <typename D>
void TypedAnalysis<D>::onMake(const EGraph& g, ClassId c, const ENode& n) {
  // Classes are created in id order and each gets exactly one onMake().
  if (data_.size() != c.value) throw EGraphError("TypedAnalysis: classes out of order");
  data_.push_back(make(g, n));
}

template <typename Fn>
void EGraph::forEachNode(ClassId c, Fn&& fn) const {
  uint32_t root = find(c).value;
  if (clean()) {
    for (NodeId n : classNodesUnchecked(root))
      fn(n);
    return;
  }
  for (uint32_t n = classes_[root].head; n != kNil; n = nodes_[n].next)
    if (!(nodes_[n].flags & kDead)) fn(NodeId(n));
}

template <typename Fn>
void EGraph::forEachParent(ClassId c, Fn&& fn) const {
  uint32_t root = find(c).value;
  for (uint32_t l = classes_[root].phead; l != kNil; l = plinks_[l].next) {
    uint32_t n = plinks_[l].node;
    if (!(nodes_[n].flags & kDead)) fn(NodeId(n));
  }
}

}  // namespace tacit::egraph
