// Computing units (isa_match.h): a pattern's skeleton matched over the e-graph with identity
// skips, the match verified at the solved α, and the instruction constructed. α solving is
// alpha_solver.cc, pure movements isa_match_movement.cc, the incremental run isa_match_run.cc,
// block writes region_write.cc.
#include "isel/isa_match.h"
#include "isel/isa_match_state.h"

#include <algorithm>

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

hlo::ComparisonType defaultComparison(hlo::PrimitiveType t) {
  if (hlo::isFloat(t)) return hlo::ComparisonType::kFloat;
  if (hlo::isSignedInteger(t)) return hlo::ComparisonType::kSigned;
  return hlo::ComparisonType::kUnsigned;
}

}  // namespace

// ---- matching -------------------------------------------------------------------------------

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

Built<ClassId> IsaMatcher::invertChain(const UnitPattern& p, const std::vector<int32_t>& chain,
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
    std::optional<OpDesc> d;
    switch (q.opcode) {
      case HloOpcode::kReshape:
        d = b_.reshapeDesc(cur, below.dims());
        break;
      case HloOpcode::kBitcastConvert:
        d = IrBuilder::bitcastConvertDesc(below);
        break;
      case HloOpcode::kTranspose:
        d = IrBuilder::transposeDesc(
            inversePerm(*taidl::evalOpAttrs(q.opcode, q.attrs, env, {}, reducer).dimensions));
        break;
      case HloOpcode::kReverse:
        d = OpDesc();
        d->opcode = HloOpcode::kReverse;
        d->attrs.dimensions = taidl::evalOpAttrs(q.opcode, q.attrs, env, {}, reducer).dimensions;
        break;
      default:  // copy: the identity
        break;
    }
    if (!d) continue;
    ClassId kids[] = {cur};
    Built<ClassId> next = b_.tryAdd(std::move(*d), kids);
    if (!next.value) return next;
    cur = *next.value;
  }
  return {cur, {}};
}

// The classes of the unit's inputs for a match: identity matrices and splats the match assumed
// become constants, overwritten regions undefined values, the others their inverted chains.
Built<std::vector<ClassId>> IsaMatcher::constructInputs(const UnitPattern& p, State& s) {
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
      Built<ClassId> input = invertChain(p, in.chain, s.cls[static_cast<size_t>(in.leaf)], s);
      if (!input.value) return {std::nullopt, std::move(input.error)};
      inputs.push_back(*input.value);
    }
  }
  return {std::move(inputs), {}};
}

Built<ClassId> IsaMatcher::construct(const UnitPattern& p, const State& matched) {
  State s = matched;
  taidl::EvalEnv env = s.alpha.env();
  hlo::HloModule scratch("reducers");
  taidl::ReducerFn reducer = [&](HloOpcode op, hlo::PrimitiveType t) {
    return hlo::addScalarReducer(scratch, op, t);
  };
  Built<std::vector<ClassId>> inputs = constructInputs(p, s);
  if (!inputs.value) return {std::nullopt, std::move(inputs.error)};
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
    Built<ClassId> next = b_.tryAdd(std::move(d), kids);
    if (!next.value) return next;
    result = *next.value;
  }
  const Unit& u = units_.units[static_cast<size_t>(p.unit)];
  PiiDesc pii = piiDescFor(p, u, s.alpha, b_.shape(result));
  ClassId node = b_.egraph().add(b_.ir().piiOp(), b_.ir().encode(pii), *inputs.value);
  uniteConstructed(node, result);
  return {result, {}};
}

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

}  // namespace tacit::isel
