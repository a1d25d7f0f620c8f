#include "egraph/extract.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <queue>
#include <string>

namespace tacit::egraph {

namespace {

constexpr uint32_t kNone = UINT32_MAX;

void requireClean(const EGraph& g, const char* who) {
  if (!g.clean()) throw EGraphError(std::string(who) + ": the e-graph needs rebuild() first");
}

// The term of `root` following choice[class] = node, one term node per class (shared).
Term buildTerm(const EGraph& g, ClassId root, const std::vector<uint32_t>& choice) {
  Term t;
  std::vector<uint32_t> index(g.nodeIdCount(), kNone);
  std::vector<uint8_t> on_stack(g.nodeIdCount(), 0);
  struct Item {
    uint32_t cls;
    uint32_t next_child;
  };
  std::vector<Item> stack{{g.find(root).value, 0}};
  on_stack[stack.back().cls] = 1;
  std::vector<uint32_t> kids;
  while (!stack.empty()) {
    Item& top = stack.back();
    uint32_t n = choice[top.cls];
    if (n == kNone) throw EGraphError("extraction: class without a chosen node");
    ENode e = g.node(NodeId(n));
    if (top.next_child < e.arity()) {
      uint32_t child = e.child(top.next_child++).value;
      if (index[child] != kNone) continue;
      if (on_stack[child]) throw EGraphError("extraction: the chosen nodes form a cycle");
      on_stack[child] = 1;
      stack.push_back({child, 0});
      continue;
    }
    kids.clear();
    for (ClassId c : e.children())
      kids.push_back(index[c.value]);
    TermNode tn;
    tn.op = e.op();
    tn.attr = e.attr();
    tn.eclass = ClassId(top.cls);
    tn.enode = NodeId(n);
    index[top.cls] = t.add(tn, kids);
    on_stack[top.cls] = 0;
    stack.pop_back();
  }
  return t;
}

// Distinct children of a node (sorted); n is small, so a sort is cheapest.
void distinctChildren(const ENode& e, std::vector<uint32_t>& out) {
  out.clear();
  for (ClassId c : e.children())
    out.push_back(c.value);
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
}

}  // namespace

TreeCost astSizeCost() {
  return [](const EGraph&, NodeId, std::span<const double> kids) {
    double s = 1;
    for (double k : kids)
      s += k;
    return s;
  };
}

NodeCost unitNodeCost() {
  return [](const EGraph&, NodeId) { return 1.0; };
}

// ---------------------------------------------------------------------------------------------
// GreedyExtractor: Dijkstra-style relaxation. A node is evaluated once all its children have a
// finite cost; classes are expanded cheapest first, so with a monotone cost each class is final
// when expanded and every node is evaluated once.

GreedyExtractor::GreedyExtractor(const EGraph& g, TreeCost cost) : g_(g), fn_(std::move(cost)) {
  requireClean(g, "GreedyExtractor");
  if (!fn_) throw EGraphError("GreedyExtractor: empty cost function");
  const size_t ids = g.nodeIdCount();
  cost_.assign(ids, kInfiniteCost);
  best_.assign(ids, kNone);
  std::vector<uint32_t> pending(ids, 0);  // per node: children classes without a cost yet
  std::vector<uint32_t> user_begin(ids + 1, 0);
  std::vector<uint32_t> users;
  std::vector<uint32_t> kids;
  for (ClassId c : g.classes())
    for (NodeId n : g.nodes(c)) {
      distinctChildren(g.node(n), kids);
      pending[n.value] = static_cast<uint32_t>(kids.size());
      for (uint32_t k : kids)
        ++user_begin[k + 1];
    }
  for (size_t i = 1; i <= ids; ++i)
    user_begin[i] += user_begin[i - 1];
  users.resize(user_begin[ids]);
  {
    std::vector<uint32_t> cursor(user_begin.begin(), user_begin.end() - 1);
    for (ClassId c : g.classes())
      for (NodeId n : g.nodes(c)) {
        distinctChildren(g.node(n), kids);
        for (uint32_t k : kids)
          users[cursor[k]++] = n.value;
      }
  }
  using Item = std::pair<double, uint32_t>;
  std::priority_queue<Item, std::vector<Item>, std::greater<Item>> queue;
  std::vector<double> child_costs;
  const size_t budget = 64 * (g.nodeCount() + 1);
  size_t evaluations = 0;
  auto evaluate = [&](uint32_t n) {
    if (++evaluations > budget)
      throw EGraphError("GreedyExtractor: costs did not converge (is the cost function monotone?)");
    ENode e = g.node(NodeId(n));
    child_costs.clear();
    for (ClassId c : e.children())
      child_costs.push_back(cost_[c.value]);
    double c = fn_(g, NodeId(n), child_costs);
    if (std::isnan(c)) throw EGraphError("GreedyExtractor: cost function returned NaN");
    uint32_t cls = g.classOf(NodeId(n)).value;
    if (c < cost_[cls]) {
      cost_[cls] = c;
      best_[cls] = n;
      queue.push({c, cls});
    }
  };
  for (ClassId c : g.classes())
    for (NodeId n : g.nodes(c))
      if (pending[n.value] == 0) evaluate(n.value);
  std::vector<uint8_t> expanded(ids, 0);
  while (!queue.empty()) {
    auto [c, cls] = queue.top();
    queue.pop();
    if (c > cost_[cls]) continue;  // superseded by a cheaper node
    bool first = !expanded[cls];
    expanded[cls] = 1;
    for (uint32_t i = user_begin[cls]; i < user_begin[cls + 1]; ++i) {
      uint32_t u = users[i];
      if (first) --pending[u];
      if (pending[u] == 0) evaluate(u);
    }
  }
}

double GreedyExtractor::cost(ClassId c) const {
  return cost_[g_.find(c).value];
}

std::optional<NodeId> GreedyExtractor::best(ClassId c) const {
  uint32_t n = best_[g_.find(c).value];
  if (n == kNone) return std::nullopt;
  return NodeId(n);
}

Term GreedyExtractor::term(ClassId c) const {
  if (cost(c) == kInfiniteCost)
    throw EGraphError("GreedyExtractor::term: class has no finite-cost term");
  return buildTerm(g_, c, best_);
}

// ---------------------------------------------------------------------------------------------
// DagExtractor

namespace {

// Evaluates DAG costs of choice maps: sum of node costs over the classes reachable from the root
// through the chosen nodes; nullopt if the choices form a cycle.
class DagCoster {
 public:
  DagCoster(const EGraph& g, const std::vector<double>& node_cost)
      : g_(g), node_cost_(node_cost), visited_(g.nodeIdCount(), 0), active_(g.nodeIdCount(), 0) {}

  std::optional<double> cost(const std::vector<uint32_t>& choice, uint32_t root,
                             std::vector<uint32_t>* reached = nullptr) {
    ++stamp_;
    double total = 0;
    stack_.assign(1, {root, 0});
    visited_[root] = stamp_;
    active_[root] = stamp_;
    if (reached) reached->assign(1, root);
    total += node_cost_[choice[root]];
    while (!stack_.empty()) {
      auto& [cls, next] = stack_.back();
      ENode e = g_.node(NodeId(choice[cls]));
      if (next == e.arity()) {
        active_[cls] = 0;
        stack_.pop_back();
        continue;
      }
      uint32_t child = e.child(next++).value;
      if (active_[child] == stamp_) return std::nullopt;
      if (visited_[child] == stamp_) continue;
      if (choice[child] == kNone) return std::nullopt;
      visited_[child] = active_[child] = stamp_;
      if (reached) reached->push_back(child);
      total += node_cost_[choice[child]];
      stack_.push_back({child, 0});
    }
    return total;
  }

 private:
  const EGraph& g_;
  const std::vector<double>& node_cost_;
  std::vector<uint32_t> visited_, active_;
  std::vector<std::pair<uint32_t, uint32_t>> stack_;
  uint32_t stamp_ = 0;
};

// Branch-and-bound over the choices of a small set of classes (bit masks over <= 64 classes).
class ExactSearch {
 public:
  ExactSearch(const EGraph& g, const std::vector<double>& node_cost,
              const std::vector<double>& tree_cost, const std::vector<uint32_t>& classes,
              size_t budget)
      : node_cost_(node_cost), budget_(budget) {
    local_.assign(g.nodeIdCount(), kNone);
    for (size_t i = 0; i < classes.size(); ++i)
      local_[classes[i]] = static_cast<uint32_t>(i);
    classes_ = classes;
    options_.resize(classes.size());
    min_cost_.assign(classes.size(), kInfiniteCost);
    for (size_t i = 0; i < classes.size(); ++i) {
      for (NodeId n : g.nodes(ClassId(classes[i]))) {
        if (node_cost[n.value] == kInfiniteCost) continue;
        uint64_t mask = 0;
        bool usable = true;
        for (ClassId c : g.node(n).children()) {
          if (local_[c.value] == kNone)
            usable = false;
          else
            mask |= uint64_t{1} << local_[c.value];
        }
        if (!usable) continue;
        options_[i].push_back({n.value, mask});
        min_cost_[i] = std::min(min_cost_[i], node_cost[n.value]);
      }
      // Cheapest (by tree cost) first: good incumbents early make pruning effective.
      std::sort(options_[i].begin(), options_[i].end(), [&](const Option& a, const Option& b) {
        double ta = tree_cost[a.node], tb = tree_cost[b.node];
        return ta != tb ? ta < tb : a.node < b.node;
      });
    }
    chosen_.assign(classes.size(), kNone);
  }

  // Improves `choice`/`best` in place; returns true if the search finished (optimality proven).
  bool run(std::vector<uint32_t>& choice, double& best) {
    best_ = best;
    search(1, 0, 0.0);
    if (found_) {
      for (size_t i = 0; i < classes_.size(); ++i)
        if (best_chosen_[i] != kNone) choice[classes_[i]] = best_chosen_[i];
      best = best_;
    }
    return !aborted_;
  }

 private:
  struct Option {
    uint32_t node;
    uint64_t children;  // local class mask
  };

  // Classes reachable from local class `from` through decided choices.
  uint64_t reach(uint32_t from, uint64_t decided) const {
    uint64_t seen = uint64_t{1} << from, frontier = seen;
    while (frontier) {
      uint32_t i = static_cast<uint32_t>(std::countr_zero(frontier));
      frontier &= frontier - 1;
      if (!(decided >> i & 1)) continue;
      uint64_t next = childMask(i) & ~seen;
      seen |= next;
      frontier |= next;
    }
    return seen;
  }
  uint64_t childMask(uint32_t i) const {
    for (const Option& o : options_[i])
      if (o.node == chosen_[i]) return o.children;
    return 0;
  }

  void search(uint64_t required, uint64_t decided, double cost) {
    if (aborted_) return;
    if (++steps_ > budget_) {
      aborted_ = true;
      return;
    }
    uint64_t open = required & ~decided;
    if (open == 0) {
      if (cost < best_) {
        best_ = cost;
        best_chosen_ = chosen_;
        found_ = true;
      }
      return;
    }
    double bound = cost;
    for (uint64_t m = open; m; m &= m - 1)
      bound += min_cost_[static_cast<size_t>(std::countr_zero(m))];
    if (bound >= best_) return;
    auto r = static_cast<uint32_t>(std::countr_zero(open));
    for (const Option& o : options_[r]) {
      // Choosing o must not close a cycle through already decided classes.
      bool cycle = false;
      for (uint64_t m = o.children & decided; m && !cycle; m &= m - 1)
        cycle = (reach(static_cast<uint32_t>(std::countr_zero(m)), decided) >> r) & 1;
      if (cycle || (o.children >> r & 1)) continue;
      chosen_[r] = o.node;
      search(required | o.children, decided | (uint64_t{1} << r), cost + node_cost_[o.node]);
      chosen_[r] = kNone;
      if (aborted_) return;
    }
  }

  const std::vector<double>& node_cost_;
  size_t budget_;
  size_t steps_ = 0;
  bool aborted_ = false;
  bool found_ = false;
  double best_ = kInfiniteCost;
  std::vector<uint32_t> local_;
  std::vector<uint32_t> classes_;
  std::vector<std::vector<Option>> options_;
  std::vector<double> min_cost_;
  std::vector<uint32_t> chosen_, best_chosen_;
};

}  // namespace

DagExtractor::DagExtractor(const EGraph& g, NodeCost cost, DagOptions opts)
    : g_(g), fn_(std::move(cost)), opts_(opts) {
  requireClean(g, "DagExtractor");
  if (!fn_) throw EGraphError("DagExtractor: empty cost function");
  if (opts_.exact_class_limit > 64)
    throw EGraphError("DagExtractor: exact_class_limit must be <= 64");
  node_cost_.assign(g.nodeIdCount(), kInfiniteCost);
  for (ClassId c : g.classes())
    for (NodeId n : g.nodes(c)) {
      double v = fn_(g, n);
      if (std::isnan(v) || v < 0) throw EGraphError("DagExtractor: node costs must be >= 0");
      node_cost_[n.value] = v;
    }
}

DagResult DagExtractor::extract(ClassId root_id) const {
  requireClean(g_, "DagExtractor::extract");
  const uint32_t root = g_.find(root_id).value;
  // 1. Greedy with the tree cost induced by the node costs.
  GreedyExtractor greedy(g_, [this](const EGraph&, NodeId n, std::span<const double> kids) {
    double s = node_cost_[n.value];
    for (double k : kids)
      s += k;
    return s;
  });
  if (greedy.cost(ClassId(root)) == kInfiniteCost)
    throw EGraphError("DagExtractor::extract: class has no finite-cost term");
  std::vector<uint32_t> choice(g_.nodeIdCount(), kNone);
  std::vector<double> tree_cost(g_.nodeIdCount(), kInfiniteCost);
  for (ClassId c : g_.classes()) {
    if (auto b = greedy.best(c)) choice[c.value] = b->value;
    for (NodeId n : g_.nodes(c)) {
      double s = node_cost_[n.value];
      for (ClassId k : g_.node(n).children())
        s += greedy.cost(k);
      tree_cost[n.value] = s;
    }
  }
  DagCoster coster(g_, node_cost_);
  DagResult result;
  double best = *coster.cost(choice, root);  // acyclic: tree costs are monotone
  result.greedy_cost = best;

  // 2. Local search: switch one class of the current DAG at a time.
  std::vector<uint32_t> reached;
  size_t evaluations = 0;
  for (size_t round = 0; round < opts_.max_local_rounds; ++round) {
    bool improved = false;
    coster.cost(choice, root, &reached);
    std::sort(reached.begin(), reached.end());
    for (uint32_t cls : reached) {
      for (NodeId n : g_.nodes(ClassId(cls))) {
        if (n.value == choice[cls] || tree_cost[n.value] == kInfiniteCost) continue;
        if (++evaluations > opts_.max_local_evaluations) break;
        uint32_t old = choice[cls];
        choice[cls] = n.value;
        auto c = coster.cost(choice, root);
        if (c && *c < best) {
          best = *c;
          improved = true;
        } else {
          choice[cls] = old;
        }
      }
    }
    if (!improved || evaluations > opts_.max_local_evaluations) break;
  }

  // 3. Exact branch-and-bound when the reachable part is small.
  std::vector<uint32_t> reachable{root};
  {
    std::vector<uint8_t> seen(g_.nodeIdCount(), 0);
    seen[root] = 1;
    for (size_t i = 0; i < reachable.size() && reachable.size() <= opts_.exact_class_limit; ++i)
      for (NodeId n : g_.nodes(ClassId(reachable[i]))) {
        if (tree_cost[n.value] == kInfiniteCost) continue;
        for (ClassId k : g_.node(n).children())
          if (!seen[k.value]) {
            seen[k.value] = 1;
            reachable.push_back(k.value);
          }
      }
  }
  if (reachable.size() <= opts_.exact_class_limit) {
    std::sort(reachable.begin() + 1, reachable.end());
    ExactSearch exact(g_, node_cost_, tree_cost, reachable, opts_.exact_node_budget);
    result.optimal = exact.run(choice, best);
  }
  result.term = buildTerm(g_, ClassId(root), choice);
  result.cost = best;
  return result;
}

}  // namespace tacit::egraph
