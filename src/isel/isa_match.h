// IR→ISA rules (docs/algorithm.md §3.3(b), §3.4): matching unit patterns in the e-graph and adding
// partially instantiated instructions.
//
// A match of a pattern's skeleton is accepted only if
//  1. operators match, and a value the semantics uses twice binds the same e-class both times;
//  2. α binds consistently: every templated dimension, attribute and constant is unified with the
//     concrete one (one unknown at a time, exactly), and afterwards every operator of the skeleton,
//     instantiated for that α with the oracle's own code (taidl/ops.h), equals the matched e-node —
//     type, every attribute, constant values bit for bit;
//  3. the unit's constraints over α alone hold (those involving β are phase 2's).
// Operators that are identities for some α (a pad by zeros, a full slice, an identity transpose or
// broadcast, a convert to the same type, a reshape to the same shape) may be skipped by the match;
// α must then make them identities. Commutative binary operators match in both operand orders.
//
// Then the applier constructs the inputs through the inverse of their movement chains, the result
// through the output chain, and unites pii(unit, α, output, buffer)(inputs...) with it.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "egraph/runner.h"
#include "isel/alpha_solver.h"
#include "isel/ir_builder.h"
#include "isel/kernel.h"
#include "isel/units.h"
#include "isel/view_index.h"

namespace tacit::isel {

// Why the closest matches of a unit failed, for "no instruction can compute X" diagnostics.
struct MatchFailure {
  int32_t pattern = -1;
  ClassId eclass;
  std::string reason;
};

// The unit patterns as one client rule of the e-graph runner (egraph::ClientRule): search() tries
// every pattern at every candidate class of the clean e-graph, apply() adds the piis it found (the
// selector drives it through an egraph::Runner each iteration).
class IsaMatcher final : public egraph::ClientRule {
 public:
  IsaMatcher(const taidl::Isa& isa, const UnitSet& units, IrBuilder& b);
  ~IsaMatcher() override;

  std::string_view name() const override { return "isa-match"; }
  // The view index the searches refresh and read (kept across iterations by the view pass);
  // nullptr: each search builds its own.
  void setViews(ViewIndex* views) { shared_views_ = views; }
  // Matches every pattern at every candidate class of `g` (the builder's e-graph, clean); returns
  // the number of matches held for apply().
  size_t search(const egraph::EGraph& g) override;
  // Constructs the held matches; returns the number of e-nodes added.
  size_t apply(egraph::EGraph& g) override;

  // Kernel results written block by block (region_write.cc): a result region (u8[N], the row-major
  // bytes of a class built by concatenations) whose blocks an instruction can each write into the
  // region with a read-modify-write (a pitched store: a dynamic-update-slice of the old region,
  // read in place) becomes an `overlay` of those writes. Returns the number of e-graph changes.
  // A result's logical value, when no write covers it and none of its concatenations splits into
  // writes, is also split into writer-sized blocks (region_write.cc).
  size_t writeRegions(const std::vector<KernelResult>& results);

  // Failures recorded by the last search and apply for patterns whose skeleton root operator
  // matched (bounded: the first few per class).
  const std::vector<MatchFailure>& failures() const { return failures_; }

 private:
  struct State;
  struct Accepted;
  // A write of one block of a region; without a writer, a block of a window result's region that
  // the kernel leaves as it was (kernel.h ResultWindow).
  struct RegionWrite {
    ClassId writer;
    OverlayPart part;
  };
  // What collectWrites knows of the result it works on.
  struct RegionOf {
    const KernelResult& result;
    int64_t bytes;
    bool plain_first = false;   // around a window: no block writers, plain stores of runs
    bool plain_stores = false;  // some unit writes HBM other than in place (plainStores())
  };
  bool collectWrites(ClassId c, const std::vector<int64_t>& starts, const hlo::Shape& whole,
                     int depth, bool may_split, const RegionOf& region,
                     std::vector<RegionWrite>& out);
  std::optional<RegionWrite> findWriter(int32_t pattern, ClassId c, const StridedView& block,
                                        int64_t region_bytes);
  std::optional<std::vector<int64_t>> writerBlock(const hlo::Shape& shape) const;
  bool plainStores() const;
  ClassId concatOfBlocks(ClassId c, const std::vector<int64_t>& box, size_t dim,
                         std::vector<int64_t> starts);
  std::optional<size_t> rewrittenInput(const UnitPattern& p) const;
  bool rootCannotMatch(const UnitPattern& p, ClassId c) const;
  bool tryPattern(int32_t pattern, ClassId x);
  bool tryPureMovement(int32_t pattern, ClassId t);
  bool tryStridedLoad(int32_t pattern, ClassId t);
  bool tryOpenMovement(int32_t pattern, ClassId t, const State& s,
                       const std::vector<int32_t>& chain);
  bool acceptViewLoad(int32_t pattern, const std::vector<int32_t>& chain, State& m,
                      const BaseView& bv, ClassId t);
  ClassId viewInput(const State& s);
  // The constructions: the class built, or why the chains at the solved α are ill-typed over the
  // matched classes (recorded as the match's failure).
  Built<ClassId> constructPureMovement(const UnitPattern& p, const State& s);
  void matchNode(const UnitPattern& p, int32_t node, ClassId c, State& s,
                 const std::function<void(State&)>& cont);
  void matchChildren(const UnitPattern& p, int32_t node, const std::vector<ClassId>& kids, size_t i,
                     State& s, const std::function<void(State&)>& cont);
  void matchIdentityOperand(const UnitPattern& p, int32_t node, ClassId c, State& s,
                            const std::function<void(State&)>& cont);
  static bool isLeaf(const UnitPattern& p, int32_t node);
  void matchOverwrite(const UnitPattern& p, int32_t node, ClassId c, State& s,
                      const std::function<void(State&)>& cont);
  bool unifyIdentityLinks(const UnitPattern& p, State& s);
  std::string verify(const UnitPattern& p, const State& s) const;
  std::string checkIdentity(
      const UnitPattern& p, int32_t node, const State& s, const taidl::EvalEnv& env,
      const std::function<hlo::HloComputation*(hlo::HloOpcode, hlo::PrimitiveType)>& reducer) const;
  Built<ClassId> construct(const UnitPattern& p, const State& s);
  Built<std::vector<ClassId>> constructInputs(const UnitPattern& p, State& s);
  Built<ClassId> invertChain(const UnitPattern& p, const std::vector<int32_t>& chain, ClassId top,
                             const State& s);
  void fail(int32_t pattern, ClassId c, std::string_view reason);

  // Incremental matching (isa_match_run.cc; a run is one search() and the apply() after it): a
  // (pattern, class) pair whose class has the same e-nodes within the patterns' height (every
  // class a match can read) as at the previous search is not matched again. Its failures and
  // accepted states are the previous run's; its construction is skipped (it would only find the
  // nodes it built before), unless a construction of this run merged two classes that existed
  // before it (then the stored states are constructed again). Not egraph::AppliedMatches: that
  // skips applications after a search; this skips the search (docs/isel.md, "Its cache").
  struct PairRecord {
    ClassId eclass;                           // the pair's class
    uint32_t match_begin = 0, match_end = 0;  // its matching failures, in the run's failures_
    uint32_t construct_begin = 0, construct_end = 0;  // its construction failures
    std::vector<State> accepted;
  };
  // Strided loads (tryStridedLoad) read a class's type and its views, not its e-nodes: a (pattern,
  // class) pair whose views equal the previous run's replays that run's failures and matches (and
  // skips their construction as above). The views are compared, not a neighbourhood: they depend
  // on the order of the view index's queries (view_index.h). A pair with a failed construction is
  // matched again.
  struct StridedRecord {
    uint64_t key = 0;  // pattern << 32 | class
    std::vector<BaseView> views;
    std::vector<MatchFailure> failures;
    std::vector<State> accepted;  // filled by apply(), as constructed
    bool constructed = true;      // every accepted state constructed without failure
  };
  // Replays the previous run's record of (pattern, t) if its views equal `views` (true), else
  // starts this run's record: finishStrided() ends it after the match.
  bool replayStrided(int32_t pattern, ClassId t, const std::vector<BaseView>& views);
  // The completions of an open movement's α (tryOpenMovement) for a pattern at a type: they
  // depend on nothing else, and enumerating them walks α ranges of up to 2^16 values.
  const std::vector<AlphaSolver>& openCompletions(int32_t pattern, const hlo::Shape& type,
                                                  const AlphaSolver& start);
  std::map<std::pair<int32_t, std::string>, std::vector<AlphaSolver>> open_completions_;
  void finishStrided(int32_t pattern, ClassId t, std::vector<BaseView> views, size_t failures_from,
                     size_t accepted_from);
  static constexpr int32_t kUnchanged = INT32_MAX;
  std::vector<int32_t> changedNeighbourhoods();
  int32_t patternHeight(const UnitPattern& p) const;
  void replayFailure(const MatchFailure& f);
  void uniteConstructed(ClassId node, ClassId result);

  const taidl::Isa& isa_;
  const UnitSet& units_;
  IrBuilder& b_;
  std::vector<MatchFailure> failures_;
  // The previous run's records, per pattern one per class of its root type, classes ascending:
  // search() walks them in step with the classes instead of looking every pair up in a hash map
  // (measured: docs/isel.md, "Status and measured results").
  std::vector<PairRecord> records_;
  std::vector<uint32_t> pattern_records_;  // per pattern: its first record; last, the end
  // Strided-load records: this run's, and the previous run's by (pattern << 32 | class).
  std::vector<StridedRecord> strided_, previous_strided_;
  std::unordered_map<uint64_t, uint32_t> previous_strided_index_;
  // Per class id: its e-nodes (op, attr, arity, children) at the previous run, as words.
  std::vector<uint32_t> node_words_, words_begin_, words_end_;
  std::vector<int32_t> heights_;  // per pattern: patternHeight() (movement patterns: 0)
  uint32_t first_new_class_ = 0;  // during apply(): classes below existed before it
  bool merged_old_ = false;
  // Failures recorded per (pattern, class), so that fail() stays O(1) on large e-graphs.
  std::unordered_map<uint64_t, uint32_t> failure_counts_;
  std::vector<Accepted> accepted_;               // the last search's matches, until apply()
  std::vector<MatchFailure> previous_failures_;  // the run before's, until apply()
  ViewIndex* shared_views_ = nullptr;
  std::optional<ViewIndex> own_views_;
  ViewIndex* views_ = nullptr;  // from search() to the end of apply()
  bool applied_ = true;         // the last search() was applied
};

}  // namespace tacit::isel
