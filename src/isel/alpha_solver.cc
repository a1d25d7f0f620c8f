// α solving (alpha_solver.h): unification of templated dimensions and attributes with concrete
// ones, binding α that no type determines, and completing α that types fix only together.
#include "isel/alpha_solver.h"

#include "taidl/ops.h"

namespace tacit::isel {

using taidl::Expr;
using taidl::ExprError;
using taidl::OpAttr;
using taidl::RefKind;
using taidl::SymOp;

const OpAttr* findAttr(const SymOp& op, std::string_view name) {
  for (const OpAttr& a : op.attrs) {
    if (a.name.text == name) return &a;
  }
  return nullptr;
}

AlphaSolver::AlphaSolver(int32_t num_attrs, int32_t num_alpha)
    : num_alpha_(num_alpha),
      values_(static_cast<size_t>(num_attrs), 0),
      known_(static_cast<size_t>(num_attrs), 0) {}

int32_t AlphaSolver::knownCount() const {
  int32_t n = 0;
  for (int32_t s = 0; s < num_alpha_; ++s)
    n += known_[static_cast<size_t>(s)];
  return n;
}

void AlphaSolver::bind(int32_t slot, int64_t value) {
  values_[static_cast<size_t>(slot)] = value;
  known_[static_cast<size_t>(slot)] = 1;
}

AlphaSolver::Outcome AlphaSolver::tryUnify(const Expr& e, int64_t value) {
  int32_t unknown = -1, count = 0;
  for (int32_t s = 0; s < num_alpha_; ++s) {
    if (!known_[static_cast<size_t>(s)] && e.usesSlot(RefKind::kAlpha, s)) {
      unknown = s;
      ++count;
    }
  }
  taidl::EvalEnv env{values_, {}, {}};
  if (count == 0) {
    try {
      return taidl::evalExpr(e, env) == value ? Outcome::kOk : Outcome::kContradiction;
    } catch (const ExprError&) {
      return Outcome::kContradiction;
    }
  }
  if (count > 1) return Outcome::kDeferred;
  // Linear in the one unknown? Sample three points, then solve and check exactly.
  int64_t f[3];
  for (int x = 0; x < 3; ++x) {
    values_[static_cast<size_t>(unknown)] =
        x + 1;  // avoid 0: divisions by the attribute are common
    try {
      f[x] = taidl::evalExpr(e, env);
    } catch (const ExprError&) {
      values_[static_cast<size_t>(unknown)] = 0;
      return Outcome::kDeferred;
    }
  }
  values_[static_cast<size_t>(unknown)] = 0;
  int64_t a = f[1] - f[0];
  if (a == 0 || f[2] - f[1] != a) return Outcome::kDeferred;
  int64_t num = value - f[0];
  if (num % a != 0) return Outcome::kContradiction;
  int64_t x = num / a + 1;
  values_[static_cast<size_t>(unknown)] = x;
  try {
    if (taidl::evalExpr(e, env) != value) {
      values_[static_cast<size_t>(unknown)] = 0;
      return Outcome::kContradiction;
    }
  } catch (const ExprError&) {
    values_[static_cast<size_t>(unknown)] = 0;
    return Outcome::kContradiction;
  }
  known_[static_cast<size_t>(unknown)] = 1;
  return Outcome::kOk;
}

bool AlphaSolver::unify(const Expr& e, int64_t value) {
  Outcome o = tryUnify(e, value);
  if (o == Outcome::kContradiction) return false;
  if (o == Outcome::kDeferred) pending_.emplace_back(e, value);
  return o == Outcome::kDeferred || settle();
}

bool AlphaSolver::settle() {
  bool progress = true;
  while (progress && !pending_.empty()) {
    progress = false;
    for (size_t i = 0; i < pending_.size();) {
      Outcome o = tryUnify(pending_[i].first, pending_[i].second);
      if (o == Outcome::kContradiction) return false;
      if (o == Outcome::kOk) {
        pending_.erase(pending_.begin() + static_cast<std::ptrdiff_t>(i));
        progress = true;
      } else {
        ++i;
      }
    }
  }
  return true;
}

std::optional<int32_t> AlphaSolver::singleUnknown() const {
  if (knownCount() != num_alpha_ - 1) return std::nullopt;
  for (int32_t slot = 0; slot < num_alpha_; ++slot) {
    if (!known(slot)) return slot;
  }
  return std::nullopt;
}

bool unifyType(const taidl::TypeExpr& t, const hlo::Shape& s, AlphaSolver& a) {
  if (t.dtype != s.elementType() || static_cast<int64_t>(t.dims.size()) != s.rank()) return false;
  for (size_t i = 0; i < t.dims.size(); ++i) {
    if (!a.unify(t.dims[i], s.dim(static_cast<int64_t>(i)))) return false;
  }
  return true;
}

bool unifyList(const OpAttr* attr, const std::vector<int64_t>& values, AlphaSolver& a) {
  if (attr == nullptr) return values.empty();
  if (attr->list.size() != values.size()) return false;
  for (size_t i = 0; i < values.size(); ++i) {
    if (!a.unify(attr->list[i], values[i])) return false;
  }
  return true;
}

// Unifies the attributes that can carry α (everything else is compared in verify()).
bool unifyAttrs(const SymOp& op, const OpDesc& d, AlphaSolver& a) {
  const hlo::HloAttributes& c = d.attrs;
  if (const OpAttr* dims = findAttr(op, "dimensions");
      dims && c.dimensions && !unifyList(dims, *c.dimensions, a)) {
    return false;
  }
  if (c.dot_dims) {
    if (!unifyList(findAttr(op, "lhs_batch_dims"), c.dot_dims->lhs_batch, a) ||
        !unifyList(findAttr(op, "lhs_contracting_dims"), c.dot_dims->lhs_contracting, a) ||
        !unifyList(findAttr(op, "rhs_batch_dims"), c.dot_dims->rhs_batch, a) ||
        !unifyList(findAttr(op, "rhs_contracting_dims"), c.dot_dims->rhs_contracting, a)) {
      return false;
    }
  }
  if (const OpAttr* s = findAttr(op, "slice"); s && c.slice) {
    if (s->ranges.size() != c.slice->size()) return false;
    for (size_t i = 0; i < s->ranges.size(); ++i) {
      const taidl::RangeExpr& r = s->ranges[i];
      if (!a.unify(r.start, (*c.slice)[i].start) || !a.unify(r.limit, (*c.slice)[i].limit))
        return false;
      if (!r.stride.empty() && !a.unify(r.stride, (*c.slice)[i].stride)) return false;
    }
  }
  if (const OpAttr* p = findAttr(op, "padding"); p && c.padding) {
    if (p->ranges.size() != c.padding->size()) return false;
    for (size_t i = 0; i < p->ranges.size(); ++i) {
      const taidl::RangeExpr& r = p->ranges[i];
      if (!a.unify(r.start, (*c.padding)[i].lo) || !a.unify(r.limit, (*c.padding)[i].hi))
        return false;
      if (!r.stride.empty() && !a.unify(r.stride, (*c.padding)[i].interior)) return false;
    }
  }
  if (const OpAttr* io = findAttr(op, "iota_dimension");
      io && c.iota_dimension && !a.unify(io->expr, *c.iota_dimension)) {
    return false;
  }
  return true;
}

namespace {

constexpr int64_t kMaxAlphaScan = 64;

bool satisfiesKnown(const UnitPattern& p, const AlphaSolver& a, int32_t slot) {
  for (const Expr& c : p.sym->constraints) {
    if (c.uses(RefKind::kBeta)) continue;
    bool decidable = true;
    for (const taidl::ExprNode& n : c.nodes()) {
      if (n.op == taidl::ExprOp::kRef && n.ref == RefKind::kAlpha && n.slot != slot &&
          !a.known(n.slot))
        decidable = false;
    }
    if (!decidable) continue;
    try {
      if (taidl::evalExpr(c, a.env()) == 0) return false;
    } catch (const ExprError&) {
      return false;
    }
  }
  return true;
}

}  // namespace

void conjuncts(const Expr& e, std::vector<Expr>& out) {
  if (e.root().op != taidl::ExprOp::kAnd) {
    out.push_back(e);
    return;
  }
  conjuncts(e.subtree(e.root().a), out);
  conjuncts(e.subtree(e.root().b), out);
}

bool bindUndetermined(const UnitPattern& p, const Unit& u, AlphaSolver& a) {
  std::vector<Expr> path;
  for (const Expr& c : p.sym->path)
    conjuncts(c, path);
  for (const Expr& c : path) {
    if (c.root().op != taidl::ExprOp::kEq) continue;
    Expr l = c.subtree(c.root().a), r = c.subtree(c.root().b);
    if (auto v = r.constantValue()) {
      a.unify(l, *v);
    } else if (auto w = l.constantValue()) {
      a.unify(r, *w);
    } else {
      a.unify(Expr::binary(taidl::ExprOp::kSub, l, r), 0);  // settles once one side is known
    }
  }
  if (!a.settle()) return false;
  for (int32_t slot = 0; slot < u.num_alpha; ++slot) {
    const taidl::AlphaRange& range = (*u.ranges)[static_cast<size_t>(slot)];
    if (a.known(slot) || !range.bounded() || range.range.hi - range.range.lo >= kMaxAlphaScan)
      continue;
    std::optional<int64_t> only;
    int solutions = 0;
    for (int64_t v = range.range.lo; v <= range.range.hi && solutions < 2; ++v) {
      AlphaSolver trial = a;
      trial.bind(slot, v);
      if (satisfiesKnown(p, trial, slot)) {
        only = v;
        ++solutions;
      }
    }
    if (solutions == 1) a.bind(slot, *only);
  }
  if (!a.settle()) return false;
  // An α the data does not use is the program's free choice: the lowest value the known
  // constraints allow (verify() checks them all once every α is known).
  for (int32_t slot = 0; slot < u.num_alpha; ++slot) {
    const taidl::AlphaRange& range = (*u.ranges)[static_cast<size_t>(slot)];
    if (a.known(slot) || !range.bounded() || static_cast<size_t>(slot) >= p.data_alpha.size() ||
        p.data_alpha[static_cast<size_t>(slot)])
      continue;
    for (int64_t v = range.range.lo; v <= range.range.hi && v < range.range.lo + kMaxAlphaScan;
         ++v) {
      AlphaSolver trial = a;
      trial.bind(slot, v);
      if (trial.settle() && satisfiesKnown(p, trial, slot)) {
        a = std::move(trial);
        break;
      }
    }
  }
  return a.settle();
}

// α the types leave open together (Gemmini `add` reads `s8[rows * cols]`: the product fixes
// neither factor): the first open slot with a bounded range takes each value, largest first, for
// which the deferred equations settle and the constraints hold, and the rest is completed the same
// way; at most `limit` completions. verify() (and, for movement, the view comparison) decides
// whether a completion is a match.
constexpr int64_t kMaxAlphaEnumeration = 1 << 16;
// Trial bindings per completions() call: nested open slots (an immediate of 65536 values under
// an operator code) would otherwise multiply their ranges.
constexpr int64_t kMaxAlphaTrials = 1 << 12;

void completeAlpha(const UnitPattern& p, const Unit& u, const AlphaSolver& a, size_t limit,
                   std::vector<AlphaSolver>& out, int64_t& trials) {
  if (out.size() >= limit || trials > kMaxAlphaTrials) return;
  if (a.complete()) {
    out.push_back(a);
    return;
  }
  // The open slot of the narrowest range is enumerated: once it is known, the deferred equations
  // fix the wide ones (`x_size + x_pad_0 + x_pad_1`: 16 pad values, not 65536 sizes).
  int32_t best = -1;
  for (int32_t slot = 0; slot < u.num_alpha; ++slot) {
    const taidl::AlphaRange& range = (*u.ranges)[static_cast<size_t>(slot)];
    if (a.known(slot)) continue;
    if (!range.bounded() || range.range.hi - range.range.lo >= kMaxAlphaEnumeration) continue;
    const taidl::AlphaRange* b = best < 0 ? nullptr : &(*u.ranges)[static_cast<size_t>(best)];
    if (!b || range.range.hi - range.range.lo < b->range.hi - b->range.lo) best = slot;
  }
  if (best < 0) return;
  const taidl::AlphaRange& range = (*u.ranges)[static_cast<size_t>(best)];
  for (int64_t v = range.range.hi;
       v >= range.range.lo && out.size() < limit && ++trials <= kMaxAlphaTrials; --v) {
    AlphaSolver trial = a;
    trial.bind(best, v);
    if (trial.settle() && satisfiesKnown(p, trial, best))
      completeAlpha(p, u, trial, limit, out, trials);
  }
}

std::vector<AlphaSolver> completions(const UnitPattern& p, const Unit& u, const AlphaSolver& a,
                                     size_t limit) {
  std::vector<AlphaSolver> out;
  int64_t trials = 0;
  completeAlpha(p, u, a, limit, out, trials);
  return out;
}

}  // namespace tacit::isel
