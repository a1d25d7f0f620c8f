// α solving for the IR→ISA matcher (isa_match.h): a unit's α is unified, one unknown at a time and
// exactly, with the concrete dimensions and attributes a match meets; α that no type determines are
// bound from the case, and α that types fix only together (a product) are completed by
// enumeration. Whether a solved α is a match is verify()'s decision (isa_match.h).
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>
#include <utility>
#include <vector>

#include "hlo/shape.h"
#include "isel/ir.h"
#include "isel/units.h"
#include "taidl/semantics.h"

namespace tacit::isel {

// α of one unit during matching: values of the attribute slots, which are known, and the
// unifications that could not be solved yet.
class AlphaSolver {
 public:
  AlphaSolver() = default;
  AlphaSolver(int32_t num_attrs, int32_t num_alpha);

  // Requires expr == value. Binds an unknown α when expr is linear in it and every other α it uses
  // is known; defers otherwise. False on a contradiction.
  bool unify(const taidl::Expr& e, int64_t value);
  // Retries deferred unifications until no progress; false on a contradiction.
  bool settle();
  bool complete() const { return pending_.empty() && knownCount() == num_alpha_; }
  int32_t knownCount() const;
  const std::vector<int64_t>& values() const { return values_; }
  bool known(int32_t slot) const { return known_[static_cast<size_t>(slot)] != 0; }
  void bind(int32_t slot, int64_t value);
  taidl::EvalEnv env() const { return taidl::EvalEnv{values_, {}, {}}; }
  // The α slot left unknown, if exactly one is.
  std::optional<int32_t> singleUnknown() const;

 private:
  enum class Outcome { kOk, kDeferred, kContradiction };
  Outcome tryUnify(const taidl::Expr& e, int64_t value);

  int32_t num_alpha_ = 0;
  std::vector<int64_t> values_;
  std::vector<uint8_t> known_;
  std::vector<std::pair<taidl::Expr, int64_t>> pending_;
};

// Requires t == s (element type, rank, every dimension).
bool unifyType(const taidl::TypeExpr& t, const hlo::Shape& s, AlphaSolver& a);

// Unifies the attributes of `op` that can carry α with the matched e-node's (everything else is
// compared by the matcher's verify()).
bool unifyAttrs(const taidl::SymOp& op, const OpDesc& d, AlphaSolver& a);

// The attribute `name` of a semantics operator, if it has one.
const taidl::OpAttr* findAttr(const taidl::SymOp& op, std::string_view name);

// An α that no type determines but the case fixes (`if (function == 0)` selects the case, or
// its else branch with `function` in [0, 1]) is bound: from the case's path equalities, else when
// exactly one value of its range satisfies the case's constraints. verify() still checks them all.
bool bindUndetermined(const UnitPattern& p, const Unit& u, AlphaSolver& a);

// α the types leave open together (Gemmini `add` reads `s8[rows * cols]`: the product fixes
// neither factor): the first open slot with a bounded range takes each value, largest first, for
// which the deferred equations settle and the constraints hold, and the rest is completed the same
// way; at most `limit` completions. verify() (and, for movement, the view comparison) decides
// whether a completion is a match.
std::vector<AlphaSolver> completions(const UnitPattern& p, const Unit& u, const AlphaSolver& a,
                                     size_t limit);

}  // namespace tacit::isel
