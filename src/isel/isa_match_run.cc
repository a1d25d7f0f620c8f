// The matcher's run (isa_match.h): every pattern at every class of its root type, on the clean
// e-graph, then the construction of what matched — incrementally: a (pattern, class) pair whose
// neighbourhood within the pattern's height is unchanged since the previous run replays that
// run's failures and accepted states instead of being matched again.
#include "isel/isa_match.h"
#include "isel/isa_match_state.h"

#include <algorithm>
#include <stdexcept>

#include "isel/view_index.h"

namespace tacit::isel {

using taidl::SymOp;

// The height of pattern p's skeleton: a match of it at class x reads the e-nodes of classes at
// most this many e-node children below x (leaves are matched by type and class only; the input
// chains below them are constructed, not matched).
int32_t IsaMatcher::patternHeight(const UnitPattern& p) const {
  int32_t height = 0;
  std::vector<std::pair<int32_t, int32_t>> stack{{p.skeleton_root, 0}};
  while (!stack.empty()) {
    auto [node, depth] = stack.back();
    stack.pop_back();
    height = std::max(height, depth);
    if (isLeaf(p, node)) continue;
    for (int32_t child : p.nodes[static_cast<size_t>(node)].children)
      stack.emplace_back(child, depth + 1);
  }
  return height;
}

// Per class id: the fewest e-node children between the class and a class whose e-nodes
// (operator, attribute, canonical children) differ from the previous run's, or that is new (0: it
// changed itself); kUnchanged beyond every pattern's height. Remembers the e-nodes for the next
// run.
std::vector<int32_t> IsaMatcher::changedNeighbourhoods() {
  const egraph::EGraph& g = b_.egraph();
  if (heights_.empty()) {
    for (const UnitPattern& p : units_.patterns)
      heights_.push_back(p.pure_movement ? 0 : patternHeight(p));
  }
  int32_t height = 0;
  for (int32_t h : heights_)
    height = std::max(height, h);
  size_t ids = 0;
  for (ClassId c : g.classes())
    ids = std::max<size_t>(ids, c.value + 1);
  std::vector<int32_t> distance(ids, kUnchanged);
  std::vector<uint32_t> words, begin(ids, 0), end(ids, 0);
  std::vector<ClassId> frontier;
  for (ClassId c : g.classes()) {
    begin[c.value] = static_cast<uint32_t>(words.size());
    for (NodeId n : g.nodes(c)) {
      egraph::ENode e = g.node(n);
      words.push_back(e.op().value);
      words.push_back(e.attr().value);
      words.push_back(static_cast<uint32_t>(e.arity()));
      for (ClassId k : e.children())
        words.push_back(k.value);
    }
    end[c.value] = static_cast<uint32_t>(words.size());
    bool same = c.value < words_begin_.size() &&
                words_end_[c.value] - words_begin_[c.value] == end[c.value] - begin[c.value] &&
                std::equal(words.begin() + begin[c.value], words.begin() + end[c.value],
                           node_words_.begin() + words_begin_[c.value]);
    if (!same) {
      distance[c.value] = 0;
      frontier.push_back(c);
    }
  }
  node_words_ = std::move(words);
  words_begin_ = std::move(begin);
  words_end_ = std::move(end);
  // Breadth first up the parents, to the tallest pattern's height.
  std::vector<ClassId> next;
  for (int32_t level = 1; level <= height && !frontier.empty(); ++level) {
    next.clear();
    for (ClassId c : frontier) {
      g.forEachParent(c, [&](NodeId n) {
        ClassId parent = g.classOf(n);
        if (parent.value < distance.size() && distance[parent.value] == kUnchanged) {
          distance[parent.value] = level;
          next.push_back(parent);
        }
      });
    }
    std::swap(frontier, next);
  }
  return distance;
}

void IsaMatcher::uniteConstructed(ClassId node, ClassId result) {
  egraph::EGraph& g = b_.egraph();
  ClassId a = g.find(node), r = g.find(result);
  if (!g.unite(a, r)) return;
  ClassId loser = g.find(a) == a ? r : a;
  if (loser.value < first_new_class_) merged_old_ = true;
}

void IsaMatcher::replayFailure(const MatchFailure& f) {
  uint64_t key = (static_cast<uint64_t>(static_cast<uint32_t>(f.pattern)) << 32) | f.eclass.value;
  ++failure_counts_[key];
  failures_.push_back(f);
}

size_t IsaMatcher::search(const egraph::EGraph& g) {
  if (&g != &b_.egraph()) throw std::logic_error("IsaMatcher::search: not the builder's e-graph");
  if (!applied_) {
    // The last search was not applied (a runner stopped at a limit in between): its matches were
    // never constructed and its records index construction failures never recorded, so nothing
    // of it may be replayed.
    records_.clear();
    pattern_records_.clear();
    strided_.clear();
  }
  applied_ = false;
  previous_strided_ = std::move(strided_);
  strided_.clear();
  previous_strided_index_.clear();
  for (size_t i = 0; i < previous_strided_.size(); ++i)
    previous_strided_index_.emplace(previous_strided_[i].key, static_cast<uint32_t>(i));
  previous_failures_ = std::move(failures_);
  const std::vector<MatchFailure>& previous_failures = previous_failures_;
  std::vector<PairRecord> previous = std::move(records_);
  std::vector<uint32_t> previous_begin = std::move(pattern_records_);
  failures_.clear();
  failure_counts_.clear();
  accepted_.clear();
  records_.clear();
  pattern_records_.clear();
  own_views_.reset();
  views_ = &refreshedOrOwn(shared_views_, own_views_, g, b_);
  std::vector<ClassId> classes(g.classes().begin(), g.classes().end());
  const std::vector<int32_t> changed_within = changedNeighbourhoods();
  // Match everything on the clean e-graph first, then construct (construction adds nodes).
  for (size_t pi = 0; pi < units_.patterns.size(); ++pi) {
    const UnitPattern& p = units_.patterns[pi];
    const SymOp& top = p.sym->ops[static_cast<size_t>(
        p.nodes[static_cast<size_t>(p.pure_movement ? p.root : p.skeleton_root)].op)];
    pattern_records_.push_back(static_cast<uint32_t>(records_.size()));
    // The pattern's previous records, walked in step with the classes.
    const bool had = pi + 1 < previous_begin.size();
    uint32_t old = had ? previous_begin[pi] : 0;
    const uint32_t old_end = had ? previous_begin[pi + 1] : 0;
    for (ClassId c : classes) {
      const hlo::Shape& shape = b_.shape(c);
      if (shape.elementType() != top.type.dtype ||
          shape.rank() != static_cast<int64_t>(top.type.dims.size()))
        continue;
      while (old < old_end && previous[old].eclass.value < c.value)
        ++old;
      const uint32_t index = static_cast<uint32_t>(records_.size());
      PairRecord& record = records_.emplace_back();
      record.eclass = c;
      // A movement pattern matched from the output side reads only the class's type; any other
      // pattern the e-nodes within its height.
      const bool unchanged = (p.pure_movement || changed_within[c.value] > heights_[pi]) &&
                             old < old_end && previous[old].eclass == c;
      if (unchanged) {
        // Unchanged since the previous run: the same failures and matches.
        PairRecord& before = previous[old];
        record.match_begin = static_cast<uint32_t>(failures_.size());
        for (uint32_t i = before.match_begin; i < before.match_end; ++i)
          replayFailure(previous_failures[i]);
        record.match_end = static_cast<uint32_t>(failures_.size());
        for (State& s : before.accepted)
          accepted_.push_back({static_cast<int32_t>(pi), std::move(s), index, true});
        if (!before.accepted.empty()) {
          record.construct_begin = before.construct_begin;  // in previous_failures
          record.construct_end = before.construct_end;
        }
      } else {
        record.match_begin = static_cast<uint32_t>(failures_.size());
        size_t first = accepted_.size();
        // Every class of the right type is a candidate: the root may match by an identity skip.
        if (p.pure_movement) {
          tryPureMovement(static_cast<int32_t>(pi), c);
        } else {
          tryPattern(static_cast<int32_t>(pi), c);
        }
        record.match_end = static_cast<uint32_t>(failures_.size());
        for (size_t i = first; i < accepted_.size(); ++i)
          accepted_[i].record = index;
      }
      // Strided loads depend on the class's views, which depend on the order of the queries
      // (view_index.h): matched every run.
      if (p.pure_movement) tryStridedLoad(static_cast<int32_t>(pi), c);
    }
  }
  pattern_records_.push_back(static_cast<uint32_t>(records_.size()));
  return accepted_.size();
}

size_t IsaMatcher::apply(egraph::EGraph& g) {
  if (&g != &b_.egraph()) throw std::logic_error("IsaMatcher::apply: not the builder's e-graph");
  const std::vector<MatchFailure>& previous_failures = previous_failures_;
  size_t before = g.nodeCount();
  size_t unions = 0;
  // A construction that merges a class that existed before construction into another class
  // changes the canonical children that later constructions look up: from then on replayed states
  // are constructed again (what the full run would do with the states it matched again).
  first_new_class_ = static_cast<uint32_t>(g.nodeIdCount());
  merged_old_ = false;
  for (size_t i = 0; i < accepted_.size(); ++i) {
    Accepted& a = accepted_[i];
    const UnitPattern& p = units_.patterns[static_cast<size_t>(a.pattern)];
    const bool first_of_pair =
        a.record != Accepted::kNoRecord && (i == 0 || accepted_[i - 1].record != a.record);
    PairRecord* record = a.record == Accepted::kNoRecord ? nullptr : &records_[a.record];
    if (first_of_pair) {
      // The pair's construction failures: replayed, or those this run records.
      if (a.replayed && !merged_old_) {
        uint32_t begin = static_cast<uint32_t>(failures_.size());
        for (uint32_t f = record->construct_begin; f < record->construct_end; ++f)
          replayFailure(previous_failures[f]);
        record->construct_begin = begin;
        record->construct_end = static_cast<uint32_t>(failures_.size());
      } else {
        record->construct_begin = record->construct_end = static_cast<uint32_t>(failures_.size());
      }
    }
    if (!a.replayed || merged_old_) {
      Built<ClassId> built =
          p.pure_movement ? constructPureMovement(p, a.state) : construct(p, a.state);
      if (!built.value) {
        fail(a.pattern,
             a.state.cls[static_cast<size_t>(p.pure_movement ? p.root : p.skeleton_root)],
             built.error);
      }
      if (record) record->construct_end = static_cast<uint32_t>(failures_.size());
      if (!built.value && a.strided != Accepted::kNoRecord) strided_[a.strided].constructed = false;
    }
    if (record) {
      record->accepted.push_back(std::move(a.state));
    } else if (a.strided != Accepted::kNoRecord) {
      strided_[a.strided].accepted.push_back(std::move(a.state));
    }
  }
  accepted_.clear();
  previous_failures_.clear();
  previous_strided_.clear();
  previous_strided_index_.clear();
  views_ = nullptr;
  own_views_.reset();
  applied_ = true;
  unions += g.nodeCount() - before;
  return unions;
}

}  // namespace tacit::isel
