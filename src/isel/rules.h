// IR→IR rules (docs/algorithm.md §3.3(a)): semantics-preserving XLA identities that let the
// instruction patterns match kernels written differently, and tile large operations into the
// sizes the ISA's units accept.
//
// Every rule is exact for the element types it allows (the oracle compares bitwise): e.g. a dot is
// split along its contracting dimension only for integer types, where the sum is associative.
// Each rule states its identity, the operators of its left side and those it creates; the rules
// used for an ISA are the closure of the operators its units use (a rule is selected if it creates
// a used operator; its left-side operators then become used too), computed once per ISA and listed
// by `tacit isa rules`. Each rule also carries example instances: tests/isel/rules_test.cc checks
// on random inputs that every term of the rewritten classes evaluates bit for bit like the
// original.
//
// Data movement (reshape/transpose/slice/bitcast identities) needs no rules: the view pass
// (passes.h) decides it.
//
// The rules live by topic — rules_dot.cc (dot tiling, padding, orientation, rank one),
// rules_convert.cc (converts and clamps), rules_elementwise.cc (elementwise splits and
// distributions), rules_movement.cc (movement over broadcasts and concatenations) — and rules.cc
// lists them in the library's order. What an ISA needs (IsaNeeds) is isa_analysis.h.
#pragma once

#include <map>
#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "egraph/rewrite.h"
#include "isel/ir_builder.h"
#include "isel/isa_analysis.h"
#include "isel/units.h"

namespace tacit::isel {

// What `tacit isa rules` prints of a rule and what selectRules reads: fixed when the rule is made.
struct RuleInfo {
  std::string name;
  std::string identity;                 // the equation, as `tacit isa rules` prints it
  std::vector<hlo::HloOpcode> lhs_ops;  // operators of the left side
  std::vector<hlo::HloOpcode> rhs_ops;  // operators the right side creates
};

class IrRule {
 public:
  explicit IrRule(RuleInfo info) : info_(std::move(info)) {}
  virtual ~IrRule() = default;
  const std::string& name() const { return info_.name; }
  const std::string& identity() const { return info_.identity; }
  const std::vector<hlo::HloOpcode>& lhsOps() const { return info_.lhs_ops; }
  const std::vector<hlo::HloOpcode>& rhsOps() const { return info_.rhs_ops; }
  // The rewrites implementing the rule for this e-graph (appliers build through `b`).
  virtual std::vector<egraph::Rewrite> rewrites(IrBuilder& b, const IsaNeeds& needs) const = 0;
  // HLO modules whose root is an instance of the left side, for the soundness tests (with the
  // ISA needs they should be tested under).
  virtual std::vector<std::string> examples() const = 0;
  virtual IsaNeeds exampleNeeds() const { return {}; }
  // The name of the rule's rewrite for one operator (rules with a rewrite per operator).
  std::string rewriteName(hlo::HloOpcode op) const;

 private:
  RuleInfo info_;
};

const std::vector<std::unique_ptr<IrRule>>& ruleLibrary();

// The rules reachable from the operators the ISA's units use (the closure above).
std::vector<const IrRule*> selectRules(const IsaNeeds& needs);

}  // namespace tacit::isel
