#include "isel/isa_match.h"

#include <map>
#include <numeric>
#include <stdexcept>

#include "hlo/builder.h"
#include "isel/passes.h"
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
  if (o == Outcome::kDeferred) pending_.emplace_back(&e, value);
  return o == Outcome::kDeferred || settle();
}

bool AlphaSolver::settle() {
  bool progress = true;
  while (progress && !pending_.empty()) {
    progress = false;
    for (size_t i = 0; i < pending_.size();) {
      Outcome o = tryUnify(*pending_[i].first, pending_[i].second);
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

struct IsaMatcher::State {
  std::vector<ClassId> cls;
  std::vector<NodeId> enode;
  std::vector<uint8_t> skipped;
  AlphaSolver alpha;
};

struct IsaMatcher::Accepted {
  int32_t pattern;
  State state;
};

IsaMatcher::IsaMatcher(const taidl::Isa& isa, const UnitSet& units, IrBuilder& b)
    : isa_(isa), units_(units), b_(b) {}

IsaMatcher::~IsaMatcher() = default;

void IsaMatcher::fail(int32_t pattern, ClassId c, std::string reason) {
  size_t count = 0;
  for (const MatchFailure& f : failures_)
    count += f.pattern == pattern && f.eclass == c;
  if (count < kMaxFailuresPerPattern) failures_.push_back({pattern, c, std::move(reason)});
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
    if (!unifyType(op.type, shape, next.alpha)) return;
    next.cls[n] = c;
    next.skipped[n] = 1;
    matchNode(p, pn.children[0], c, next, cont);
  }
}

void IsaMatcher::matchChildren(const UnitPattern& p, int32_t node, std::vector<ClassId> kids,
                               size_t i, State& s, const std::function<void(State&)>& cont) {
  const PatternNode& pn = p.nodes[static_cast<size_t>(node)];
  if (i == pn.children.size()) {
    cont(s);
    return;
  }
  matchNode(p, pn.children[i], kids[i], s,
            [&](State& next) { matchChildren(p, node, kids, i + 1, next, cont); });
}

// ---- verification ---------------------------------------------------------------------------

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
        if (s.skipped[n]) {
          hlo::PrimitiveType rt = hlo::PrimitiveType::kInvalid;
          if (op.opcode == HloOpcode::kReduce) rt = shape.elementType();
          hlo::HloAttributes attrs = taidl::evalOpAttrs(op.opcode, op.attrs, env, rt, reducer);
          hlo::Shape operand = taidl::evalType(
              p.sym->ops[static_cast<size_t>(p.nodes[static_cast<size_t>(pn.children[0])].op)].type,
              env);
          if (!isIdentityOp(op.opcode, operand, shape, attrs)) {
            return std::string(hlo::opcodeName(op.opcode)) + " is not an identity for this α";
          }
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

ClassId IsaMatcher::construct(const UnitPattern& p, const State& s) {
  taidl::EvalEnv env = s.alpha.env();
  hlo::HloModule scratch("reducers");
  taidl::ReducerFn reducer = [&](HloOpcode op, hlo::PrimitiveType t) {
    return hlo::addScalarReducer(scratch, op, t);
  };
  std::vector<ClassId> inputs;
  for (const UnitPattern::InputChain& in : p.inputs) {
    inputs.push_back(invertChain(p, in.chain, s.cls[static_cast<size_t>(in.leaf)], s));
  }
  ClassId result = s.cls[static_cast<size_t>(p.skeleton_root)];
  for (auto it = p.out_chain.rbegin(); it != p.out_chain.rend(); ++it) {
    const SymOp& q = p.sym->ops[static_cast<size_t>(p.nodes[static_cast<size_t>(*it)].op)];
    hlo::Shape shape = taidl::evalType(q.type, env);
    if (q.opcode == HloOpcode::kCopy) continue;
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
  PiiDesc pii;
  pii.unit = p.unit;
  pii.case_index = p.case_index;
  pii.alpha.assign(s.alpha.values().begin(), s.alpha.values().begin() + u.num_alpha);
  pii.output = p.output;
  pii.buffer = p.sym->outputs[static_cast<size_t>(p.output)].buffer;
  pii.shape = b_.shape(result);
  ClassId node = b_.egraph().add(b_.ir().piiOp(), b_.ir().encode(pii), inputs);
  b_.egraph().unite(node, result);
  return result;
}

// ---- driver ---------------------------------------------------------------------------------

bool IsaMatcher::tryPattern(int32_t pattern, ClassId x) {
  const UnitPattern& p = units_.patterns[static_cast<size_t>(pattern)];
  const Unit& u = units_.units[static_cast<size_t>(p.unit)];
  State s{std::vector<ClassId>(p.nodes.size()), std::vector<NodeId>(p.nodes.size()),
          std::vector<uint8_t>(p.nodes.size(), 0), AlphaSolver(u.num_attrs, u.num_alpha)};
  std::vector<State> found;
  matchNode(p, p.skeleton_root, x, s, [&](State& m) {
    if (found.size() < 16 && m.alpha.settle()) found.push_back(m);
  });
  if (found.empty()) {
    fail(pattern, x, "operands do not have the instruction's structure or types");
    return false;
  }
  bool any = false;
  for (State& m : found) {
    std::string why = verify(p, m);
    if (!why.empty()) {
      fail(pattern, x, why);
      continue;
    }
    accepted_.push_back({pattern, std::move(m)});
    any = true;
  }
  return any;
}

bool IsaMatcher::tryPureMovement(int32_t pattern, ClassId t) {
  const UnitPattern& p = units_.patterns[static_cast<size_t>(pattern)];
  const Unit& u = units_.units[static_cast<size_t>(p.unit)];
  State s{std::vector<ClassId>(p.nodes.size()), std::vector<NodeId>(p.nodes.size()),
          std::vector<uint8_t>(p.nodes.size(), 0), AlphaSolver(u.num_attrs, u.num_alpha)};
  const SymOp& root = p.sym->ops[static_cast<size_t>(p.nodes[static_cast<size_t>(p.root)].op)];
  if (!unifyType(root.type, b_.shape(t), s.alpha) || !s.alpha.settle()) return false;
  s.cls[static_cast<size_t>(p.root)] = t;
  std::string why = verify(p, s);
  if (!why.empty()) {
    fail(pattern, t, why);
    return false;
  }
  accepted_.push_back({pattern, std::move(s)});
  return true;
}

ClassId IsaMatcher::constructPureMovement(const UnitPattern& p, const State& s) {
  const Unit& u = units_.units[static_cast<size_t>(p.unit)];
  ClassId t = s.cls[static_cast<size_t>(p.root)];
  std::vector<int32_t> chain = p.out_chain;
  chain.push_back(p.skeleton_root);
  ClassId input = invertChain(p, chain, t, s);
  PiiDesc pii;
  pii.unit = p.unit;
  pii.case_index = p.case_index;
  pii.alpha.assign(s.alpha.values().begin(), s.alpha.values().begin() + u.num_alpha);
  pii.output = p.output;
  pii.buffer = p.sym->outputs[static_cast<size_t>(p.output)].buffer;
  pii.shape = b_.shape(t);
  ClassId node = b_.egraph().add(b_.ir().piiOp(), b_.ir().encode(pii), {input});
  b_.egraph().unite(node, t);
  return t;
}

size_t IsaMatcher::run() {
  failures_.clear();
  accepted_.clear();
  egraph::EGraph& g = b_.egraph();
  std::vector<ClassId> classes(g.classes().begin(), g.classes().end());
  // Match everything on the clean e-graph first, then construct (construction adds nodes).
  for (size_t pi = 0; pi < units_.patterns.size(); ++pi) {
    const UnitPattern& p = units_.patterns[pi];
    const SymOp& top = p.sym->ops[static_cast<size_t>(
        p.nodes[static_cast<size_t>(p.pure_movement ? p.root : p.skeleton_root)].op)];
    for (ClassId c : classes) {
      const hlo::Shape& shape = b_.shape(c);
      if (shape.elementType() != top.type.dtype ||
          shape.rank() != static_cast<int64_t>(top.type.dims.size()))
        continue;
      if (p.pure_movement) {
        tryPureMovement(static_cast<int32_t>(pi), c);
        continue;
      }
      bool candidate = mayBeIdentity(top.opcode) || top.opcode == HloOpcode::kConstant;
      for (NodeId n : g.nodes(c))
        candidate |= b_.ir().opcodeOf(g.node(n).op()) == top.opcode;
      if (candidate) tryPattern(static_cast<int32_t>(pi), c);
    }
  }
  size_t before = g.nodeCount();
  size_t unions = 0;
  for (const Accepted& a : accepted_) {
    const UnitPattern& p = units_.patterns[static_cast<size_t>(a.pattern)];
    try {
      ClassId result = p.pure_movement ? constructPureMovement(p, a.state) : construct(p, a.state);
      (void)result;
    } catch (const std::logic_error& e) {
      fail(a.pattern, a.state.cls[static_cast<size_t>(p.pure_movement ? p.root : p.skeleton_root)],
           e.what());
    }
  }
  accepted_.clear();
  unions += g.nodeCount() - before;
  return unions;
}

}  // namespace tacit::isel
