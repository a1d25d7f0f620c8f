// Integer expressions of the .taidl language (docs/taidl.md section 6).
//
// An Expr is a small tree stored flat: nodes in post-order (children before parents, the root
// last), so copying, hashing and evaluating it touch one contiguous array. References keep their
// source name (for printing and diagnostics) and, once resolved, a kind and a slot:
//
//   kParam, kConst  folded at load time: `value` holds the integer, `slot` the declaration index
//   kAlpha, kBeta   an instruction's or macro's attribute; `slot` = position in the attribute list
//                   (alpha first, then beta: the positional order of a call)
//   kReg            a control register; `slot` = register index
//   kLoop           a `repeat` variable; `slot` = index of the loop in its instruction
//   kLet            an integer a `let` read from a buffer; `slot` = index of the let in its
//                   instruction
//
// Evaluation (evalExpr) reads attribute, register and loop values from spans in an EvalEnv and
// allocates nothing; a division by zero, an inexact `/` or an overflow throws ExprError, which the
// caller turns into a located DiagnosticError with its own context (load time, the oracle, ...).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace tacit::taidl {

enum class ExprOp : uint8_t {
  kInt,
  kRef,
  kNeg,
  kNot,
  kAdd,
  kSub,
  kMul,
  kDiv,       // exact division
  kFloorDiv,  // rounds toward -inf
  kMod,       // sign of the divisor
  kEq,
  kNe,
  kLt,
  kLe,
  kGt,
  kGe,
  kAnd,
  kOr,
  kCond,  // a ? b : c
  kMin,
  kMax,
};

enum class RefKind : uint8_t { kUnresolved, kParam, kConst, kAlpha, kBeta, kReg, kLoop, kLet };

struct ExprNode {
  ExprOp op = ExprOp::kInt;
  RefKind ref = RefKind::kUnresolved;
  bool is_bool = false;            // kInt spelled `true`/`false`
  int32_t a = -1, b = -1, c = -1;  // child node indices
  int32_t slot = -1;               // kRef: see the header comment
  int64_t value = 0;               // kInt: the value; kRef to a param/const: its folded value
  uint32_t offset = 0;             // byte offset where the node's text starts
  uint32_t op_offset = 0;          // byte offset of the operator (binary/unary/call nodes)
  uint32_t name = 0;               // kRef: index into Expr::names
};

// Why an evaluation failed, at which source offset (of the operator).
struct ExprError {
  uint32_t offset = 0;
  std::string message;
};

struct EvalEnv {
  // (A constructor, not an aggregate: most callers have no lets and leave them out.)
  EvalEnv(std::span<const int64_t> attrs_ = {}, std::span<const int64_t> regs_ = {},
          std::span<const int64_t> loops_ = {}, std::span<const int64_t> lets_ = {})
      : attrs(attrs_), regs(regs_), loops(loops_), lets(lets_) {}
  std::span<const int64_t> attrs;  // alpha then beta, in declaration order
  std::span<const int64_t> regs;
  std::span<const int64_t> loops;
  std::span<const int64_t> lets;
};

class Expr {
 public:
  Expr() = default;

  static Expr integer(int64_t v, uint32_t offset = 0);
  static Expr boolean(bool v, uint32_t offset = 0);
  // An unresolved reference (the parser's form).
  static Expr name(std::string name, uint32_t offset = 0);
  // A resolved reference; for kParam/kConst `value` is the folded value.
  static Expr ref(RefKind kind, int32_t slot, std::string name, int64_t value = 0,
                  uint32_t offset = 0);
  static Expr unary(ExprOp op, Expr x, uint32_t op_offset = 0);
  static Expr binary(ExprOp op, Expr lhs, Expr rhs, uint32_t op_offset = 0);
  static Expr cond(Expr c, Expr t, Expr f, uint32_t op_offset = 0);

  bool empty() const { return nodes_.empty(); }
  const std::vector<ExprNode>& nodes() const { return nodes_; }
  std::vector<ExprNode>& mutableNodes() { return nodes_; }
  const ExprNode& node(int32_t i) const { return nodes_[static_cast<size_t>(i)]; }
  int32_t rootIndex() const { return static_cast<int32_t>(nodes_.size()) - 1; }
  const ExprNode& root() const { return nodes_.back(); }
  const std::string& refName(const ExprNode& n) const { return names_[n.name]; }
  const std::vector<std::string>& names() const { return names_; }

  // Start offset of the expression's text.
  uint32_t offset() const { return empty() ? 0 : root().offset; }
  // True if the expression is an integer literal (possibly negated), or a folded param/const.
  bool isConstant() const;
  std::optional<int64_t> constantValue() const;  // the value if no ref to alpha/beta/reg/loop
  // True if any node is a reference of this kind.
  bool uses(RefKind kind) const;
  bool usesSlot(RefKind kind, int32_t slot) const;
  // True if the value depends on machine state: a register or a let (docs/taidl.md section 4.7).
  bool usesState() const { return uses(RefKind::kReg) || uses(RefKind::kLet); }

  // The subtree rooted at node i as its own Expr.
  Expr subtree(int32_t i) const;

  // Rebuilds the expression bottom-up; `fn` may replace a reference node by an expression
  // (returning nullopt keeps it).
  Expr substitute(const std::function<std::optional<Expr>(const Expr&, const ExprNode&)>& fn) const;

  // Structural equality (names and offsets ignored for resolved references).
  bool sameAs(const Expr& other) const;
  // A hash consistent with sameAs.
  size_t hash() const;

  // Appends `other`'s nodes and returns the index of its root in this expression.
  int32_t append(const Expr& other);
  int32_t push(ExprNode n);
  int32_t addName(std::string name);

 private:
  std::vector<ExprNode> nodes_;
  std::vector<std::string> names_;
};

// Evaluates `e` (every reference must be resolved). Throws ExprError.
int64_t evalExpr(const Expr& e, const EvalEnv& env);
int64_t evalNode(const Expr& e, int32_t i, const EvalEnv& env);

// Integer semantics of docs/taidl.md section 6, shared by evaluation and constant folding.
// Each returns false (with `why`) on division by zero, inexact `/` or overflow.
bool applyBinary(ExprOp op, int64_t a, int64_t b, int64_t* out, std::string* why);
bool applyUnary(ExprOp op, int64_t a, int64_t* out, std::string* why);

// Source spelling of an operator ("+", "//", "min", ...).
std::string_view exprOpSpelling(ExprOp op);
bool isComparison(ExprOp op);

// Canonical text with minimal parentheses (docs/taidl.md section 9).
std::string exprText(const Expr& e);
std::string exprText(const Expr& e, int32_t node);

}  // namespace tacit::taidl
