#include "alloc/csp.h"

#include <gecode/int.hh>
#include <gecode/minimodel.hh>
#include <gecode/search.hh>

#include <algorithm>
#include <limits>
#include <optional>
#include <stdexcept>

namespace tacit::alloc {
namespace {

// Stops the search at the time limit, or (when `use_fails`) at the failure limit, whichever first.
class EitherStop : public Gecode::Search::Stop {
 public:
  EitherStop(Gecode::Search::Stop& time, Gecode::Search::Stop& fails, bool use_fails)
      : time_(time), fails_(fails), use_fails_(use_fails) {}
  bool stop(const Gecode::Search::Statistics& s, const Gecode::Search::Options& o) override {
    return time_.stop(s, o) || (use_fails_ && fails_.stop(s, o));
  }

 private:
  Gecode::Search::Stop& time_;
  Gecode::Search::Stop& fails_;
  const bool use_fails_;
};

using Gecode::BoolExpr;
using Gecode::IntVar;
using Gecode::LinIntExpr;

// Auxiliary variables (quotients, conditionals) range over this.
constexpr int kBetaMin = -(1 << 30);
constexpr int kBetaMax = 1 << 30;
constexpr unsigned kCommitDistance = 128;

int toInt(int64_t v) {
  if (v < std::numeric_limits<int>::min() / 2 || v > std::numeric_limits<int>::max() / 2) {
    throw std::range_error("address value " + std::to_string(v) +
                           " exceeds the solver's integer range");
  }
  return static_cast<int>(v);
}

class AllocSpace : public Gecode::Space {
 public:
  AllocSpace() = default;
  AllocSpace(AllocSpace& other) : Gecode::Space(other) { vars.update(*this, other.vars); }
  Gecode::Space* copy() override { return new AllocSpace(*this); }

  int newVar(int lo, int hi) {
    pending_.push_back(IntVar(*this, lo, hi));
    return static_cast<int>(pending_.size()) - 1;
  }
  IntVar& var(int i) { return pending_[static_cast<size_t>(i)]; }
  void freeze(const std::vector<int>& branch_order) {
    Gecode::IntVarArgs args;
    for (int i : branch_order)
      args << pending_[static_cast<size_t>(i)];
    vars = Gecode::IntVarArray(*this, args);
    Gecode::branch(*this, vars, Gecode::INT_VAR_NONE(), Gecode::INT_VAL_MIN());
  }

  Gecode::IntVarArray vars;

 private:
  std::vector<IntVar> pending_;  // only used while posting
};

// Translates a taidl expression (α substituted, β as solver variables) into Gecode expressions.
class ExprTranslator {
 public:
  ExprTranslator(AllocSpace& space, const taidl::Expr& e, const std::vector<int64_t>& alpha,
                 const std::vector<int>& beta_vars)
      : s_(space), e_(e), alpha_(alpha), beta_(beta_vars) {}

  BoolExpr boolean(int32_t i) {
    const taidl::ExprNode& n = e_.node(i);
    if (auto decided = beyondRange(n)) return LinIntExpr(0) == LinIntExpr(*decided ? 0 : 1);
    switch (n.op) {
      case taidl::ExprOp::kEq:
        return integer(n.a) == integer(n.b);
      case taidl::ExprOp::kNe:
        return integer(n.a) != integer(n.b);
      case taidl::ExprOp::kLt:
        return integer(n.a) < integer(n.b);
      case taidl::ExprOp::kLe:
        return integer(n.a) <= integer(n.b);
      case taidl::ExprOp::kGt:
        return integer(n.a) > integer(n.b);
      case taidl::ExprOp::kGe:
        return integer(n.a) >= integer(n.b);
      case taidl::ExprOp::kAnd:
        return boolean(n.a) && boolean(n.b);
      case taidl::ExprOp::kOr:
        return boolean(n.a) || boolean(n.b);
      case taidl::ExprOp::kNot:
        return !boolean(n.a);
      default:
        return integer(i) != 0;
    }
  }

  // An address bound beyond the solver's integers (`dram_base < 2^32`) against one
  // attribute, whose variable ranges far below it: decided here, not translated.
  std::optional<bool> beyondRange(const taidl::ExprNode& n) const {
    if (!taidl::isComparison(n.op)) return std::nullopt;
    const taidl::ExprNode& l = e_.node(n.a);
    const taidl::ExprNode& r = e_.node(n.b);
    if (l.op != taidl::ExprOp::kRef || l.ref != taidl::RefKind::kBeta ||
        r.op != taidl::ExprOp::kInt)
      return std::nullopt;
    const int64_t c = r.value;
    if (c >= -kBetaMax && c <= kBetaMax) return std::nullopt;
    switch (n.op) {  // the attribute is within (-kBetaMax, kBetaMax)
      case taidl::ExprOp::kLt:
      case taidl::ExprOp::kLe:
        return c > 0;
      case taidl::ExprOp::kGt:
      case taidl::ExprOp::kGe:
        return c < 0;
      case taidl::ExprOp::kNe:
        return true;
      default:
        return false;
    }
  }

  LinIntExpr integer(int32_t i) {
    const taidl::ExprNode& n = e_.node(i);
    switch (n.op) {
      case taidl::ExprOp::kInt:
        return LinIntExpr(toInt(n.value));
      case taidl::ExprOp::kRef:
        return ref(n);
      case taidl::ExprOp::kNeg:
        return -integer(n.a);
      case taidl::ExprOp::kAdd:
        return integer(n.a) + integer(n.b);
      case taidl::ExprOp::kSub:
        return integer(n.a) - integer(n.b);
      case taidl::ExprOp::kMul:
        return integer(n.a) * integer(n.b);
      case taidl::ExprOp::kDiv:
        return exactDiv(n);
      case taidl::ExprOp::kFloorDiv:
        return floorDiv(n, false);
      case taidl::ExprOp::kMod:
        return floorDiv(n, true);
      case taidl::ExprOp::kMin:
        return Gecode::min(integer(n.a), integer(n.b));
      case taidl::ExprOp::kMax:
        return Gecode::max(integer(n.a), integer(n.b));
      case taidl::ExprOp::kCond: {
        IntVar r(s_, kBetaMin, kBetaMax);
        BoolExpr c = boolean(n.a);
        Gecode::rel(s_, c >> (r == integer(n.b)));
        Gecode::rel(s_, (!c) >> (r == integer(n.c)));
        return LinIntExpr(r);
      }
      default: {
        // A comparison or logical node used as an integer: 1 or 0.
        Gecode::BoolVar b = Gecode::expr(s_, boolean(i));
        IntVar r(s_, 0, 1);
        Gecode::channel(s_, b, r);
        return LinIntExpr(r);
      }
    }
  }

 private:
  LinIntExpr ref(const taidl::ExprNode& n) {
    switch (n.ref) {
      case taidl::RefKind::kAlpha:
        return LinIntExpr(toInt(alpha_[static_cast<size_t>(n.slot)]));
      case taidl::RefKind::kBeta:
        return LinIntExpr(s_.var(beta_[static_cast<size_t>(n.slot)]));
      case taidl::RefKind::kParam:
      case taidl::RefKind::kConst:
        return LinIntExpr(toInt(n.value));
      default:
        throw std::logic_error("a unit constraint refers to a register or loop variable");
    }
  }

  LinIntExpr exactDiv(const taidl::ExprNode& n) {
    IntVar q(s_, kBetaMin, kBetaMax);
    Gecode::rel(s_, integer(n.a) == q * integer(n.b));
    return LinIntExpr(q);
  }

  // a // b (rounding toward -inf) or a % b (sign of b), for a positive or negative divisor.
  LinIntExpr floorDiv(const taidl::ExprNode& n, bool remainder) {
    IntVar q(s_, kBetaMin, kBetaMax), r(s_, kBetaMin, kBetaMax);
    LinIntExpr a = integer(n.a), b = integer(n.b);
    Gecode::rel(s_, a == q * b + r);
    Gecode::rel(s_, (b > 0) >> (r >= 0 && r < b));
    Gecode::rel(s_, (b < 0) >> (r <= 0 && r > b));
    Gecode::rel(s_, b != 0);
    return LinIntExpr(remainder ? r : q);
  }

  AllocSpace& s_;
  const taidl::Expr& e_;
  const std::vector<int64_t>& alpha_;
  const std::vector<int>& beta_;
};

class Model {
 public:
  explicit Model(const CspInput& in) : in_(in), g_(*in.graph), s_(*in.storage) {}

  SolveResult run() {
    SolveResult out;
    auto space = std::make_unique<AllocSpace>();
    space_ = space.get();
    try {
      postVariables();
      postCalls();
      postNonOverlap();
    } catch (const std::range_error& e) {
      out.reason = e.what();
      return out;
    }
    std::vector<int> branch = root_vars_flat_;
    branch.insert(branch.end(), beta_vars_flat_.begin(), beta_vars_flat_.end());
    space->freeze(branch);
    if (!reason_.empty() || space->status() == Gecode::SS_FAILED) {
      out.reason = reason_.empty() ? "the constraints fail before any choice" : reason_;
      return out;
    }
    Gecode::Search::Options opts;
    opts.threads = 1;  // deterministic
    // Clone a space every 128 choices, not Gecode's default 8: a placement is thousands of
    // choices that almost never fail, and copying every variable every 8 of them was most of the
    // solver's time (K5: 123 -> 9 ms). A failure recomputes at most 128 choices from the last
    // clone. The search and its solution do not depend on the distance.
    opts.c_d = kCommitDistance;
    // Gecode counts the limit from the search's start: what is left of the solve's deadline, at
    // least 1 ms (a stop of 0 would end the search before its first node).
    Gecode::Search::TimeStop time(static_cast<unsigned long>(
        std::max(std::chrono::milliseconds(1), in_.deadline.leftMilliseconds()).count()));
    Gecode::Search::FailStop fails(in_.fail_limit);
    EitherStop stop(time, fails, in_.fail_limit > 0);
    opts.stop = &stop;
    Gecode::DFS<AllocSpace> dfs(space.get(), opts);
    std::unique_ptr<AllocSpace> sol(dfs.next());
    if (!sol) {
      out.status = dfs.stopped() ? SolveStatus::kLimit : SolveStatus::kInfeasible;
      return out;
    }
    out.status = SolveStatus::kSolved;
    out.placement = extract(*sol, branch);
    return out;
  }

 private:
  bool isUndef(int32_t value) const {
    int32_t p = g_.values[static_cast<size_t>(value)].producer;
    return p >= 0 && g_.nodes[static_cast<size_t>(p)].kind == isel::PiiKind::kUndef;
  }

  bool inHbm(int32_t value) const {
    return in_.isa->buffers[static_cast<size_t>(g_.values[static_cast<size_t>(value)].buffer)]
        .is_hbm;
  }

  void postVariables() {
    const taidl::Isa& isa = *in_.isa;
    // Pinned HBM bytes: inputs and results; pinned on-chip starts: resident ones (kernel.h
    // Residence), per access dimension of their buffer.
    std::vector<int64_t> pin(g_.values.size(), -1);
    std::vector<std::vector<int64_t>> pin_on_chip(g_.values.size());
    auto pinResident = [&](size_t v, const isel::Residence& r) {
      // Unpinned, the steps of a split contraction placed their accumulators apart (a wrong
      // program: differential finding F3): a start per access dimension is required.
      if (r.start.size() != s_.offset[v].size())
        throw std::logic_error("a resident value needs a start per access dimension of its buffer");
      std::vector<int64_t>& at = pin_on_chip[static_cast<size_t>(s_.root[v])];
      at.clear();
      for (size_t k = 0; k < r.start.size(); ++k)
        at.push_back(r.start[k] - s_.offset[v][k]);
    };
    for (size_t v = 0; v < g_.values.size(); ++v) {
      int32_t p = g_.values[v].producer;
      if (p >= 0 && g_.nodes[static_cast<size_t>(p)].kind == isel::PiiKind::kInput) {
        const isel::KernelParameter& param =
            in_.kernel->parameters[static_cast<size_t>(g_.nodes[static_cast<size_t>(p)].parameter)];
        if (param.resident) {
          pinResident(v, *param.resident);
        } else {
          pin[static_cast<size_t>(s_.root[v])] = param.hbm_offset - s_.offset[v][0];
        }
      }
    }
    for (size_t i = 0; i < g_.results.size(); ++i) {
      size_t v = static_cast<size_t>(g_.results[i]);
      if (in_.kernel->results[i].resident) {
        pinResident(v, *in_.kernel->results[i].resident);
      } else {
        pin[static_cast<size_t>(s_.root[v])] = in_.kernel->results[i].hbm_offset - s_.offset[v][0];
      }
    }
    io_bytes_ = in_.kernel->io_bytes;
    hbm_limit_ = io_bytes_;
    for (int32_t r : s_.roots) {
      if (inHbm(r) && pin[static_cast<size_t>(r)] < 0)
        hbm_limit_ += s_.extents[static_cast<size_t>(r)][0];
    }
    // β ranges over twice the largest address a slice can have: every address fits, and a
    // require that cannot hold converges (bounds propagation may shrink a domain one value per
    // round, and Gecode cannot interrupt propagation, only search).
    int64_t largest = std::max<int64_t>(hbm_limit_, 1 << 15);
    for (const taidl::Buffer& b : isa.buffers) {
      for (int64_t a : b.access)
        largest = std::max(largest, a);
    }
    beta_bound_ = toInt(std::min<int64_t>(2 * largest, kBetaMax));
    root_var_.assign(g_.values.size(), {});
    for (int32_t r : s_.roots) {
      const taidl::Buffer& b =
          isa.buffers[static_cast<size_t>(g_.values[static_cast<size_t>(r)].buffer)];
      const std::vector<int64_t>& e = s_.extents[static_cast<size_t>(r)];
      for (size_t k = 0; k < e.size(); ++k) {
        int64_t lo = 0, hi;
        if (b.is_hbm) {
          int64_t p = pin[static_cast<size_t>(r)];
          bool undefined = isUndef(r);
          if (p >= 0) {
            lo = hi = p;
          } else {
            // Data and scratch go above the inputs and results; an undefined region (the old
            // content of what a store overwrites) may be anywhere, e.g. on a result.
            lo = undefined ? 0 : io_bytes_;
            hi = hbm_limit_ - e[k];
          }
        } else if (k < pin_on_chip[static_cast<size_t>(r)].size()) {
          lo = hi = pin_on_chip[static_cast<size_t>(r)][k];
        } else {
          hi = b.access[k] - e[k];
          if (hi < 0) {
            throw std::range_error("a value of " + std::to_string(e[k]) +
                                   " units does not fit buffer " + b.name.text + " (" +
                                   std::to_string(b.access[k]) + " units)");
          }
        }
        int id = space_->newVar(toInt(lo), toInt(hi));
        root_var_[static_cast<size_t>(r)].push_back(id);
        root_vars_flat_.push_back(id);
      }
    }
  }

  // start(value)[k] as a linear expression: its root's start plus its offset.
  LinIntExpr startOf(int32_t value, size_t k) {
    int32_t r = s_.root[static_cast<size_t>(value)];
    return LinIntExpr(space_->var(root_var_[static_cast<size_t>(r)][k])) +
           toInt(s_.offset[static_cast<size_t>(value)][k]);
  }

  LinIntExpr affine(const AffineStart& a, const std::vector<int>& beta) {
    LinIntExpr e(toInt(a.constant));
    for (auto [slot, coeff] : a.terms)
      e = e + toInt(coeff) * LinIntExpr(space_->var(beta[static_cast<size_t>(slot)]));
    return e;
  }

  void tieSlice(int32_t value, const SliceInfo& slice, const std::vector<int>& beta) {
    if (value < 0) return;
    for (size_t k = 0; k < slice.starts.size(); ++k) {
      if (slice.extents[k] != s_.extents[static_cast<size_t>(value)][k]) {
        throw std::logic_error("a value's extent differs from the slice its instruction accesses");
      }
      Gecode::rel(*space_, startOf(value, k) == affine(slice.starts[k], beta));
    }
  }

  void postCalls() {
    beta_var_.assign(g_.nodes.size(), {});
    for (size_t n = 0; n < g_.nodes.size(); ++n) {
      const isel::PiiNode& node = g_.nodes[n];
      if (node.kind != isel::PiiKind::kCall) continue;
      const CallInfo& c = (*in_.calls)[n];
      std::vector<int>& beta = beta_var_[n];
      beta.assign(c.attrs.size(), -1);
      for (size_t j = static_cast<size_t>(c.unit->num_alpha); j < c.attrs.size(); ++j) {
        beta[j] = space_->newVar(-beta_bound_, beta_bound_);
        beta_vars_flat_.push_back(beta[j]);
      }
      if (!in_.posted.empty() && !in_.posted[n]) continue;
      for (size_t i = 0; i < c.inputs.size(); ++i)
        tieSlice(node.operands[i], c.inputs[i], beta);
      for (size_t o = 0; o < c.outputs.size(); ++o)
        tieSlice(node.outputs[o], c.outputs[o], beta);
      for (size_t k = 0; k < c.sym->constraints.size(); ++k) {
        if (static_cast<int32_t>(n) == in_.focus && !in_.focus_requires[k]) continue;
        const taidl::Expr& constraint = c.sym->constraints[k];
        ExprTranslator t(*space_, constraint, c.attrs, beta);
        Gecode::rel(*space_, t.boolean(constraint.rootIndex()));
      }
    }
  }

  void postNonOverlap() {
    for (auto [u, v] : in_.interference) {
      const std::vector<int64_t>& eu = s_.extents[static_cast<size_t>(u)];
      const std::vector<int64_t>& ev = s_.extents[static_cast<size_t>(v)];
      BoolExpr apart = BoolExpr(Gecode::BoolVar(*space_, 0, 0));
      for (size_t k = 0; k < eu.size(); ++k) {
        LinIntExpr su = startOf(u, k), sv = startOf(v, k);
        apart = apart || (su + toInt(eu[k]) <= sv) || (sv + toInt(ev[k]) <= su);
      }
      Gecode::rel(*space_, apart);
    }
  }

  Placement extract(AllocSpace& sol, const std::vector<int>& branch) {
    // Variables were copied into sol.vars in `branch` order.
    std::vector<int64_t> value_of_var(space_var_count(), 0);
    for (size_t i = 0; i < branch.size(); ++i)
      value_of_var[static_cast<size_t>(branch[i])] = sol.vars[static_cast<int>(i)].val();
    Placement p;
    p.attrs.resize(g_.nodes.size());
    for (size_t n = 0; n < g_.nodes.size(); ++n) {
      if (g_.nodes[n].kind != isel::PiiKind::kCall) continue;
      p.attrs[n] = (*in_.calls)[n].attrs;
      for (size_t j = 0; j < beta_var_[n].size(); ++j) {
        if (beta_var_[n][j] >= 0)
          p.attrs[n][j] = value_of_var[static_cast<size_t>(beta_var_[n][j])];
      }
    }
    p.start.resize(g_.values.size());
    p.hbm_bytes = io_bytes_;
    for (size_t v = 0; v < g_.values.size(); ++v) {
      int32_t r = s_.root[v];
      for (size_t k = 0; k < s_.offset[v].size(); ++k) {
        p.start[v].push_back(
            value_of_var[static_cast<size_t>(root_var_[static_cast<size_t>(r)][k])] +
            s_.offset[v][k]);
      }
      if (inHbm(static_cast<int32_t>(v))) {
        p.hbm_bytes = std::max(p.hbm_bytes, p.start[v][0] + s_.extents[v][0]);
      }
    }
    return p;
  }

  size_t space_var_count() const {
    size_t n = 0;
    for (const auto& r : root_var_) {
      for (int id : r)
        n = std::max(n, static_cast<size_t>(id) + 1);
    }
    for (const auto& b : beta_var_) {
      for (int id : b)
        n = std::max(n, static_cast<size_t>(id) + 1);
    }
    return n;
  }

  const CspInput& in_;
  const isel::PiiGraph& g_;
  const isel::Storage& s_;
  AllocSpace* space_ = nullptr;
  std::vector<std::vector<int>> root_var_;
  std::vector<std::vector<int>> beta_var_;
  std::vector<int> root_vars_flat_, beta_vars_flat_;
  int64_t io_bytes_ = 0, hbm_limit_ = 0;
  int beta_bound_ = kBetaMax;
  std::string reason_;
};

}  // namespace

SolveResult solve(const CspInput& in) {
  auto start = std::chrono::steady_clock::now();
  SolveResult r = Model(in).run();
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return r;
}

namespace {

std::string callName(const taidl::Isa& isa, const CallInfo& c) {
  const std::vector<taidl::Attribute>& names =
      c.unit->is_macro ? isa.macros[static_cast<size_t>(c.unit->index)].attrs
                       : isa.instructions[static_cast<size_t>(c.unit->index)].attrs;
  std::string args;
  for (size_t j = 0; j < static_cast<size_t>(c.unit->num_alpha) && j < names.size(); ++j)
    args += (args.empty() ? "" : ", ") + names[j].name.text + "=" + std::to_string(c.attrs[j]);
  return args.empty() ? c.unit->name : c.unit->name + "(" + args + ")";
}

std::string bufferText(const taidl::Isa& isa, int32_t buffer) {
  const taidl::Buffer& b = isa.buffers[static_cast<size_t>(buffer)];
  if (b.is_hbm) return "HBM";
  int64_t units = 1;
  for (int64_t a : b.access)
    units *= a;
  return b.name.text + " (" + std::to_string(units) + " units)";
}

// `require TEXT` and, for an instruction's own require, where the spec states it.
std::string requireText(const taidl::Isa& isa, const CallInfo& c, const taidl::Expr& e) {
  std::string text = taidl::exprText(e);
  std::string out = "`require " + text + "`";
  if (c.unit->is_macro) return out;
  for (const taidl::Stmt* r : isa.instructions[static_cast<size_t>(c.unit->index)].requires_) {
    // A require `a && b` reaches the solver as its conjuncts.
    if (taidl::exprText(r->expr).find(text) != std::string::npos)
      return out + " (" + isa.locText(r->offset) + ")";
  }
  return out;
}

class Explainer {
 public:
  Explainer(const CspInput& in, const Order& order, Deadline deadline)
      : in_(in), order_(order), deadline_(deadline), g_(*in.graph) {}

  std::string run() {
    for (size_t i = 0; i < order_.size(); ++i) {
      std::optional<bool> ok = feasible(i, i + 1, -1, {});
      if (!ok) return {};
      if (!*ok) return alone(i);
    }
    // The shortest failing prefix: constraints only grow with it.
    size_t lo = 1, hi = order_.size();
    while (lo < hi) {
      size_t mid = (lo + hi) / 2;
      std::optional<bool> ok = feasible(0, mid, -1, {});
      if (!ok) return {};
      if (*ok) {
        lo = mid + 1;
      } else {
        hi = mid;
      }
    }
    return together(hi);
  }

 private:
  // Whether the calls order_[from, to) (and the non-overlap of the values they touch) can be
  // placed, with only the requires `keep` of call `focus`; nullopt if the probe was cut short.
  std::optional<bool> feasible(size_t from, size_t to, int32_t focus, std::vector<bool> keep) {
    if (deadline_.passed()) return std::nullopt;
    CspInput probe = in_;
    probe.posted.assign(g_.nodes.size(), false);
    std::vector<bool> touched(g_.values.size(), false);
    for (size_t i = from; i < to; ++i) {
      int32_t n = order_[i];
      probe.posted[static_cast<size_t>(n)] = true;
      for (int32_t v : valuesOf(n))
        touched[static_cast<size_t>(in_.storage->root[static_cast<size_t>(v)])] = true;
    }
    probe.interference.clear();
    const std::vector<int32_t>& root = in_.storage->root;
    for (auto [u, v] : in_.interference) {
      if (touched[static_cast<size_t>(root[static_cast<size_t>(u)])] &&
          touched[static_cast<size_t>(root[static_cast<size_t>(v)])])
        probe.interference.emplace_back(u, v);
    }
    probe.focus = focus;
    probe.focus_requires = std::move(keep);
    probe.deadline = Deadline::after(std::chrono::milliseconds(250)).earlier(deadline_);
    SolveResult r = solve(probe);
    if (r.status == SolveStatus::kLimit) return std::nullopt;
    return r.status == SolveStatus::kSolved;
  }

  std::vector<int32_t> valuesOf(int32_t node) const {
    const isel::PiiNode& n = g_.nodes[static_cast<size_t>(node)];
    std::vector<int32_t> out = n.operands;
    out.insert(out.end(), n.outputs.begin(), n.outputs.end());
    return out;
  }

  // The requires of call order_[last] without any of which order_[from, last] could be placed.
  std::string needed(size_t from, size_t last) {
    int32_t n = order_[last];
    const CallInfo& c = (*in_.calls)[static_cast<size_t>(n)];
    std::string out;
    for (size_t k = 0; k < c.sym->constraints.size(); ++k) {
      std::vector<bool> keep(c.sym->constraints.size(), true);
      keep[k] = false;
      std::optional<bool> ok = feasible(from, last + 1, n, keep);
      if (!ok || !*ok) continue;
      out += (out.empty() ? "" : " and ") + requireText(*in_.isa, c, c.sym->constraints[k]);
    }
    return out;
  }

  std::string slicesText(const CallInfo& c) const {
    std::vector<int32_t> buffers;
    for (const SliceInfo& s : c.inputs)
      buffers.push_back(s.buffer);
    for (const SliceInfo& s : c.outputs)
      buffers.push_back(s.buffer);
    std::sort(buffers.begin(), buffers.end());
    buffers.erase(std::unique(buffers.begin(), buffers.end()), buffers.end());
    std::string out;
    for (int32_t b : buffers)
      out += (out.empty() ? "" : ", ") + bufferText(*in_.isa, b);
    return out;
  }

  std::string alone(size_t i) {
    int32_t n = order_[i];
    const CallInfo& c = (*in_.calls)[static_cast<size_t>(n)];
    std::string why = needed(i, i);
    std::string call =
        "`" + callName(*in_.isa, c) + "` (instruction " + std::to_string(i + 1) + ")";
    if (why.empty()) return call + " cannot place its slices in " + slicesText(c);
    return call + " cannot satisfy " + why + " with its slices in " + slicesText(c);
  }

  std::string together(size_t prefix) {
    size_t last = prefix - 1;
    int32_t n = order_[last];
    const CallInfo& c = (*in_.calls)[static_cast<size_t>(n)];
    // The buffers where values of this call must stay apart from others.
    std::vector<bool> mine(g_.values.size(), false);
    for (int32_t v : valuesOf(n))
      mine[static_cast<size_t>(in_.storage->root[static_cast<size_t>(v)])] = true;
    std::vector<size_t> pairs(in_.isa->buffers.size(), 0);
    const std::vector<int32_t>& root = in_.storage->root;
    for (auto [u, v] : in_.interference) {
      if (mine[static_cast<size_t>(root[static_cast<size_t>(u)])] ||
          mine[static_cast<size_t>(root[static_cast<size_t>(v)])])
        ++pairs[static_cast<size_t>(g_.values[static_cast<size_t>(u)].buffer)];
    }
    std::string where;
    for (size_t b = 0; b < pairs.size(); ++b) {
      if (pairs[b] == 0) continue;
      where += (where.empty() ? "" : ", ") + bufferText(*in_.isa, static_cast<int32_t>(b)) + " (" +
               std::to_string(pairs[b]) + " interfering pairs)";
    }
    if (where.empty()) where = slicesText(c);
    std::string why = needed(0, last);
    std::string call =
        "`" + callName(*in_.isa, c) + "` (instruction " + std::to_string(last + 1) + ")";
    if (why.empty())
      return "no placement in " + where + " keeps the values live at " + call + " apart";
    return call + " cannot satisfy " + why + " while the values live with it in " + where +
           " stay apart";
  }

  const CspInput& in_;
  const Order& order_;
  Deadline deadline_;
  const isel::PiiGraph& g_;
};

}  // namespace

std::string explainInfeasible(const CspInput& in, const Order& order, Deadline deadline) {
  return Explainer(in, order, deadline).run();
}

}  // namespace tacit::alloc
