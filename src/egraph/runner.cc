#include "egraph/runner.h"

#include <algorithm>
#include <cstdio>

namespace tacit::egraph {

namespace {

double secondsSince(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

// a << b without overflow (limits are "practically infinite" once they saturate).
size_t shiftSaturating(size_t a, size_t b) {
  if (a == 0) return 0;
  if (b >= 63 || a > (SIZE_MAX >> b)) return SIZE_MAX;
  return a << b;
}

}  // namespace

std::string_view stopReasonName(StopReason r) {
  switch (r) {
    case StopReason::kSaturated:
      return "saturated";
    case StopReason::kIterationLimit:
      return "iteration limit";
    case StopReason::kNodeLimit:
      return "node limit";
    case StopReason::kClassLimit:
      return "class limit";
    case StopReason::kTimeLimit:
      return "time limit";
    case StopReason::kHookStop:
      return "stopped by hook";
  }
  return "?";
}

std::string RunReport::summary() const {
  char buf[256];
  std::snprintf(buf, sizeof buf, "%s after %zu iterations: %zu e-nodes, %zu e-classes, %.3f s",
                std::string(stopReasonName(stop)).c_str(), iterations.size(), nodes, classes,
                seconds);
  return buf;
}

// ---------------------------------------------------------------------------------------------
// BackoffScheduler

BackoffScheduler& BackoffScheduler::doNotBan(std::string rule_name) {
  overrides_.push_back(Override{std::move(rule_name), true, 0, 0});
  return *this;
}

BackoffScheduler& BackoffScheduler::ruleLimits(std::string rule_name, size_t match_limit,
                                               size_t ban_length) {
  overrides_.push_back(Override{std::move(rule_name), false, match_limit, ban_length});
  return *this;
}

void BackoffScheduler::reset(std::span<const Rewrite> rules) {
  state_.assign(rules.size(), RuleState{match_limit_, ban_length_, 0, 0, false});
  for (const Override& o : overrides_) {
    for (size_t r = 0; r < rules.size(); ++r) {
      if (rules[r].name() != o.name) continue;
      if (o.never_ban) {
        state_[r].never_ban = true;
      } else {
        state_[r].match_limit = o.match_limit;
        state_[r].ban_length = o.ban_length;
      }
    }
  }
}

size_t BackoffScheduler::threshold(const RuleState& s) const {
  return shiftSaturating(s.match_limit, s.times_banned);
}

bool BackoffScheduler::canSearch(size_t iteration, size_t rule) {
  return iteration >= state_.at(rule).banned_until;
}

size_t BackoffScheduler::matchLimit(size_t, size_t rule) {
  const RuleState& s = state_.at(rule);
  if (s.never_ban) return SIZE_MAX;
  size_t t = threshold(s);
  return t == SIZE_MAX ? SIZE_MAX : t + 1;  // one more than allowed proves the excess
}

bool BackoffScheduler::accept(size_t iteration, size_t rule, size_t matches) {
  RuleState& s = state_.at(rule);
  if (s.never_ban || matches <= threshold(s)) return true;
  size_t length = shiftSaturating(s.ban_length, s.times_banned);
  ++s.times_banned;
  s.banned_until = length > SIZE_MAX - iteration ? SIZE_MAX : iteration + length;
  return false;
}

bool BackoffScheduler::canStop(size_t iteration) {
  size_t earliest = SIZE_MAX;
  bool banned = false;
  for (const RuleState& s : state_) {
    if (s.banned_until <= iteration) continue;
    banned = true;
    earliest = std::min(earliest, s.banned_until);
  }
  if (!banned) return true;
  size_t delta = earliest - iteration;
  for (RuleState& s : state_)
    if (s.banned_until > iteration) s.banned_until -= delta;
  return false;
}

// ---------------------------------------------------------------------------------------------
// Runner

Runner::Runner(EGraph& g, Limits limits)
    : g_(g), limits_(limits), scheduler_(std::make_unique<BackoffScheduler>()) {}

Runner& Runner::setLimits(Limits limits) {
  limits_ = limits;
  return *this;
}

Runner& Runner::setScheduler(std::unique_ptr<Scheduler> s) {
  if (!s) throw EGraphError("Runner::setScheduler: null scheduler");
  scheduler_ = std::move(s);
  return *this;
}

Runner& Runner::setHook(IterationHook hook) {
  hook_ = std::move(hook);
  return *this;
}

Runner& Runner::setApplied(AppliedMatches* applied) {
  applied_ = applied;
  return *this;
}

RunReport Runner::run(std::span<const Rewrite> rules) {
  return run(rules, {});
}

RunReport Runner::run(std::span<const Rewrite> rules, std::span<ClientRule* const> clients) {
  const auto start = Clock::now();
  // A huge max_time means "no time limit"; adding it must not overflow the clock.
  const auto room =
      std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::time_point::max() - start);
  const auto deadline = limits_.max_time >= room
                            ? Clock::time_point::max()
                            : start + std::chrono::duration_cast<Clock::duration>(limits_.max_time);
  RunReport report;
  scheduler_->reset(rules);
  matches_.resize(rules.size());
  resume_.assign(rules.size(), std::nullopt);
  report.rebuild_seconds += rebuildAndMeasure();
  report.initial_nodes = g_.nodeCount();
  report.peak_memory_bytes = g_.memoryBytes();
  for (size_t iteration = 0;; ++iteration) {
    if (auto stop = limitBefore(iteration, deadline)) {
      report.stop = *stop;
      break;
    }
    IterationReport it = iterate(iteration, rules, clients, deadline);
    report.search_seconds += it.search_seconds;
    report.apply_seconds += it.apply_seconds;
    report.rebuild_seconds += it.rebuild_seconds;
    report.peak_memory_bytes = std::max(report.peak_memory_bytes, it.memory_bytes);
    report.peak_match_bytes = std::max(report.peak_match_bytes, it.match_bytes);
    report.iterations.push_back(std::move(it));
    const IterationReport& done = report.iterations.back();
    bool hook_stop = false;
    if (hook_) {
      auto t = Clock::now();
      hook_stop = hook_(g_, done);
      report.hook_seconds += secondsSince(t);
      if (!g_.clean()) g_.rebuild();  // the hook may have added nodes
    }
    if (done.stop) {
      report.stop = *done.stop;
      break;
    }
    if (hook_stop) {
      report.stop = StopReason::kHookStop;
      report.iterations.back().stop = StopReason::kHookStop;
      break;
    }
  }
  for (auto& m : matches_)
    m = Matches();  // release match storage between runs
  report.nodes = g_.nodeCount();
  report.classes = g_.classCount();
  report.seconds = secondsSince(start);
  return report;
}

std::optional<StopReason> Runner::limitBefore(size_t iteration, Clock::time_point deadline) const {
  if (iteration >= limits_.max_iterations) return StopReason::kIterationLimit;
  if (g_.nodeCount() > limits_.max_nodes) return StopReason::kNodeLimit;
  if (g_.classCount() > limits_.max_classes) return StopReason::kClassLimit;
  if (Clock::now() >= deadline) return StopReason::kTimeLimit;
  return std::nullopt;
}

// Rebuilds, timing the index build separately: its cost per node predicts the final rebuild.
double Runner::rebuildAndMeasure() {
  auto t0 = Clock::now();
  propagateAndMeasure();
  auto t1 = Clock::now();
  g_.rebuild();
  auto t2 = Clock::now();
  double index = std::chrono::duration<double>(t2 - t1).count();
  if (g_.nodeCount() >= 1000) {
    // Conservative: the largest per-node cost seen (cache misses grow with the graph, and the
    // machine may be shared).
    index_seconds_per_node_ =
        std::max(index_seconds_per_node_, index / static_cast<double>(g_.nodeCount()));
  }
  return std::chrono::duration<double>(t2 - t0).count();
}

void Runner::propagateAndMeasure() {
  const size_t items = g_.pendingWork();
  auto t = Clock::now();
  g_.propagate();
  if (items >= 1000)
    propagate_seconds_per_item_ =
        std::max(propagate_seconds_per_item_, secondsSince(t) / static_cast<double>(items));
}

// What the rebuild after the last application is expected to take, with a 50% margin.
Runner::Clock::duration Runner::predictedRebuild() const {
  double s = index_seconds_per_node_ * static_cast<double>(g_.nodeCount()) +
             propagate_seconds_per_item_ * static_cast<double>(g_.pendingWork());
  return std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(1.5 * s));
}

IterationReport Runner::iterate(size_t iteration, std::span<const Rewrite> rules,
                                std::span<ClientRule* const> clients, Clock::time_point deadline) {
  IterationReport it;
  it.index = iteration;
  it.rules.resize(rules.size() + clients.size());
  const size_t nodes_before = g_.nodeCount();
  const uint64_t version_before = g_.version();

  auto t0 = Clock::now();
  std::optional<StopReason> stop = searchAll(iteration, rules, deadline, it);
  if (!stop) stop = searchClients(clients, rules.size(), deadline, it);
  auto t1 = Clock::now();
  it.search_seconds += std::chrono::duration<double>(t1 - t0).count();
  if (!stop) stop = applyAll(rules, deadline, it);
  if (!stop) stop = applyClients(clients, rules.size(), deadline, it);
  it.apply_seconds += secondsSince(t1);
  if (!stop) stop = finishChunkedRules(iteration, rules, deadline, it);
  const uint64_t unions_before = g_.unionCount();
  it.rebuild_seconds += rebuildAndMeasure();
  it.rebuild_unions = static_cast<size_t>(g_.unionCount() - unions_before);

  for (const RuleStats& rs : it.rules)
    it.applied += rs.applied;
  it.nodes = g_.nodeCount();
  it.classes = g_.classCount();
  it.nodes_added = it.nodes > nodes_before ? it.nodes - nodes_before : 0;
  it.memory_bytes = g_.memoryBytes();
  for (const Matches& m : matches_)
    it.match_bytes += m.memoryBytes();
  // A cut search skipped matches: that iteration proves nothing about saturation.
  const bool cut =
      std::any_of(it.rules.begin(), it.rules.end(), [](const RuleStats& rs) { return rs.cut; });
  if (!stop) stop = limitAfter(iteration, cut || g_.version() != version_before, deadline);
  it.stop = stop;
  return it;
}

std::optional<StopReason> Runner::searchAll(size_t iteration, std::span<const Rewrite> rules,
                                            Clock::time_point deadline, IterationReport& it) {
  size_t searched = 0;
  for (size_t r = 0; r < rules.size(); ++r)
    searched += scheduler_->canSearch(iteration, r) ? 1 : 0;
  // The default budget scales with the node limit and gives every rule at least 4096 matches per
  // chunk (many rules on a small graph would otherwise chunk needlessly); an explicit max_matches
  // is split exactly.
  const bool by_default = limits_.max_matches == 0;
  size_t budget = limits_.max_matches;
  if (by_default)
    budget =
        limits_.max_nodes > (SIZE_MAX - 100000) / 8 ? SIZE_MAX : 8 * limits_.max_nodes + 100000;
  share_ = std::max<size_t>(by_default ? 4096 : 1, budget / std::max<size_t>(1, searched));
  for (size_t r = 0; r < rules.size(); ++r) {
    matches_[r].clear();
    resume_[r].reset();
    if (!scheduler_->canSearch(iteration, r)) continue;
    it.rules[r].searched = true;
    if (auto stop = searchRule(iteration, r, rules[r], deadline, it)) return stop;
  }
  return std::nullopt;
}

// One search of rule r (from resume_[r] if it is continuing); leaves resume_[r] valid if the
// search stopped at the rule's share and must go on.
std::optional<StopReason> Runner::searchRule(size_t iteration, size_t r, const Rewrite& rule,
                                             Clock::time_point deadline, IterationReport& it) {
  RuleStats& stats = it.rules[r];
  auto t = Clock::now();
  const bool continuing = resume_[r].has_value();
  const size_t sched_limit = continuing ? SIZE_MAX : scheduler_->matchLimit(iteration, r);
  SearchBudget sb{std::min(sched_limit, share_), deadline, resume_[r].value_or(SearchResume())};
  SearchStatus status = rule.search(g_, matches_[r], sb);
  stats.search_seconds += secondsSince(t);
  stats.matches += matches_[r].size();
  stats.cut = stats.cut || matches_[r].cut();
  ++stats.chunks;
  resume_[r].reset();
  if (status == SearchStatus::kDeadline) return StopReason::kTimeLimit;
  if (status == SearchStatus::kMatchLimit && share_ < sched_limit) {
    resume_[r] = matches_[r].resume();
    return std::nullopt;
  }
  if (!continuing && !scheduler_->accept(iteration, r, stats.matches)) {
    stats.discarded = true;
    matches_[r].clear();
  }
  return std::nullopt;
}

// The client rules' searches (ClientRule); their stats are it.rules[first + k].
std::optional<StopReason> Runner::searchClients(std::span<ClientRule* const> clients, size_t first,
                                                Clock::time_point deadline, IterationReport& it) {
  for (size_t k = 0; k < clients.size(); ++k) {
    RuleStats& stats = it.rules[first + k];
    auto t = Clock::now();
    stats.searched = true;
    stats.matches = clients[k]->search(g_);
    stats.chunks = 1;
    stats.search_seconds += secondsSince(t);
    if (Clock::now() >= deadline) return StopReason::kTimeLimit;
  }
  return std::nullopt;
}

// The client rules' applications, each one application: limits are checked before it.
std::optional<StopReason> Runner::applyClients(std::span<ClientRule* const> clients, size_t first,
                                               Clock::time_point deadline, IterationReport& it) {
  for (size_t k = 0; k < clients.size(); ++k) {
    RuleStats& stats = it.rules[first + k];
    if (auto stop = sizeLimit()) return stop;
    if (Clock::now() + predictedRebuild() >= deadline) return StopReason::kTimeLimit;
    auto t = Clock::now();
    stats.applied = clients[k]->apply(g_);
    stats.apply_seconds += secondsSince(t);
  }
  return std::nullopt;
}

// Rules whose search stopped at their share go on in chunks: rebuild, search on, apply.
std::optional<StopReason> Runner::finishChunkedRules(size_t iteration,
                                                     std::span<const Rewrite> rules,
                                                     Clock::time_point deadline,
                                                     IterationReport& it) {
  for (;;) {
    bool any = false;
    for (size_t r = 0; r < rules.size(); ++r) {
      if (!resume_[r]) {
        matches_[r].clear();
        continue;
      }
      if (!any) it.rebuild_seconds += rebuildAndMeasure();  // search needs a clean graph
      any = true;
      auto t = Clock::now();
      auto stop = searchRule(iteration, r, rules[r], deadline, it);
      it.search_seconds += secondsSince(t);
      if (stop) return stop;
    }
    if (!any) return std::nullopt;
    auto t = Clock::now();
    auto stop = applyAll(rules, deadline, it);
    it.apply_seconds += secondsSince(t);
    if (stop) return stop;
  }
}

// Over a size limit? Before a rebuild the counts include congruent duplicates, so restore
// congruence first and decide on the exact counts.
std::optional<StopReason> Runner::sizeLimit() {
  if (g_.nodeCount() <= limits_.max_nodes && g_.classCount() <= limits_.max_classes)
    return std::nullopt;
  g_.propagate();
  if (g_.nodeCount() > limits_.max_nodes) return StopReason::kNodeLimit;
  if (g_.classCount() > limits_.max_classes) return StopReason::kClassLimit;
  return std::nullopt;
}

// Pending congruence work is processed in batches of this many nodes while applying, so that the
// rebuild after the last application (which the time limit has to wait for) stays short. Large
// enough to keep the benefit of deferred rebuilding.
constexpr size_t kPropagateBatch = 4096;

std::optional<StopReason> Runner::applyAll(std::span<const Rewrite> rules,
                                           Clock::time_point deadline, IterationReport& it) {
  for (size_t r = 0; r < rules.size(); ++r) {
    auto t = Clock::now();
    std::optional<StopReason> stop = applyRule(rules, r, deadline, it.rules[r]);
    it.rules[r].apply_seconds += secondsSince(t);
    if (stop) return stop;
  }
  return std::nullopt;
}

std::optional<StopReason> Runner::applyRule(std::span<const Rewrite> rules, size_t r,
                                            Clock::time_point deadline, RuleStats& stats) {
  const Rewrite& rule = rules[r];
  const Matches& m = matches_[r];
  for (size_t i = 0; i < m.size(); ++i) {
    // Software pipelining: applying a match is bound by cache misses, and matches are
    // independent, so load what matches i+16 and i+8 will touch.
    if (i + 16 < m.size()) rule.prefetch(g_, m.eclass(i + 16), m.subst(i + 16), 0);
    if (i + 8 < m.size()) rule.prefetch(g_, m.eclass(i + 8), m.subst(i + 8), 1);
    if (auto stop = sizeLimit()) return stop;
    if ((++apply_tick_ & 63) == 0) {
      if (g_.pendingWork() >= kPropagateBatch) propagateAndMeasure();
      // Stop when the final rebuild, as predicted, would end past the deadline.
      if (Clock::now() + predictedRebuild() >= deadline) return StopReason::kTimeLimit;
    }
    if (applied_ && !applied_->mayChange(rules, r, g_, m.eclass(i), m.subst(i))) continue;
    if (rule.apply(g_, m.eclass(i), m.subst(i))) ++stats.applied;
  }
  return std::nullopt;
}

// ---------------------------------------------------------------------------------------------
// AppliedMatches

void AppliedMatches::key(ClassId matched, const Subst& s) {
  key_.clear();
  key_.push_back(matched.value);
  for (size_t v = 0; v < s.varCount(); ++v)
    key_.push_back(s[Var(static_cast<uint32_t>(v))].value);
  for (size_t a = 0; a < s.attrVarCount(); ++a)
    key_.push_back(s[AttrVar(static_cast<uint32_t>(a))].value);
}

// What a kSubstNodes applier reads: each substitution class's e-nodes in the order forEachNode
// gives them (an applier may take the first of a kind), with canonical children.
void AppliedMatches::reads(const EGraph& g, const Subst& s) {
  reads_.clear();
  for (size_t v = 0; v < s.varCount(); ++v) {
    ClassId c = g.find(s[Var(static_cast<uint32_t>(v))]);
    reads_.push_back(c.value);
    g.forEachNode(c, [&](NodeId n) {
      ENode e = g.node(n);
      reads_.push_back(e.op().value);
      reads_.push_back(e.attr().value);
      reads_.push_back(static_cast<uint32_t>(e.arity()));
      for (ClassId k : e.children())
        reads_.push_back(g.find(k).value);
    });
  }
}

void AppliedMatches::storeReads(PerRule& pr, uint32_t k) {
  uint32_t room = pr.read_end[k] - pr.read_begin[k];
  if (reads_.size() > room) {
    pr.read_begin[k] = static_cast<uint32_t>(pr.read_words.size());
    pr.read_words.resize(pr.read_words.size() + reads_.size());
  }
  std::copy(reads_.begin(), reads_.end(), pr.read_words.begin() + pr.read_begin[k]);
  pr.read_end[k] = pr.read_begin[k] + static_cast<uint32_t>(reads_.size());
}

bool AppliedMatches::mayChange(std::span<const Rewrite> rules, size_t r, const EGraph& g,
                               ClassId matched, const Subst& s) {
  const ApplierReads what = rules[r].reads();
  if (what == ApplierReads::kAnything) return true;
  if (rules_.size() != rules.size()) rules_.resize(rules.size());
  PerRule& pr = rules_[r];
  key(matched, s);
  if (pr.rule != &rules[r]) {  // another rule list: start over
    pr = PerRule();
    pr.rule = &rules[r];
    pr.stride = static_cast<uint32_t>(key_.size());
  }
  uint64_t h = 0;
  for (uint32_t w : key_)
    h = detail::hashMix(h, w);
  const uint32_t hash = static_cast<uint32_t>(detail::hashFinish(h));
  uint32_t k = pr.index.find(hash, [&](uint32_t id) {
    return std::equal(key_.begin(), key_.end(), pr.keys.begin() + size_t{id} * pr.stride);
  });
  if (what == ApplierReads::kSubstNodes) reads(g, s);
  if (k == detail::IdTable::kEmpty) {
    k = static_cast<uint32_t>(pr.read_begin.size());
    pr.keys.insert(pr.keys.end(), key_.begin(), key_.end());
    pr.read_begin.push_back(0);
    pr.read_end.push_back(0);
    pr.index.insert(hash, k);
  } else if (g.hashConsCanonical() &&
             (what == ApplierReads::kMatch ||
              std::equal(reads_.begin(), reads_.end(), pr.read_words.begin() + pr.read_begin[k],
                         pr.read_words.begin() + pr.read_end[k]))) {
    ++skipped_;
    return false;
  }
  if (what == ApplierReads::kSubstNodes) storeReads(pr, k);
  return true;
}

std::optional<StopReason> Runner::limitAfter(size_t iteration, bool changed,
                                             Clock::time_point deadline) {
  if (!changed && scheduler_->canStop(iteration)) return StopReason::kSaturated;
  if (g_.nodeCount() > limits_.max_nodes) return StopReason::kNodeLimit;
  if (g_.classCount() > limits_.max_classes) return StopReason::kClassLimit;
  if (iteration + 1 >= limits_.max_iterations) return StopReason::kIterationLimit;
  if (Clock::now() >= deadline) return StopReason::kTimeLimit;
  return std::nullopt;
}

}  // namespace tacit::egraph
