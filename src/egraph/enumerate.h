// Bounded, context-aware enumeration of the terms of an e-class, smallest first.
//
// A term here is a tree of e-nodes: each node is an e-node of the class it stands for, and each
// child is a term of the corresponding child class. Every node is used in a *context* (an
// integer the client defines; the instruction selector uses the buffer a value must live in):
// the root in EnumOptions::root_context, and child i of node n used in context c in
// child_context(n, c, i). allowed(n, c) says whether node n may be used in context c.
//
// Path rule: a (class, context) pair already on the path from the root is not entered again
// (RevisitPolicy::kForbid, the default). Such revisiting terms are still valid programs (a
// value stored and reloaded: a spill), so kAfterSameSize yields them too, each size's revisiting
// terms after all of that size's revisit-free terms; kAllow ignores the rule (order by size only).
//
// Order: by size (number of nodes), then, for kAfterSameSize, revisit-free before revisiting;
// within that deterministic: by e-node (in EGraph::nodes() order), then by the sizes given to the
// children (lexicographically), then by the children's own order. Every term is produced exactly
// once.
//
// Lazy and bounded: next() produces one term at a time, holds O(max_size) state besides a
// per-(class, context) table built once (the feasible sizes of each pair), and stops when
// max_steps units of work are spent (budgetExhausted()). The e-graph must be clean() and must not
// change while enumerating (checked: EGraphError).
//
//   Enumerator en(g, root, {.max_size = 12, .root_context = kHbm,
//                           .revisit = RevisitPolicy::kAfterSameSize,
//                           .allowed = ..., .child_context = ...});
//   Term t;
//   while (en.next(t)) { if (tryCandidate(t)) break; }
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <unordered_map>
#include <vector>

#include "egraph/egraph.h"
#include "egraph/term.h"

namespace tacit::egraph {

using Context = uint32_t;

enum class RevisitPolicy { kForbid, kAfterSameSize, kAllow };

struct EnumOptions {
  size_t max_size = 16;  // largest term, in nodes (1..kMaxEnumSize)
  Context root_context = 0;
  RevisitPolicy revisit = RevisitPolicy::kForbid;
  // Default: every node in every context.
  std::function<bool(const EGraph& g, NodeId n, Context ctx)> allowed;
  // Default: children inherit the parent's context.
  std::function<Context(const EGraph& g, NodeId n, Context ctx, size_t child)> child_context;
  size_t max_steps = SIZE_MAX;         // work budget
  size_t max_pairs = size_t{1} << 22;  // bound on reachable (class, context) pairs (EGraphError)
};

inline constexpr size_t kMaxEnumSize = 1024;

class Enumerator {
 public:
  Enumerator(const EGraph& g, ClassId root, EnumOptions opts);

  // Writes the next term into `out` (a tree, children before parents, TermNode::context set) and
  // returns true; false when all terms up to max_size were produced or the budget is spent.
  bool next(Term& out);

  bool budgetExhausted() const { return aborted_; }
  size_t steps() const { return steps_; }
  // Whether the last term produced revisits a (class, context) pair on one of its paths.
  bool lastHasRevisit() const { return last_revisit_; }
  // Distinct (class, context) pairs reachable from the root.
  size_t pairCount() const { return pairs_.size(); }

 private:
  struct Pair {
    uint32_t cls;
    Context ctx;
    uint32_t alt_begin = 0, alt_count = 0;
  };
  struct Alt {
    uint32_t node;
    uint32_t arity;
    uint32_t child_begin;   // into alt_children_ (pair indices)
    uint32_t suffix_begin;  // into suffix_: arity + 1 bitsets
  };
  struct Frame {
    uint32_t pair;
    uint32_t size;
    uint32_t alt;
    uint32_t parent;
    bool revisit;
  };

  void discover(ClassId root);
  void computeFeasible();
  bool test(const uint64_t* set, size_t bit) const { return (set[bit >> 6] >> (bit & 63)) & 1; }
  const uint64_t* feasibleSet(uint32_t pair) const { return &feasible_[pair * words_]; }
  const uint64_t* suffixSet(const Alt& a, uint32_t i) const {
    return &suffix_[(a.suffix_begin + i) * words_];
  }
  void sumset(const uint64_t* a, const uint64_t* b, uint64_t* out) const;
  void shiftOr(const uint64_t* b, size_t x, uint64_t* out) const;

  bool step();
  bool allowRevisit() const;
  bool onPath(uint32_t pair, uint32_t parent) const;
  bool firstTerm(uint32_t pair, uint32_t size, uint32_t parent);
  bool tryAlt(uint32_t f);
  bool seqFrom(uint32_t f, const Alt& alt, uint32_t i, uint32_t remaining, uint32_t min_size);
  bool nextSeq(uint32_t f, const Alt& alt, uint32_t i, uint32_t remaining, uint32_t pos);
  bool nextTerm(uint32_t f);
  uint32_t emit(uint32_t f, Term& out) const;

  const EGraph& g_;
  EnumOptions opts_;
  uint64_t version_;
  size_t words_ = 0;  // bitset words per size set (sizes 0..max_size)

  std::vector<Pair> pairs_;
  std::unordered_map<uint64_t, uint32_t> pair_index_;
  std::vector<Alt> alts_;
  std::vector<uint32_t> alt_children_;
  std::vector<uint64_t> feasible_;  // per pair: sizes a term may have (ignoring the path rule)
  std::vector<uint64_t> suffix_;    // per alt and child position i: sizes children i.. can sum to

  std::vector<Frame> frames_;  // the current term, preorder
  uint32_t size_ = 1;
  int pass_ = 0;  // kAfterSameSize: 0 = revisit-free, 1 = revisiting
  bool started_ = false;
  bool done_ = false;
  bool aborted_ = false;
  bool last_revisit_ = false;
  size_t steps_ = 0;
};

}  // namespace tacit::egraph
