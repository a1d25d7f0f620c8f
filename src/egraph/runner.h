// The equality-saturation runner: iterations of (search every rule, apply every match, rebuild),
// under limits, with per-rule scheduling and a hook after each iteration.
//
//   Runner runner(g, Limits{.max_nodes = 5000, .max_time = std::chrono::seconds(10)});
//   runner.setScheduler(std::make_unique<BackoffScheduler>());
//   runner.setHook([&](EGraph& g, const IterationReport& it) {
//     extractCandidates(g);          // the selector extracts between iterations
//     return foundGoodEnough;        // true = stop (StopReason::kHookStop)
//   });
//   RunReport r = runner.run(rules);  // r.stop says why it stopped
//
// Limits and how precisely they hold:
// * max_nodes / max_classes: checked before each match is applied; when the count (which before
//   a rebuild includes duplicates that the rebuild will merge) is over the limit, the runner first
//   restores congruence (EGraph::propagate()) and stops only if the exact count is still over.
//   So a run stops at most one application (plus what modify() hooks add) past the limit. A run
//   that starts above a limit does no iteration.
// * max_time: measured from the start of run(); checked every 1024 candidate e-nodes while
//   searching and every 64 matches while applying. The e-graph must be rebuilt after the last
//   application, so the runner keeps that rebuild short (pending congruence work is processed in
//   batches while applying) and stops applying when the rebuild it predicts (from the previous
//   rebuilds' speed) would end past the deadline. Time spent in the hook counts.
// * max_iterations: the number of iterations run.
// * max_matches: matches held at once, shared equally by the rules searched; it bounds the memory
//   of an iteration (a pattern can have far more matches than the e-graph has nodes). A rule whose
//   search reaches its share is finished in chunks after the other rules are applied: rebuild,
//   search on from the root e-node where it stopped, apply, and so on (RuleStats::chunks). Every
//   match is still seen in the iteration, so saturation detection is exact. 0 means 8 * max_nodes +
//   100000, with at least 4096 per rule.
// A run stopped by a limit leaves a clean (rebuilt), sound e-graph that simply has not seen every
// match of the last iteration.
#pragma once

#include <chrono>
#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "egraph/egraph.h"
#include "egraph/id_table.h"
#include "egraph/rewrite.h"

namespace tacit::egraph {

struct Limits {
  size_t max_nodes = 10'000;
  size_t max_classes = SIZE_MAX;
  size_t max_iterations = 30;
  std::chrono::nanoseconds max_time = std::chrono::seconds(5);
  size_t max_matches = 0;  // held at once; 0: 8 * max_nodes + 100000, >= 4096 per rule
};

enum class StopReason {
  kSaturated,       // an iteration changed nothing and the scheduler agreed to stop
  kIterationLimit,  // max_iterations iterations ran
  kNodeLimit,       // more than max_nodes e-nodes
  kClassLimit,      // more than max_classes e-classes
  kTimeLimit,       // max_time elapsed
  kHookStop,        // the iteration hook asked to stop
};
std::string_view stopReasonName(StopReason r);

// One rule in one iteration.
struct RuleStats {
  bool searched = false;  // false: the scheduler skipped (banned) the rule this iteration
  size_t matches = 0;     // matches found (the search stops at the scheduler's match limit)
  size_t chunks = 0;  // searches this iteration (more than 1: over its Limits::max_matches share)
  bool discarded = false;  // the scheduler rejected the matches (over its limit) and banned it
  bool cut = false;    // a root e-node had more matches than the search's hard cap (SearchBudget):
                       // some were skipped, so the iteration cannot count as saturated
  size_t applied = 0;  // applications that changed the e-graph
  double search_seconds = 0, apply_seconds = 0;
};

struct IterationReport {
  size_t index = 0;
  size_t nodes = 0;    // live e-nodes after the rebuild
  size_t classes = 0;  // e-classes after the rebuild
  size_t nodes_added = 0;
  size_t applied = 0;            // applications that changed the e-graph, all rules
  size_t rebuild_unions = 0;     // congruences found by the rebuild
  size_t memory_bytes = 0;       // EGraph::memoryBytes() after the rebuild
  size_t match_bytes = 0;        // the runner's match storage (all rules) after the iteration
  std::vector<RuleStats> rules;  // indexed like the rule list
  double search_seconds = 0, apply_seconds = 0, rebuild_seconds = 0;
  std::optional<StopReason> stop;  // set on the iteration after which the runner stops
};

struct RunReport {
  StopReason stop = StopReason::kSaturated;
  std::vector<IterationReport> iterations;
  size_t initial_nodes = 0;
  size_t nodes = 0, classes = 0;
  size_t peak_memory_bytes = 0;  // max of EGraph::memoryBytes() over the run
  size_t peak_match_bytes = 0;   // max of the runner's match storage over the run
  double seconds = 0;            // wall time of run(), hooks included
  double search_seconds = 0, apply_seconds = 0, rebuild_seconds = 0, hook_seconds = 0;
  // "saturated after 7 iterations: 1234 e-nodes, 567 e-classes, 0.012 s".
  std::string summary() const;
};

// Decides per iteration which rules run and how many matches they may produce.
class Scheduler {
 public:
  virtual ~Scheduler() = default;
  // Called at the start of every run with the rule list.
  virtual void reset(std::span<const Rewrite> rules) = 0;
  virtual bool canSearch(size_t iteration, size_t rule) = 0;
  // The search stops after this many matches.
  virtual size_t matchLimit(size_t iteration, size_t rule) = 0;
  // Called with the number of matches found; false discards them (the rule applies nothing).
  virtual bool accept(size_t iteration, size_t rule, size_t matches) = 0;
  // Called when an iteration changed nothing: true lets the run end as saturated. A scheduler
  // that is holding rules back must release them and return false.
  virtual bool canStop(size_t iteration) = 0;
};

// Every rule, every iteration, every match.
class SimpleScheduler final : public Scheduler {
 public:
  void reset(std::span<const Rewrite>) override {}
  bool canSearch(size_t, size_t) override { return true; }
  size_t matchLimit(size_t, size_t) override { return SIZE_MAX; }
  bool accept(size_t, size_t, size_t) override { return true; }
  bool canStop(size_t) override { return true; }
};

// egg's exponential backoff: a rule whose search finds more than its threshold
// (match_limit << times_banned) matches has them discarded and is banned for
// ban_length << times_banned iterations. When nothing else changes, the remaining bans are
// shortened so that the earliest one ends now (the run is only saturated with no rule banned).
// Defaults as in egg: match limit 1000, ban length 5.
class BackoffScheduler final : public Scheduler {
 public:
  explicit BackoffScheduler(size_t match_limit = 1000, size_t ban_length = 5)
      : match_limit_(match_limit), ban_length_(ban_length) {}
  BackoffScheduler& doNotBan(std::string rule_name);
  BackoffScheduler& ruleLimits(std::string rule_name, size_t match_limit, size_t ban_length);

  size_t timesBanned(size_t rule) const { return state_.at(rule).times_banned; }
  size_t bannedUntil(size_t rule) const { return state_.at(rule).banned_until; }

  void reset(std::span<const Rewrite> rules) override;
  bool canSearch(size_t iteration, size_t rule) override;
  size_t matchLimit(size_t iteration, size_t rule) override;
  bool accept(size_t iteration, size_t rule, size_t matches) override;
  bool canStop(size_t iteration) override;

 private:
  struct RuleState {
    size_t match_limit = 0, ban_length = 0;
    size_t times_banned = 0, banned_until = 0;
    bool never_ban = false;
  };
  size_t threshold(const RuleState& s) const;
  struct Override {
    std::string name;
    bool never_ban = false;
    size_t match_limit = 0, ban_length = 0;
  };
  size_t match_limit_, ban_length_;
  std::vector<Override> overrides_;
  std::vector<RuleState> state_;
};

// The matches earlier runs applied, for a driver that runs the rules one iteration at a time with
// passes of its own in between (Runner::setApplied, the same rule list every run). Applying a
// match again changes nothing when its applier reads only the match (ApplierReads::kMatch), or
// also the e-nodes of its substitution's classes (kSubstNodes) and those are as they were at its
// last application: it builds the same nodes, which exist, and makes the same unions, which hold.
// Such matches are skipped: egg's "do not re-apply old matches", exact because the applier says
// what it reads, and compared word for word (no fingerprint that could collide). Only while the
// hash-cons is canonical (EGraph::hashConsCanonical): after a union, applying an old match may add
// a duplicate of a node it built before (found again only after repair), which takes node and
// class ids; skipping it then would number the rest of the e-graph differently.
class AppliedMatches {
 public:
  // Whether applying the match of rules[r] may change the e-graph; if so, records it as applied
  // (call it just before applying).
  bool mayChange(std::span<const Rewrite> rules, size_t r, const EGraph& g, ClassId matched,
                 const Subst& s);
  size_t skipped() const { return skipped_; }

 private:
  struct PerRule {
    const Rewrite* rule = nullptr;
    std::vector<uint32_t> keys;  // the applied matches: the matched class, then the substitution
    uint32_t stride = 0;         // words per key
    std::vector<uint32_t> read_begin, read_end;  // per key: its reads in read_words
    std::vector<uint32_t> read_words;
    detail::IdTable index;  // key number by hash
  };
  void key(ClassId matched, const Subst& s);
  void reads(const EGraph& g, const Subst& s);
  // Stores the reads of key k (over its old ones when they fit).
  void storeReads(PerRule& pr, uint32_t k);

  std::vector<PerRule> rules_;
  std::vector<uint32_t> key_, reads_;  // scratch
  size_t skipped_ = 0;
};

// A rule whose search and application are the client's, driven by the runner (egg's Searcher and
// Applier traits): for matching that patterns cannot express — the instruction selector's unit
// patterns, which solve α from the matched types and skip identity operators. The runner keeps
// the iteration: it calls search() on the clean e-graph after the pattern rules' searches, apply()
// after their applications (once, as one application: the size limits and the time limit's
// predicted rebuild are checked before it), then rebuilds; its RuleStats follow the pattern
// rules' in IterationReport::rules. Client rules are not scheduled: they are searched every
// iteration.
class ClientRule {
 public:
  virtual ~ClientRule() = default;
  virtual std::string_view name() const = 0;
  // Finds the rule's matches in the clean e-graph `g` and keeps them; returns how many.
  virtual size_t search(const EGraph& g) = 0;
  // Applies the matches the last search() found; returns the number of changes it made.
  virtual size_t apply(EGraph& g) = 0;
};

// Called after every iteration (including the last: its report's `stop` is set). Return true to
// stop the run.
using IterationHook = std::function<bool(EGraph& g, const IterationReport& it)>;

class Runner {
 public:
  explicit Runner(EGraph& g, Limits limits = {});
  Runner& setLimits(Limits limits);
  Runner& setScheduler(std::unique_ptr<Scheduler> s);  // default: BackoffScheduler
  Runner& setHook(IterationHook hook);
  // Skips matches that cannot change anything (AppliedMatches); `applied` outlives the runs.
  Runner& setApplied(AppliedMatches* applied);
  const Limits& limits() const { return limits_; }
  Scheduler& scheduler() { return *scheduler_; }

  // Saturates g with the rules. May be called again (e.g. with other rules) on the same e-graph.
  RunReport run(std::span<const Rewrite> rules);
  // The same with client rules (ClientRule), each iteration searched after `rules` and applied
  // after them; they must outlive the call.
  RunReport run(std::span<const Rewrite> rules, std::span<ClientRule* const> clients);

 private:
  using Clock = std::chrono::steady_clock;
  std::optional<StopReason> limitBefore(size_t iteration, Clock::time_point deadline) const;
  IterationReport iterate(size_t iteration, std::span<const Rewrite> rules,
                          std::span<ClientRule* const> clients, Clock::time_point deadline);
  std::optional<StopReason> searchClients(std::span<ClientRule* const> clients, size_t first,
                                          Clock::time_point deadline, IterationReport& it);
  std::optional<StopReason> applyClients(std::span<ClientRule* const> clients, size_t first,
                                         Clock::time_point deadline, IterationReport& it);
  std::optional<StopReason> searchAll(size_t iteration, std::span<const Rewrite> rules,
                                      Clock::time_point deadline, IterationReport& it);
  std::optional<StopReason> applyAll(std::span<const Rewrite> rules, Clock::time_point deadline,
                                     IterationReport& it);
  std::optional<StopReason> applyRule(std::span<const Rewrite> rules, size_t r,
                                      Clock::time_point deadline, RuleStats& stats);
  std::optional<StopReason> searchRule(size_t iteration, size_t r, const Rewrite& rule,
                                       Clock::time_point deadline, IterationReport& it);
  std::optional<StopReason> finishChunkedRules(size_t iteration, std::span<const Rewrite> rules,
                                               Clock::time_point deadline, IterationReport& it);
  std::optional<StopReason> sizeLimit();
  std::optional<StopReason> limitAfter(size_t iteration, bool changed, Clock::time_point deadline);

  double rebuildAndMeasure();
  void propagateAndMeasure();
  Clock::duration predictedRebuild() const;

  EGraph& g_;
  Limits limits_;
  std::unique_ptr<Scheduler> scheduler_;
  IterationHook hook_;
  AppliedMatches* applied_ = nullptr;
  std::vector<Matches> matches_;
  std::vector<std::optional<SearchResume>> resume_;  // per rule: where a chunked search goes on
  size_t share_ = 0;                                 // matches per rule and chunk
  uint32_t apply_tick_ = 0;
  // Measured costs (the largest seen) that predict the rebuild after the last application.
  double index_seconds_per_node_ = 0;
  double propagate_seconds_per_item_ = 0;
};

}  // namespace tacit::egraph
