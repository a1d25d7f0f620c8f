// Pattern compilation and the e-matching virtual machine.
//
// A pattern compiles into a linear program over class registers (register 0 holds the root
// class):
//   Bind r, p, out   for each e-node of class r with p's operator, arity and attribute: write its
//                    children into registers out..out+arity-1, run the rest, backtrack
//   Compare a, b     registers a and b must hold the same class (a repeated variable)
//   CheckGround r, g register r must hold the class of ground sub-pattern g, found once per
//                    search by hash-cons lookup (no scanning for variable-free sub-terms)
//   Yield            record (root class, variable registers, attribute variables)
// Compare and CheckGround are emitted right after the Bind that fills their register, so failing
// candidates are cut as early as possible. The first Bind (the root) is driven from the e-graph's
// per-operator node list instead of scanning every class.
#include <algorithm>
#include <deque>
#include <numeric>

#include "egraph/pattern.h"

namespace tacit::egraph {

void Pattern::compile() {
  may_duplicate_ = false;
  for (Node& n : nodes_) {
    if (n.is_var) continue;
    n.ground = n.attr_kind == AttrMatch::Kind::kExact;
    for (uint32_t k = 0; k < n.arity; ++k)
      n.ground = n.ground && nodes_[children_[n.first_child + k]].ground;
    // A wildcard that binds nothing lets two e-nodes produce the same substitution.
    if (n.attr_kind == AttrMatch::Kind::kAny) may_duplicate_ = true;
  }
  program_.clear();
  ground_nodes_.clear();
  var_reg_.assign(var_names_.size(), UINT32_MAX);
  reg_count_ = 1;
  const auto root = static_cast<uint32_t>(nodes_.size() - 1);
  if (nodes_[root].is_var) {
    var_reg_[nodes_[root].var] = 0;
    program_.push_back(Instr{Instr::kYield});
    return;
  }
  if (nodes_[root].ground) {
    ground_nodes_.push_back(root);
    program_.push_back(Instr{Instr::kYield});
    return;
  }
  std::vector<bool> attr_bound(attr_var_names_.size(), false);
  std::deque<std::pair<uint32_t, uint32_t>> queue{{root, 0}};  // (pattern node, register)
  while (!queue.empty()) {
    auto [p, reg] = queue.front();
    queue.pop_front();
    const Node& n = nodes_[p];
    Instr bind{Instr::kBind};
    bind.reg = reg;
    bind.arg = p;
    bind.out = reg_count_;
    reg_count_ += n.arity;
    if (n.attr_kind == AttrMatch::Kind::kBind) {
      bind.attr_bind_first = !attr_bound[n.attr_var];
      attr_bound[n.attr_var] = true;
    }
    // A first child bound by an earlier instruction lets the Bind binary-search the class.
    if (n.arity > 0) {
      const Node& c0 = nodes_[children_[n.first_child]];
      if (c0.is_var && var_reg_[c0.var] != UINT32_MAX) {
        bind.key = Instr::kKeyRegister;
        bind.key_index = var_reg_[c0.var];
      } else if (!c0.is_var && c0.ground) {
        bind.key = Instr::kKeyGround;
        bind.key_index = static_cast<uint32_t>(ground_nodes_.size());  // allocated below
      }
    }
    program_.push_back(bind);
    for (uint32_t k = 0; k < n.arity; ++k) {
      uint32_t c = children_[n.first_child + k];
      uint32_t creg = bind.out + k;
      const Node& child = nodes_[c];
      if (child.is_var) {
        if (var_reg_[child.var] == UINT32_MAX) {
          var_reg_[child.var] = creg;
        } else {
          Instr cmp{Instr::kCompare};
          cmp.reg = var_reg_[child.var];
          cmp.arg = creg;
          program_.push_back(cmp);
        }
      } else if (child.ground) {
        Instr chk{Instr::kCheckGround};
        chk.reg = creg;
        chk.arg = static_cast<uint32_t>(ground_nodes_.size());
        ground_nodes_.push_back(c);
        program_.push_back(chk);
      } else {
        queue.emplace_back(c, creg);
      }
    }
  }
  program_.push_back(Instr{Instr::kYield});
}

bool Pattern::predicateHolds(int32_t pred, const AttrTable& table, AttrId a) const {
  if (pred < 0) return true;
  if (pred_cache_.size() != preds_.size()) pred_cache_.assign(preds_.size(), PredCache{});
  PredCache& cache = pred_cache_[static_cast<size_t>(pred)];
  if (cache.table != &table) {
    cache.table = &table;
    cache.value.clear();
  }
  if (cache.value.size() <= a.value) cache.value.resize(a.value + 1, 0);
  int8_t& v = cache.value[a.value];
  if (v == 0) v = preds_[static_cast<size_t>(pred)](table, a) ? 1 : 2;
  return v == 1;
}

// One search: registers, ground classes and the output rows.
class MatchRun {
 public:
  MatchRun(const Pattern& p, const EGraph& g, Matches& out, const SearchBudget& budget)
      : p_(p),
        g_(g),
        out_(out),
        budget_(budget),
        regs_(p.reg_count_, 0),
        aregs_(p.attr_var_names_.size(), 0) {
    const size_t m = budget.max_matches;
    const size_t slack = std::max<size_t>(m, 4096);
    hard_cap_ = m > SIZE_MAX - slack ? SIZE_MAX : m + slack;
    out_.reset(static_cast<uint32_t>(p.var_names_.size()),
               static_cast<uint32_t>(p.attr_var_names_.size()));
  }

  // Looks up every ground sub-pattern; false if one is absent (then nothing can match).
  bool prepareGround() {
    ground_.resize(p_.ground_nodes_.size());
    for (size_t i = 0; i < ground_.size(); ++i) {
      auto c = groundClass(p_.ground_nodes_[i]);
      if (!c) return false;
      ground_[i] = c->value;
    }
    return true;
  }

  void searchAll() {
    const Pattern::Node& root = p_.nodes_.back();
    if (root.is_var) {
      std::span<const ClassId> classes = g_.classes();
      visitFrom(classes, {}, [&](size_t i) {
        regs_[0] = classes[i].value;
        run(0);
      });
    } else if (root.ground) {
      regs_[0] = ground_[0];
      if (!budget_.resume.cls.valid() || ClassId(ground_[0]) >= budget_.resume.cls) run(0);
    } else {
      // The root Bind is driven by the per-operator index (with each entry's class), so classes
      // without a node of the root operator cost nothing.
      std::span<const NodeId> nodes = g_.nodesWithOp(root.op);
      std::span<const ClassId> classes = g_.classesWithOp(root.op);
      const Pattern::Instr& in = p_.program_[0];
      visitFrom(classes, nodes, [&](size_t i) {
        regs_[0] = classes[i].value;
        if (bind(in, root, nodes[i].value)) run(1);
      });
    }
    if (limit_reached_ && !stopped_) status_ = SearchStatus::kMatchLimit;
  }

  void searchClass(ClassId c) {
    const Pattern::Node& root = p_.nodes_.back();
    regs_[0] = c.value;
    if (root.is_var) {
      run(0);
    } else if (root.ground) {
      if (ground_[0] == c.value) run(0);
    } else {
      bindAll(0);
    }
    if (limit_reached_ && !stopped_) status_ = SearchStatus::kMatchLimit;
  }

  SearchStatus status() const { return status_; }

 private:
  // Calls visit(i) for every root entry (a class, or a root e-node with its class; sorted by
  // class) from budget.resume on, until the search stops. A match limit stops it at an entry
  // boundary and records where to resume.
  template <typename Visit>
  void visitFrom(std::span<const ClassId> classes, std::span<const NodeId> nodes, Visit&& visit) {
    size_t i = resumeIndex(classes, nodes);
    for (; i < classes.size(); ++i) {
      if (expired()) return;
      visit(i);
      if (status_ == SearchStatus::kDeadline) return;
      if (limit_reached_) {  // at an entry boundary, or cut at the hard cap
        stopped_ = true;
        status_ = SearchStatus::kMatchLimit;
        out_.resume_ = nodes.empty() ? SearchResume{ClassId(classes[i].value + 1), NodeId()}
                                     : SearchResume{classes[i], nodes[i]};
        return;
      }
    }
  }

  size_t resumeIndex(std::span<const ClassId> classes, std::span<const NodeId> nodes) const {
    const SearchResume& r = budget_.resume;
    if (!r.cls.valid()) return 0;
    auto i = static_cast<size_t>(std::lower_bound(classes.begin(), classes.end(), r.cls) -
                                 classes.begin());
    if (!r.after.valid() || nodes.empty()) return i;
    // Continue after `after` within its class; if it is gone (the graph changed), redo the class:
    // repeating a match is harmless, skipping one is not.
    for (size_t j = i; j < classes.size() && classes[j] == r.cls; ++j)
      if (nodes[j] == r.after) return j + 1;
    return i;
  }

  std::optional<ClassId> groundClass(uint32_t node) {
    const Pattern::Node& n = p_.nodes_[node];
    std::vector<ClassId> kids(n.arity);
    for (uint32_t k = 0; k < n.arity; ++k) {
      auto c = groundClass(p_.children_[n.first_child + k]);
      if (!c) return std::nullopt;
      kids[k] = *c;
    }
    return g_.lookup(n.op, n.attr, kids);
  }

  // Checks the deadline every 1024 units of work (candidate nodes looked at).
  bool expired() {
    if (!budget_.deadline || (++tick_ & 1023) != 0) return false;
    if (std::chrono::steady_clock::now() < *budget_.deadline) return false;
    stopped_ = true;
    status_ = SearchStatus::kDeadline;
    return true;
  }

  // The part of a class's sorted node list that can match the Bind: the operator's range,
  // narrowed to the exact attribute and to the known first child when the Bind has them.
  std::span<const NodeId> candidates(const Pattern::Instr& in, const Pattern::Node& pn) const {
    std::span<const NodeId> all = g_.classNodesUnchecked(regs_[in.reg]);
    if (all.size() <= 8) return all;  // filtered by bind()
    const bool exact = pn.attr_kind == AttrMatch::Kind::kExact;
    const uint32_t c0 = keyValue(in);
    const int len = !exact ? 1 : (in.key == Pattern::Instr::kNoKey ? 2 : 3);
    auto cmp = [&](const EGraph::NodeRec& r) {  // <0, 0, >0 against the key prefix
      if (r.op != pn.op) return r.op < pn.op ? -1 : 1;
      if (len < 2 || r.attr == pn.attr) {
        if (len < 3) return 0;
        uint32_t k = r.arity == 0 ? 0u : g_.kidsOf(r)[0].value;
        return k == c0 ? 0 : (k < c0 ? -1 : 1);
      }
      return r.attr < pn.attr ? -1 : 1;
    };
    auto lo = std::partition_point(all.begin(), all.end(),
                                   [&](NodeId n) { return cmp(g_.record(n.value)) < 0; });
    auto hi =
        std::partition_point(lo, all.end(), [&](NodeId n) { return cmp(g_.record(n.value)) == 0; });
    return {lo, hi};
  }

  uint32_t keyValue(const Pattern::Instr& in) const {
    switch (in.key) {
      case Pattern::Instr::kKeyRegister:
        return regs_[in.key_index];
      case Pattern::Instr::kKeyGround:
        return ground_[in.key_index];
      case Pattern::Instr::kNoKey:
        break;
    }
    return 0;
  }

  // Checks e-node n against the Bind's pattern node and loads its children into registers.
  bool bind(const Pattern::Instr& in, const Pattern::Node& pn, uint32_t n) {
    const EGraph::NodeRec& r = g_.record(n);
    if (r.op != pn.op || r.arity != pn.arity) return false;
    const ClassId* kids = g_.kidsOf(r);
    if (in.key != Pattern::Instr::kNoKey && kids[0].value != keyValue(in)) return false;
    switch (pn.attr_kind) {
      case AttrMatch::Kind::kExact:
        if (r.attr != pn.attr) return false;
        break;
      case AttrMatch::Kind::kAny:
        if (!p_.predicateHolds(pn.pred, g_.language().attrs(), r.attr)) return false;
        break;
      case AttrMatch::Kind::kBind:
        if (in.attr_bind_first) {
          if (!p_.predicateHolds(pn.pred, g_.language().attrs(), r.attr)) return false;
          aregs_[pn.attr_var] = r.attr.value;
        } else if (aregs_[pn.attr_var] != r.attr.value) {
          return false;
        }
        break;
    }
    for (uint32_t k = 0; k < pn.arity; ++k)
      regs_[in.out + k] = kids[k].value;
    return true;
  }

  // Runs a Bind: every candidate node, then the rest of the program.
  void bindAll(size_t pc) {
    const Pattern::Instr& in = p_.program_[pc];
    const Pattern::Node& pn = p_.nodes_[in.arg];
    for (NodeId n : candidates(in, pn)) {
      if (expired()) return;
      if (bind(in, pn, n.value)) run(pc + 1);
      if (stopped_) return;
    }
  }

  void run(size_t pc) {
    for (;;) {
      const Pattern::Instr& in = p_.program_[pc];
      switch (in.kind) {
        case Pattern::Instr::kCompare:
          if (regs_[in.reg] != regs_[in.arg]) return;
          ++pc;
          continue;
        case Pattern::Instr::kCheckGround:
          if (regs_[in.reg] != ground_[in.arg]) return;
          ++pc;
          continue;
        case Pattern::Instr::kYield:
          yield();
          return;
        case Pattern::Instr::kBind:
          bindAll(pc);
          return;
      }
    }
  }

  void yield() {
    uint32_t* row = out_.appendRow();
    row[0] = regs_[0];
    size_t k = 1;
    for (uint32_t r : p_.var_reg_)
      row[k++] = regs_[r];
    for (uint32_t a : aregs_)
      row[k++] = a;
    if (out_.size() >= budget_.max_matches) limit_reached_ = true;
    if (out_.size() >= hard_cap_) {
      stopped_ = true;  // unwinds the current root e-node
      out_.cut_ = true;
    }
  }

  const Pattern& p_;
  const EGraph& g_;
  Matches& out_;
  const SearchBudget& budget_;
  std::vector<uint32_t> regs_;
  std::vector<uint32_t> aregs_;
  std::vector<uint32_t> ground_;
  bool stopped_ = false;
  bool limit_reached_ = false;
  size_t hard_cap_ = SIZE_MAX;
  SearchStatus status_ = SearchStatus::kComplete;
  uint32_t tick_ = 0;
};

void Matches::reset(uint32_t nvars, uint32_t nattrs) {
  uint32_t stride = 1 + nvars + nattrs;
  if (stride != stride_) chunks_.clear();  // chunks are sized for one stride
  stride_ = stride;
  nvars_ = nvars;
  nattrs_ = nattrs;
  clear();
}

uint32_t* Matches::appendRow() {
  if (size_ == chunks_.size() * kRowsPerChunk)
    chunks_.push_back(std::make_unique_for_overwrite<uint32_t[]>(kRowsPerChunk * stride_));
  uint32_t* row = chunks_[size_ / kRowsPerChunk].get() + (size_ % kRowsPerChunk) * stride_;
  ++size_;
  return row;
}

// Sorts the rows lexicographically (class first) and drops repeated ones.
void Pattern::dedupRows(Matches& m) {
  const uint32_t stride = m.stride_;
  std::vector<uint32_t> flat;
  flat.reserve(m.size() * stride);
  for (size_t i = 0; i < m.size(); ++i)
    flat.insert(flat.end(), m.row(i), m.row(i) + stride);
  std::vector<uint32_t> order(m.size());
  std::iota(order.begin(), order.end(), 0u);
  auto row = [&](uint32_t i) { return flat.begin() + static_cast<ptrdiff_t>(i) * stride; };
  std::sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) {
    return std::lexicographical_compare(row(a), row(a) + stride, row(b), row(b) + stride);
  });
  SearchResume resume = m.resume_;
  m.clear();
  m.resume_ = resume;
  for (size_t k = 0; k < order.size(); ++k) {
    if (k > 0 && std::equal(row(order[k]), row(order[k]) + stride, row(order[k - 1]))) continue;
    std::copy(row(order[k]), row(order[k]) + stride, m.appendRow());
  }
}

SearchStatus Pattern::search(const EGraph& g, Matches& out, const SearchBudget& budget) const {
  if (!g.clean()) throw EGraphError("Pattern::search: the e-graph needs rebuild() first");
  MatchRun run(*this, g, out, budget);
  if (budget.max_matches == 0) return SearchStatus::kMatchLimit;
  if (!run.prepareGround()) return SearchStatus::kComplete;
  run.searchAll();
  if (may_duplicate_) dedupRows(out);
  return run.status();
}

Matches Pattern::search(const EGraph& g) const {
  Matches m;
  search(g, m);
  return m;
}

SearchStatus Pattern::searchClass(const EGraph& g, ClassId c, Matches& out,
                                  const SearchBudget& budget) const {
  if (!g.clean()) throw EGraphError("Pattern::searchClass: the e-graph needs rebuild() first");
  MatchRun run(*this, g, out, budget);
  if (budget.max_matches == 0) return SearchStatus::kMatchLimit;
  if (!run.prepareGround()) return SearchStatus::kComplete;
  run.searchClass(g.find(c));
  if (may_duplicate_) dedupRows(out);
  return run.status();
}

}  // namespace tacit::egraph
