#include "isel/isa_match.h"
#include "isel/isa_match_state.h"

#include <map>
#include <numeric>
#include <stdexcept>

#include "hlo/builder.h"
#include "isel/passes.h"
#include "isel/pattern_view.h"
#include "isel/view_index.h"
#include "taidl/ops.h"

namespace tacit::isel {
namespace {

using hlo::HloOpcode;
using taidl::Expr;
using taidl::ExprError;
using taidl::OpAttr;
using taidl::RefKind;
using taidl::SymOp;

constexpr size_t kMaxFailuresPerPattern = 4;

bool isCommutative(HloOpcode op) {
  switch (op) {
    case HloOpcode::kAdd:
    case HloOpcode::kMultiply:
    case HloOpcode::kMaximum:
    case HloOpcode::kMinimum:
    case HloOpcode::kAnd:
    case HloOpcode::kOr:
    case HloOpcode::kXor:
      return true;
    default:
      return false;
  }
}

// Operators that are the identity for suitable attributes (and may be skipped by a match).
bool mayBeIdentity(HloOpcode op) {
  switch (op) {
    case HloOpcode::kPad:
    case HloOpcode::kSlice:
    case HloOpcode::kTranspose:
    case HloOpcode::kBroadcast:
    case HloOpcode::kConvert:
    case HloOpcode::kReshape:
    case HloOpcode::kCopy:
    case HloOpcode::kBitcastConvert:
    case HloOpcode::kReverse:
      return true;
    default:
      return false;
  }
}

bool isIdentityOp(HloOpcode op, const hlo::Shape& operand, const hlo::Shape& result,
                  const hlo::HloAttributes& a) {
  if (!operand.compatible(result)) return false;
  switch (op) {
    case HloOpcode::kPad:
      for (const hlo::PadDim& d : *a.padding) {
        if (d.lo != 0 || d.hi != 0 || d.interior != 0) return false;
      }
      return true;
    case HloOpcode::kSlice:
      for (size_t i = 0; i < a.slice->size(); ++i) {
        const hlo::SliceDim& s = (*a.slice)[i];
        if (s.start != 0 || s.stride != 1 || s.limit != operand.dim(static_cast<int64_t>(i)))
          return false;
      }
      return true;
    case HloOpcode::kTranspose:
    case HloOpcode::kBroadcast:
      for (size_t i = 0; i < a.dimensions->size(); ++i) {
        if ((*a.dimensions)[i] != static_cast<int64_t>(i)) return false;
      }
      return true;
    case HloOpcode::kReverse:
      for (int64_t d : *a.dimensions) {
        if (operand.dim(d) != 1) return false;
      }
      return true;
    default:
      return true;  // convert/reshape/copy/bitcast-convert between equal types
  }
}

// The literal value of a constant that does not depend on α, if it is a scalar splat.
std::optional<double> splatValue(const SymOp& op) {
  if (op.opcode != HloOpcode::kConstant) return std::nullopt;
  if (op.literal.kind == taidl::LiteralValue::Kind::kFloat) return op.literal.number;
  if (op.literal.kind == taidl::LiteralValue::Kind::kExpr) {
    if (auto v = op.literal.expr.constantValue()) return static_cast<double>(*v);
  }
  return std::nullopt;
}

// The identity element of a binary operator (x op e == x), if it has one usable on the right.
std::optional<double> identityElement(HloOpcode op) {
  switch (op) {
    case HloOpcode::kAdd:
    case HloOpcode::kSubtract:
    case HloOpcode::kOr:
    case HloOpcode::kXor:
      return 0.0;
    case HloOpcode::kMultiply:
      return 1.0;
    default:
      return std::nullopt;
  }
}

std::vector<int64_t> inversePerm(const std::vector<int64_t>& perm) {
  std::vector<int64_t> inv(perm.size());
  for (size_t i = 0; i < perm.size(); ++i)
    inv[static_cast<size_t>(perm[i])] = static_cast<int64_t>(i);
  return inv;
}

const OpAttr* findAttr(const SymOp& op, std::string_view name) {
  for (const OpAttr& a : op.attrs) {
    if (a.name.text == name) return &a;
  }
  return nullptr;
}

hlo::ComparisonType defaultComparison(hlo::PrimitiveType t) {
  if (hlo::isFloat(t)) return hlo::ComparisonType::kFloat;
  if (hlo::isSignedInteger(t)) return hlo::ComparisonType::kSigned;
  return hlo::ComparisonType::kUnsigned;
}

}  // namespace

// ---- AlphaSolver ----------------------------------------------------------------------------

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

// ---- matching -------------------------------------------------------------------------------

struct IsaMatcher::Accepted {
  int32_t pattern;
  State state;
  uint32_t record = kNoRecord;  // in records_: its (pattern, class) pair (not a strided load)
  bool replayed = false;        // the state is the previous run's (the pair did not change)
  static constexpr uint32_t kNoRecord = ~uint32_t{0};
};

IsaMatcher::IsaMatcher(const taidl::Isa& isa, const UnitSet& units, IrBuilder& b)
    : isa_(isa), units_(units), b_(b) {}

IsaMatcher::~IsaMatcher() = default;

void IsaMatcher::fail(int32_t pattern, ClassId c, std::string_view reason) {
  uint64_t key = (static_cast<uint64_t>(static_cast<uint32_t>(pattern)) << 32) | c.value;
  uint32_t& count = failure_counts_[key];
  if (count >= kMaxFailuresPerPattern) return;
  ++count;
  failures_.push_back({pattern, c, std::string(reason)});
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

bool IsaMatcher::isLeaf(const UnitPattern& p, int32_t node) {
  if (p.nodes[static_cast<size_t>(node)].input >= 0) return true;
  for (const UnitPattern::InputChain& in : p.inputs) {
    if (in.leaf == node) return true;
  }
  return false;
}

void IsaMatcher::matchNode(const UnitPattern& p, int32_t node, ClassId c, State& s,
                           const std::function<void(State&)>& cont) {
  c = b_.egraph().find(c);
  const size_t n = static_cast<size_t>(node);
  if (s.cls[n].valid()) {
    if (b_.egraph().find(s.cls[n]) == c) cont(s);
    return;
  }
  const PatternNode& pn = p.nodes[n];
  const SymOp& op = p.sym->ops[static_cast<size_t>(pn.op)];
  const hlo::Shape& shape = b_.shape(c);
  bool is_leaf = pn.input >= 0;
  for (const UnitPattern::InputChain& in : p.inputs)
    is_leaf |= in.leaf == node;
  if (is_leaf) {
    State next = s;
    if (!unifyType(op.type, shape, next.alpha)) return;
    next.cls[n] = c;
    cont(next);
    return;
  }
  if (op.opcode == HloOpcode::kConstant) {
    const hlo::Literal* lit = literalOf(b_.egraph(), b_.ir(), c);
    if (lit == nullptr) return;
    State next = s;
    if (!unifyType(op.type, shape, next.alpha)) return;
    if (op.literal.kind == taidl::LiteralValue::Kind::kExpr &&
        hlo::isInteger(shape.elementType()) && lit->elementCount() > 0 &&
        !next.alpha.unify(op.literal.expr, lit->getInt64(0))) {
      return;
    }
    next.cls[n] = c;
    cont(next);
    return;
  }
  // Structural matches.
  for (NodeId id : b_.egraph().nodes(c)) {
    egraph::ENode e = b_.egraph().node(id);
    if (b_.ir().opcodeOf(e.op()) != op.opcode || e.arity() != pn.children.size()) continue;
    State next = s;
    const OpDesc& d = b_.ir().opDesc(e.attr());
    if (!unifyType(op.type, d.shape, next.alpha) || !unifyAttrs(op, d, next.alpha)) continue;
    next.cls[n] = c;
    next.enode[n] = id;
    std::vector<ClassId> kids(e.children().begin(), e.children().end());
    matchChildren(p, node, kids, 0, next, cont);
    if (isCommutative(op.opcode) && kids.size() == 2) {
      State swapped = s;
      if (!unifyType(op.type, d.shape, swapped.alpha)) continue;
      swapped.cls[n] = c;
      swapped.enode[n] = id;
      std::swap(kids[0], kids[1]);
      matchChildren(p, node, kids, 0, swapped, cont);
    }
  }
  // The operator as an identity: its first operand is this very class.
  if (mayBeIdentity(op.opcode) && !pn.children.empty()) {
    State next = s;
    if (unifyType(op.type, shape, next.alpha)) {
      next.cls[n] = c;
      next.skipped[n] = kIdentityOp;
      matchNode(p, pn.children[0], c, next, cont);
    }
  }
  matchIdentityOperand(p, node, c, s, cont);
}

// `x op e` where e is op's identity element, and integer `dot(x, I)` / `dot(I, x)`: the class
// matches the operand x itself (for the dot, phase 1 will load an identity matrix as I).
void IsaMatcher::matchIdentityOperand(const UnitPattern& p, int32_t node, ClassId c, State& s,
                                      const std::function<void(State&)>& cont) {
  const size_t n = static_cast<size_t>(node);
  const PatternNode& pn = p.nodes[n];
  const SymOp& op = p.sym->ops[static_cast<size_t>(pn.op)];
  if (op.opcode == HloOpcode::kDynamicUpdateSlice) {
    matchOverwrite(p, node, c, s, cont);
    return;
  }
  if (pn.children.size() != 2) return;
  auto child_op = [&](int32_t k) -> const SymOp& {
    return p.sym->ops[static_cast<size_t>(
        p.nodes[static_cast<size_t>(pn.children[static_cast<size_t>(k)])].op)];
  };
  if (auto e = identityElement(op.opcode)) {
    for (int32_t k : {1, 0}) {
      if (k == 0 && op.opcode == HloOpcode::kSubtract) continue;
      auto v = splatValue(child_op(k));
      if (!v || *v != *e) continue;
      State next = s;
      if (!unifyType(op.type, b_.shape(c), next.alpha)) continue;
      next.cls[n] = c;
      next.skipped[n] = kIdentityElement;
      matchNode(p, pn.children[static_cast<size_t>(1 - k)], c, next, cont);
    }
  }
  // `x op in` where the input leaf `in` is not in the kernel: phase 1 supplies the identity
  // element (integers only: for floats `x + 0` is not x when x is -0).
  if (auto e = identityElement(op.opcode); e && hlo::isInteger(op.type.dtype)) {
    for (int32_t k : {1, 0}) {
      if (k == 0 && op.opcode == HloOpcode::kSubtract) continue;
      int32_t leaf = pn.children[static_cast<size_t>(k)];
      if (!isLeaf(p, leaf) || s.cls[static_cast<size_t>(leaf)].valid()) continue;
      State next = s;
      if (!unifyType(op.type, b_.shape(c), next.alpha)) continue;
      next.cls[n] = c;
      next.skipped[n] = kIdentityElement;
      next.identity_leaves.emplace_back(leaf, static_cast<int64_t>(*e));
      matchNode(p, pn.children[static_cast<size_t>(1 - k)], c, next, cont);
    }
  }
  if (op.opcode == HloOpcode::kDot && hlo::isInteger(op.type.dtype)) {
    for (int32_t k : {1, 0}) {
      // The identity operand must be an input (possibly widened by converts): phase 1 supplies it.
      int32_t leaf = pn.children[static_cast<size_t>(k)];
      while (p.nodes[static_cast<size_t>(leaf)].input < 0 && !isLeaf(p, leaf) &&
             p.sym->ops[static_cast<size_t>(p.nodes[static_cast<size_t>(leaf)].op)].opcode ==
                 HloOpcode::kConvert) {
        leaf = p.nodes[static_cast<size_t>(leaf)].children[0];
      }
      if (!isLeaf(p, leaf) || s.cls[static_cast<size_t>(leaf)].valid()) continue;
      State next = s;
      if (!unifyType(op.type, b_.shape(c), next.alpha)) continue;
      next.cls[n] = c;
      next.skipped[n] = kIdentityDot;
      next.identity_dots.emplace_back(node, k);
      matchNode(p, pn.children[static_cast<size_t>(1 - k)], c, next, cont);
    }
  }
}

void IsaMatcher::matchChildren(const UnitPattern& p, int32_t node, const std::vector<ClassId>& kids,
                               size_t i, State& s, const std::function<void(State&)>& cont) {
  const PatternNode& pn = p.nodes[static_cast<size_t>(node)];
  if (i == pn.children.size()) {
    cont(s);
    return;
  }
  matchNode(p, pn.children[i], kids[i], s,
            [&](State& next) { matchChildren(p, node, kids, i + 1, next, cont); });
}

// dynamic-update-slice(x, u, 0...) where u covers x is u; x (the old content of a region the
// unit overwrites) becomes an undefined operand.
void IsaMatcher::matchOverwrite(const UnitPattern& p, int32_t node, ClassId c, State& s,
                                const std::function<void(State&)>& cont) {
  const size_t n = static_cast<size_t>(node);
  const PatternNode& pn = p.nodes[n];
  const SymOp& op = p.sym->ops[static_cast<size_t>(pn.op)];
  auto child_op = [&](size_t k) -> const SymOp& {
    return p.sym->ops[static_cast<size_t>(p.nodes[static_cast<size_t>(pn.children[k])].op)];
  };
  for (size_t k = 2; k < pn.children.size(); ++k) {
    auto v = splatValue(child_op(k));
    if (!v || *v != 0) return;
  }
  int32_t leaf = pn.children[0];
  while (!isLeaf(p, leaf))
    return;  // the old content must come straight from an input chain
  const SymOp& x = child_op(0);
  const SymOp& u = child_op(1);
  if (x.type.dims.size() != u.type.dims.size()) return;
  State next = s;
  if (!unifyType(op.type, b_.shape(c), next.alpha)) return;
  for (size_t i = 0; i < x.type.dims.size(); ++i) {
    if (!next.alpha.unify(Expr::binary(taidl::ExprOp::kSub, x.type.dims[i], u.type.dims[i]), 0))
      return;
  }
  next.cls[n] = c;
  next.skipped[n] = kOverwrite;
  next.undef_leaves.push_back(leaf);
  matchNode(p, pn.children[1], c, next, cont);
}

// Pads and slices in the cut chains are used only as identities: their attributes give α.
bool IsaMatcher::unifyIdentityLinks(const UnitPattern& p, State& s) {
  auto link = [&](int32_t node) -> bool {
    const PatternNode& pn = p.nodes[static_cast<size_t>(node)];
    if (pn.input >= 0) return true;
    const SymOp& op = p.sym->ops[static_cast<size_t>(pn.op)];
    if (!isIdentityLink(op.opcode)) return true;
    const SymOp& operand =
        p.sym->ops[static_cast<size_t>(p.nodes[static_cast<size_t>(pn.children[0])].op)];
    const OpAttr* a = findAttr(op, op.opcode == HloOpcode::kPad ? "padding" : "slice");
    if (a == nullptr) return false;
    for (size_t i = 0; i < a->ranges.size(); ++i) {
      const taidl::RangeExpr& r = a->ranges[i];
      if (!s.alpha.unify(r.start, 0)) return false;
      if (op.opcode == HloOpcode::kPad) {
        if (!s.alpha.unify(r.limit, 0) || (!r.stride.empty() && !s.alpha.unify(r.stride, 0)))
          return false;
      } else {
        if (!r.stride.empty() && !s.alpha.unify(r.stride, 1)) return false;
        if (!s.alpha.unify(Expr::binary(taidl::ExprOp::kSub, r.limit, operand.type.dims[i]), 0))
          return false;
      }
    }
    return true;
  };
  for (int32_t n : p.out_chain) {
    if (!link(n)) return false;
  }
  for (const UnitPattern::InputChain& in : p.inputs) {
    for (int32_t n : in.chain) {
      if (!link(n)) return false;
    }
  }
  return s.alpha.settle();
}

// ---- verification ---------------------------------------------------------------------------

// Checks that pattern node `node`, skipped by the match, is an identity for the solved α.
std::string IsaMatcher::checkIdentity(const UnitPattern& p, int32_t node, const State& s,
                                      const taidl::EvalEnv& env,
                                      const taidl::ReducerFn& reducer) const {
  const PatternNode& pn = p.nodes[static_cast<size_t>(node)];
  const SymOp& op = p.sym->ops[static_cast<size_t>(pn.op)];
  hlo::Shape shape = taidl::evalType(op.type, env);
  hlo::HloAttributes attrs =
      taidl::evalOpAttrs(op.opcode, op.attrs, env, hlo::PrimitiveType::kInvalid, reducer);
  auto operand_type = [&](size_t k) {
    return taidl::evalType(
        p.sym->ops[static_cast<size_t>(p.nodes[static_cast<size_t>(pn.children[k])].op)].type, env);
  };
  if (s.skipped[static_cast<size_t>(node)] != kIdentityDot) {
    if (!isIdentityOp(op.opcode, operand_type(0), shape, attrs)) {
      return std::string(hlo::opcodeName(op.opcode)) + " is not an identity for this α";
    }
    return {};
  }
  // dot(x, I) with I square over x's last dimension, or dot(I, x) over x's first.
  int32_t k = -1;
  for (auto [dot, which] : s.identity_dots) {
    if (dot == node) k = which;
  }
  const hlo::DotDims dd = attrs.dot_dims.value_or(hlo::DotDims{});
  hlo::Shape eye = operand_type(static_cast<size_t>(k));
  hlo::Shape x = operand_type(static_cast<size_t>(1 - k));
  bool plain = dd.lhs_batch.empty() && dd.rhs_batch.empty() &&
               dd.lhs_contracting == std::vector<int64_t>{1} &&
               dd.rhs_contracting == std::vector<int64_t>{0} && eye.rank() == 2 && x.rank() == 2 &&
               eye.dim(0) == eye.dim(1) && hlo::isInteger(shape.elementType()) &&
               x.compatible(shape);
  if (!plain) return "dot is not a product with an identity matrix for this α";
  return {};
}

std::string IsaMatcher::verify(const UnitPattern& p, const State& s) const {
  if (!s.alpha.complete()) return "α could not be determined from the matched types";
  taidl::EvalEnv env = s.alpha.env();
  hlo::HloModule scratch("reducers");
  taidl::ReducerFn reducer = [&](HloOpcode op, hlo::PrimitiveType t) {
    return hlo::addScalarReducer(scratch, op, t);
  };
  try {
    for (const Expr& c : p.sym->constraints) {
      if (c.uses(RefKind::kBeta)) continue;
      if (taidl::evalExpr(c, env) == 0)
        return "constraint `" + taidl::exprText(c) + "` does not hold";
    }
    for (size_t n = 0; n < p.nodes.size(); ++n) {
      if (!s.cls[n].valid()) continue;
      const PatternNode& pn = p.nodes[n];
      const SymOp& op = p.sym->ops[static_cast<size_t>(pn.op)];
      hlo::Shape shape = taidl::evalType(op.type, env);
      const hlo::Shape& actual = b_.shape(s.cls[n]);
      if (!shape.compatible(actual))
        return "type " + shape.str() + " expected, found " + actual.str();
      if (pn.input >= 0 || !s.enode[n].valid()) {
        if (op.opcode == HloOpcode::kConstant) {
          hlo::Literal want = taidl::evalLiteral(op.literal, shape, env);
          const hlo::Literal* have = literalOf(b_.egraph(), b_.ir(), s.cls[n]);
          if (have == nullptr || !want.bitwiseEqual(*have)) return "constant differs";
        }
        if (s.skipped[n] == kIdentityOp || s.skipped[n] == kIdentityDot) {
          std::string why = checkIdentity(p, static_cast<int32_t>(n), s, env, reducer);
          if (!why.empty()) return why;
        }
        continue;
      }
      const OpDesc& d = b_.ir().opDesc(b_.egraph().node(s.enode[n]).attr());
      hlo::PrimitiveType reduce_type = hlo::PrimitiveType::kInvalid;
      if (op.opcode == HloOpcode::kReduce)
        reduce_type = b_.shape(b_.egraph().node(s.enode[n]).child(1)).elementType();
      hlo::HloAttributes a = taidl::evalOpAttrs(op.opcode, op.attrs, env, reduce_type, reducer);
      if (a.dimensions != d.attrs.dimensions)
        return std::string(hlo::opcodeName(op.opcode)) + " dimensions differ";
      if (a.slice != d.attrs.slice) return "slice bounds differ";
      if (a.padding != d.attrs.padding) return "padding differs";
      if (a.iota_dimension != d.attrs.iota_dimension) return "iota dimension differs";
      if (op.opcode == HloOpcode::kDot &&
          a.dot_dims.value_or(hlo::DotDims{}) != d.attrs.dot_dims.value_or(hlo::DotDims{})) {
        return "dot dimension numbers differ";
      }
      if (op.opcode == HloOpcode::kCompare) {
        hlo::PrimitiveType t = b_.shape(b_.egraph().node(s.enode[n]).child(0)).elementType();
        if (a.direction != d.attrs.direction) return "comparison direction differs";
        if (a.comparison_type.value_or(defaultComparison(t)) !=
            d.attrs.comparison_type.value_or(defaultComparison(t))) {
          return "comparison type differs";
        }
      }
      if (op.opcode == HloOpcode::kReduce) {
        const hlo::HloComputation* r = a.called.empty() ? nullptr : a.called[0].computations[0];
        if (r == nullptr || r->root()->opcode() != reducerOpcode(d.reducer))
          return "reducer differs";
      }
    }
    // Pads and slices inside the cut chains are only used where they are identities.
    auto check_links = [&](const std::vector<int32_t>& chain) -> std::string {
      for (int32_t link : chain) {
        const PatternNode& ln = p.nodes[static_cast<size_t>(link)];
        HloOpcode opc = p.sym->ops[static_cast<size_t>(ln.op)].opcode;
        if (ln.input < 0 && isIdentityLink(opc)) {
          std::string why = checkIdentity(p, link, s, env, reducer);
          if (!why.empty()) return why;
        }
      }
      return {};
    };
    if (s.views_checked) return {};
    if (std::string why = check_links(p.out_chain); !why.empty()) return why;
    for (const UnitPattern::InputChain& in : p.inputs) {
      if (std::string why = check_links(in.chain); !why.empty()) return why;
    }
  } catch (const ExprError& e) {
    return "α makes the semantics invalid: " + e.message;
  } catch (const DiagnosticError& e) {
    return "α makes the semantics invalid: " + e.diagnostic().message;
  }
  return {};
}

// ---- construction ---------------------------------------------------------------------------

ClassId IsaMatcher::invertChain(const UnitPattern& p, const std::vector<int32_t>& chain,
                                ClassId top, const State& s) {
  taidl::EvalEnv env = s.alpha.env();
  ClassId cur = top;
  hlo::HloModule scratch("reducers");
  taidl::ReducerFn reducer = [&](HloOpcode op, hlo::PrimitiveType t) {
    return hlo::addScalarReducer(scratch, op, t);
  };
  for (size_t k = 0; k + 1 < chain.size(); ++k) {
    const SymOp& q = p.sym->ops[static_cast<size_t>(p.nodes[static_cast<size_t>(chain[k])].op)];
    const SymOp& r = p.sym->ops[static_cast<size_t>(p.nodes[static_cast<size_t>(chain[k + 1])].op)];
    hlo::Shape below = taidl::evalType(r.type, env);
    switch (q.opcode) {
      case HloOpcode::kReshape:
        cur = b_.reshape(cur, below.dims());
        break;
      case HloOpcode::kBitcastConvert:
        cur = b_.bitcastConvert(cur, below);
        break;
      case HloOpcode::kTranspose:
        cur = b_.transpose(
            cur, inversePerm(*taidl::evalOpAttrs(q.opcode, q.attrs, env, {}, reducer).dimensions));
        break;
      case HloOpcode::kReverse: {
        OpDesc d;
        d.opcode = HloOpcode::kReverse;
        d.attrs.dimensions = taidl::evalOpAttrs(q.opcode, q.attrs, env, {}, reducer).dimensions;
        ClassId kids[] = {cur};
        cur = b_.add(std::move(d), kids);
        break;
      }
      default:  // copy: the identity
        break;
    }
  }
  return cur;
}

// The classes of the unit's inputs for a match: identity matrices and splats the match assumed
// become constants, overwritten regions undefined values, the others their inverted chains.
std::vector<ClassId> IsaMatcher::constructInputs(const UnitPattern& p, State& s) {
  taidl::EvalEnv env = s.alpha.env();
  // Identity matrices the match assumed: they become constants (loaded like any other operand).
  for (auto [dot, k] : s.identity_dots) {
    int32_t leaf = p.nodes[static_cast<size_t>(dot)].children[static_cast<size_t>(k)];
    while (!isLeaf(p, leaf))
      leaf = p.nodes[static_cast<size_t>(leaf)].children[0];
    hlo::Literal eye(taidl::evalType(
        p.sym->ops[static_cast<size_t>(p.nodes[static_cast<size_t>(leaf)].op)].type, env));
    int64_t n = eye.shape().dim(0);
    for (int64_t i = 0; i < n; ++i)
      eye.setInt64(i * n + i, 1);
    s.cls[static_cast<size_t>(leaf)] = b_.constant(std::move(eye));
  }
  for (auto [leaf, value] : s.identity_leaves) {
    hlo::Literal splat(taidl::evalType(
        p.sym->ops[static_cast<size_t>(p.nodes[static_cast<size_t>(leaf)].op)].type, env));
    for (int64_t i = 0; value != 0 && i < splat.elementCount(); ++i)
      splat.setInt64(i, value);
    s.cls[static_cast<size_t>(leaf)] = b_.constant(std::move(splat));
  }
  std::vector<ClassId> inputs;
  for (size_t i = 0; i < p.inputs.size(); ++i) {
    const UnitPattern::InputChain& in = p.inputs[i];
    bool undefined =
        std::find(s.undef_leaves.begin(), s.undef_leaves.end(), in.leaf) != s.undef_leaves.end();
    if (undefined) {
      inputs.push_back(b_.undef(taidl::evalType(p.sym->inputs[i].type, env)));
    } else {
      inputs.push_back(invertChain(p, in.chain, s.cls[static_cast<size_t>(in.leaf)], s));
    }
  }
  return inputs;
}

ClassId IsaMatcher::construct(const UnitPattern& p, const State& matched) {
  State s = matched;
  taidl::EvalEnv env = s.alpha.env();
  hlo::HloModule scratch("reducers");
  taidl::ReducerFn reducer = [&](HloOpcode op, hlo::PrimitiveType t) {
    return hlo::addScalarReducer(scratch, op, t);
  };
  std::vector<ClassId> inputs = constructInputs(p, s);
  ClassId result = s.cls[static_cast<size_t>(p.skeleton_root)];
  for (auto it = p.out_chain.rbegin(); it != p.out_chain.rend(); ++it) {
    const SymOp& q = p.sym->ops[static_cast<size_t>(p.nodes[static_cast<size_t>(*it)].op)];
    hlo::Shape shape = taidl::evalType(q.type, env);
    if (q.opcode == HloOpcode::kCopy || isIdentityLink(q.opcode)) continue;
    OpDesc d;
    d.opcode = q.opcode;
    d.shape = shape;
    if (q.opcode == HloOpcode::kTranspose || q.opcode == HloOpcode::kReverse) {
      d.attrs.dimensions = taidl::evalOpAttrs(q.opcode, q.attrs, env, {}, reducer).dimensions;
    }
    ClassId kids[] = {result};
    result = b_.add(std::move(d), kids);
  }
  const Unit& u = units_.units[static_cast<size_t>(p.unit)];
  PiiDesc pii = piiDescFor(p, u, s.alpha, b_.shape(result));
  ClassId node = b_.egraph().add(b_.ir().piiOp(), b_.ir().encode(pii), inputs);
  uniteConstructed(node, result);
  return result;
}

// ---- driver ---------------------------------------------------------------------------------

// An α that no type determines but the case fixes (`if (function == 0)` selects the case, or
// its else branch with `function` in [0, 1]) is bound: from the case's path equalities, else when
// exactly one value of its range satisfies the case's constraints. verify() still checks them all.
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

bool bindUndetermined(const UnitPattern& p, const Unit& u, AlphaSolver& a) {
  for (const Expr& c : p.sym->path) {
    if (c.root().op != taidl::ExprOp::kEq) continue;
    Expr l = c.subtree(c.root().a), r = c.subtree(c.root().b);
    if (auto v = r.constantValue()) {
      a.unify(l, *v);
    } else if (auto w = l.constantValue()) {
      a.unify(r, *w);
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
  return a.settle();
}

// α the types leave open together (Gemmini `add` reads `s8[rows * cols]`: the product fixes
// neither factor): the first open slot with a bounded range takes each value, largest first, for
// which the deferred equations settle and the constraints hold, and the rest is completed the same
// way; at most `limit` completions. verify() (and, for movement, the view comparison) decides
// whether a completion is a match.
constexpr int64_t kMaxAlphaEnumeration = 1 << 16;

void completeAlpha(const UnitPattern& p, const Unit& u, const AlphaSolver& a, size_t limit,
                   std::vector<AlphaSolver>& out) {
  if (out.size() >= limit) return;
  if (a.complete()) {
    out.push_back(a);
    return;
  }
  for (int32_t slot = 0; slot < u.num_alpha; ++slot) {
    const taidl::AlphaRange& range = (*u.ranges)[static_cast<size_t>(slot)];
    if (a.known(slot)) continue;
    if (!range.bounded() || range.range.hi - range.range.lo >= kMaxAlphaEnumeration) return;
    for (int64_t v = range.range.hi; v >= range.range.lo && out.size() < limit; --v) {
      AlphaSolver trial = a;
      trial.bind(slot, v);
      if (trial.settle() && satisfiesKnown(p, trial, slot)) completeAlpha(p, u, trial, limit, out);
    }
    return;
  }
}

std::vector<AlphaSolver> completions(const UnitPattern& p, const Unit& u, const AlphaSolver& a,
                                     size_t limit) {
  std::vector<AlphaSolver> out;
  completeAlpha(p, u, a, limit, out);
  return out;
}
}  // namespace

// Whether matchNode() at the skeleton root of p cannot find anything at class c, decided without
// building a state: the root is an operator with no identity skip (not a leaf, a constant, an
// identity operator, an operator with an identity element, an overwrite or a dot) and no e-node
// of c has its opcode and arity. Most (pattern, class) pairs of a large e-graph end here.
bool IsaMatcher::rootCannotMatch(const UnitPattern& p, ClassId c) const {
  const int32_t root = p.skeleton_root;
  const PatternNode& pn = p.nodes[static_cast<size_t>(root)];
  HloOpcode op = p.sym->ops[static_cast<size_t>(pn.op)].opcode;
  if (isLeaf(p, root) || op == HloOpcode::kConstant || mayBeIdentity(op) ||
      identityElement(op).has_value() || op == HloOpcode::kDynamicUpdateSlice ||
      op == HloOpcode::kDot)
    return false;
  const egraph::EGraph& g = b_.egraph();
  for (NodeId id : g.nodes(c)) {
    egraph::ENode e = g.node(id);
    if (b_.ir().opcodeOf(e.op()) == op && e.arity() == pn.children.size()) return false;
  }
  return true;
}

bool IsaMatcher::tryPattern(int32_t pattern, ClassId x) {
  const UnitPattern& p = units_.patterns[static_cast<size_t>(pattern)];
  if (rootCannotMatch(p, b_.egraph().find(x))) {
    fail(pattern, x, "operands do not have the instruction's structure or types");
    return false;
  }
  const Unit& u = units_.units[static_cast<size_t>(p.unit)];
  State s = State::start(p, u);
  struct Found {
    State state;
    bool verified = false;  // verify() already accepted it
  };
  std::vector<Found> found;
  matchNode(p, p.skeleton_root, x, s, [&](State& m) {
    if (found.size() >= 16 || !m.alpha.settle() || !bindUndetermined(p, u, m.alpha)) return;
    // The identity links first: they may fix an α the types leave open (Gemmini bias_load's
    // pitch, when the tile is read contiguously).
    if (!unifyIdentityLinks(p, m)) return;
    if (!m.alpha.complete()) {
      // Types that fix only a product of α: every completion that verify() accepts computes the
      // class (its types and attributes are the matched ones); the first is kept.
      for (AlphaSolver& done : completions(p, u, m.alpha, 8)) {
        State c = m;
        c.alpha = std::move(done);
        if (unifyIdentityLinks(p, c) && verify(p, c).empty()) {
          found.push_back({std::move(c), true});
          return;
        }
      }
      return;
    }
    found.push_back({m, false});
  });
  if (found.empty()) {
    fail(pattern, x, "operands do not have the instruction's structure or types");
    return false;
  }
  bool any = false;
  for (Found& f : found) {
    if (!f.verified) {
      if (std::string why = verify(p, f.state); !why.empty()) {
        fail(pattern, x, why);
        continue;
      }
    }
    accepted_.push_back({pattern, std::move(f.state)});
    any = true;
  }
  return any;
}

bool IsaMatcher::tryPureMovement(int32_t pattern, ClassId t) {
  const UnitPattern& p = units_.patterns[static_cast<size_t>(pattern)];
  const Unit& u = units_.units[static_cast<size_t>(p.unit)];
  State s = State::start(p, u);
  const SymOp& root = p.sym->ops[static_cast<size_t>(p.nodes[static_cast<size_t>(p.root)].op)];
  if (!unifyType(root.type, b_.shape(t), s.alpha) || !s.alpha.settle() ||
      !bindUndetermined(p, u, s.alpha) || !unifyIdentityLinks(p, s))
    return false;
  s.cls[static_cast<size_t>(p.root)] = t;
  std::string why = verify(p, s);
  if (!why.empty()) {
    fail(pattern, t, why);
    return false;
  }
  accepted_.push_back({pattern, std::move(s)});
  return true;
}

// The α slot a partial match left unknown, if exactly one is.
std::optional<int32_t> IsaMatcher::singleUnknown(const UnitPattern& p, const AlphaSolver& a) const {
  const Unit& u = units_.units[static_cast<size_t>(p.unit)];
  if (a.knownCount() != u.num_alpha - 1) return std::nullopt;
  for (int32_t slot = 0; slot < u.num_alpha; ++slot) {
    if (!a.known(slot)) return slot;
  }
  return std::nullopt;
}

static bool chainHasPadOrSlice(const UnitPattern& p, const std::vector<int32_t>& chain) {
  for (int32_t n : chain) {
    const PatternNode& pn = p.nodes[static_cast<size_t>(n)];
    if (pn.input < 0 && isIdentityLink(p.sym->ops[static_cast<size_t>(pn.op)].opcode)) return true;
  }
  return false;
}

// A pitched load: the pattern's whole chain (pad, reshape, slice, ...) is a strided view of its
// input's bytes. Where the class t is that view of a byte vector of the kernel (a column block of a
// row-major matrix in HBM), the unit loads t from the bytes the view spans, with the α (the pitch)
// that makes the two views equal.
bool IsaMatcher::tryStridedLoad(int32_t pattern, ClassId t) {
  const UnitPattern& p = units_.patterns[static_cast<size_t>(pattern)];
  std::vector<int32_t> chain = p.out_chain;
  chain.push_back(p.skeleton_root);
  const bool pitched = chainHasPadOrSlice(p, chain);
  const Unit& u = units_.units[static_cast<size_t>(p.unit)];
  State s = State::start(p, u);
  const SymOp& root = p.sym->ops[static_cast<size_t>(p.nodes[static_cast<size_t>(p.root)].op)];
  if (!unifyType(root.type, b_.shape(t), s.alpha) || !s.alpha.settle() ||
      !bindUndetermined(p, u, s.alpha))
    return false;
  // The pitch: the one α left (or none, if the case fixed everything).
  std::optional<int32_t> slot = singleUnknown(p, s.alpha);
  if (!pitched || (!slot && !s.alpha.complete())) return tryOpenMovement(pattern, t, s, chain);
  auto view_at = [&](int64_t x) -> std::optional<StridedView> {
    AlphaSolver a = s.alpha;
    if (slot) a.bind(*slot, x);
    std::optional<ChainView> cv = chainView(p, chain, a.env());
    if (!cv || !cv->exact()) return std::nullopt;
    return cv->view;
  };
  bool any = false;
  std::vector<BaseView> views = views_->views(t);  // a copy: construction comes later
  for (const BaseView& bv : views) {
    if (bv.base == t || !bv.exact() || !isByteVector(b_.shape(bv.base))) continue;
    State m = s;
    if (slot) {
      std::optional<int64_t> x = solveSlot(view_at, bv.view);
      if (!x) continue;
      m.alpha.bind(*slot, *x);
    } else if (std::optional<StridedView> v = view_at(0); !v || v->dims != bv.view.dims) {
      continue;
    }
    any |= acceptViewLoad(pattern, chain, m, bv, t);
  }
  return any;
}

// A movement whose types leave several α open (Gemmini `transpose` of u8[rows * cols]): where t is
// an exact view of a byte vector, each completion of α whose chain is that same view (up to the
// offset) is a match. Nothing is constructed for classes that are no such view.
bool IsaMatcher::tryOpenMovement(int32_t pattern, ClassId t, const State& s,
                                 const std::vector<int32_t>& chain) {
  if (s.alpha.complete()) return false;  // tryPureMovement's case
  const UnitPattern& p = units_.patterns[static_cast<size_t>(pattern)];
  const Unit& u = units_.units[static_cast<size_t>(p.unit)];
  std::vector<BaseView> views = views_->views(t);  // a copy: construction comes later
  std::vector<AlphaSolver> options;
  bool any = false;
  for (const BaseView& bv : views) {
    if (bv.base == t || !bv.exact() || !isByteVector(b_.shape(bv.base))) continue;
    if (options.empty()) options = completions(p, u, s.alpha, 64);
    for (const AlphaSolver& a : options) {
      std::optional<ChainView> cv = chainView(p, chain, a.env());
      if (!cv || !cv->exact() || cv->view.dims != bv.view.dims) continue;
      State m = s;
      m.alpha = a;
      if (acceptViewLoad(pattern, chain, m, bv, t)) {
        any = true;
        break;  // one completion per view: the others read the same bytes the same way
      }
    }
  }
  return any;
}

// Accepts the movement `pattern` at t reading the bytes of bv's base that its chain (with m's α)
// views as t.
bool IsaMatcher::acceptViewLoad(int32_t pattern, const std::vector<int32_t>& chain, State& m,
                                const BaseView& bv, ClassId t) {
  const UnitPattern& p = units_.patterns[static_cast<size_t>(pattern)];
  std::optional<ChainView> cv = chainView(p, chain, m.alpha.env());
  if (!cv) return false;
  int64_t in_bytes = taidl::evalType(p.sym->inputs[0].type, m.alpha.env()).byteSize();
  int64_t offset = bv.view.offset - cv->view.offset;
  if (offset < 0 || offset + in_bytes > b_.shape(bv.base).byteSize()) return false;
  m.cls[static_cast<size_t>(p.root)] = t;
  m.views_checked = true;
  m.view_base = bv.base;
  m.view_offset = offset;
  m.view_bytes = in_bytes;
  if (std::string why = verify(p, m); !why.empty()) {
    fail(pattern, t, why);
    return false;
  }
  accepted_.push_back({pattern, std::move(m)});
  return true;
}

// The bytes a pitched load reads: a slice of the byte vector its view is over.
ClassId IsaMatcher::viewInput(const State& s) {
  if (s.view_offset == 0 && s.view_bytes == b_.shape(s.view_base).byteSize()) return s.view_base;
  return b_.slice(s.view_base, {hlo::SliceDim{s.view_offset, s.view_offset + s.view_bytes, 1}});
}

ClassId IsaMatcher::constructPureMovement(const UnitPattern& p, const State& s) {
  const Unit& u = units_.units[static_cast<size_t>(p.unit)];
  ClassId t = s.cls[static_cast<size_t>(p.root)];
  std::vector<int32_t> chain = p.out_chain;
  chain.push_back(p.skeleton_root);
  ClassId input = s.view_base.valid() ? viewInput(s) : invertChain(p, chain, t, s);
  PiiDesc pii = piiDescFor(p, u, s.alpha, b_.shape(t));
  ClassId node = b_.egraph().add(b_.ir().piiOp(), b_.ir().encode(pii), {input});
  uniteConstructed(node, t);
  return t;
}

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

size_t IsaMatcher::run(ViewIndex* shared_views) {
  std::vector<MatchFailure> previous_failures = std::move(failures_);
  std::vector<PairRecord> previous = std::move(records_);
  std::vector<uint32_t> previous_begin = std::move(pattern_records_);
  failures_.clear();
  failure_counts_.clear();
  accepted_.clear();
  records_.clear();
  pattern_records_.clear();
  egraph::EGraph& g = b_.egraph();
  std::optional<ViewIndex> own_views;
  views_ = &refreshedOrOwn(shared_views, own_views, g, b_);
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
      try {
        ClassId result =
            p.pure_movement ? constructPureMovement(p, a.state) : construct(p, a.state);
        (void)result;
      } catch (const std::logic_error& e) {
        fail(a.pattern,
             a.state.cls[static_cast<size_t>(p.pure_movement ? p.root : p.skeleton_root)],
             e.what());
      }
      if (record) record->construct_end = static_cast<uint32_t>(failures_.size());
    }
    if (record) record->accepted.push_back(std::move(a.state));
  }
  accepted_.clear();
  views_ = nullptr;
  unions += g.nodeCount() - before;
  return unions;
}

}  // namespace tacit::isel
