// Slices fit their buffers (docs/taidl.md section 8.4). For every access and every dimension,
// `start >= 0` and `start + extent <= dim` must follow from the instruction's constraints:
// proved by interval bounds of the attributes (inferred from the requires) and, one constraint at
// a time, by `goal - constraint` being bounded by 0 (so `require addr + n <= 128` proves exactly
// the slice `B[addr] size [n]` of a 128-row buffer). Starts that depend on registers (or on loop
// variables with register bounds) are checked when the instruction executes; so is the upper end
// of HBM slices (HBM is sized per program).
#include "taidl/check.h"

namespace tacit::taidl {
namespace {

class SliceChecker {
 public:
  SliceChecker(Checker& c, int32_t index, const BodyFacts& facts,
               const std::vector<Interval>& attr_bounds)
      : isa_(c.isa()),
        inst_(isa_.instructions[static_cast<size_t>(index)]),
        facts_(facts),
        attr_bounds_(attr_bounds) {
    for (const Expr& e : attributeConstraints(inst_))
      addConstraint(e);
  }

  void run() {
    for (const AccessInfo& a : facts_.accesses)
      check(a);
  }

 private:
  void addConstraint(const Expr& e) {
    const ExprNode& n = e.root();
    if (!isComparison(n.op) || n.op == ExprOp::kNe) return;
    std::optional<Poly> l = toPoly(e, n.a), r = toPoly(e, n.b);
    if (!l || !r) return;
    Poly lr = *l, rl = *r;
    if (!lr.add(*r, -1) || !rl.add(*l, -1)) return;
    auto add = [&](Poly p, int64_t plus) {
      if (p.add(Poly::constant(plus))) constraints_.push_back(std::move(p));
    };
    if (n.op == ExprOp::kLe || n.op == ExprOp::kEq) add(lr, 0);
    if (n.op == ExprOp::kLt) add(lr, 1);
    if (n.op == ExprOp::kGe || n.op == ExprOp::kEq) add(rl, 0);
    if (n.op == ExprOp::kGt) add(rl, 1);
  }

  Interval bound(Var v) const {
    switch (v.kind) {
      case RefKind::kAlpha:
      case RefKind::kBeta:
        return attr_bounds_[static_cast<size_t>(v.slot)];
      case RefKind::kLoop: {
        const Stmt* loop = facts_.loop_stmts[static_cast<size_t>(v.slot)];
        VarBounds vb = [this](Var w) { return bound(w); };
        Interval lo = boundExpr(loop->expr, vb), hi = boundExpr(loop->expr2, vb);
        return Interval{lo.lo, hi.hasHi() ? hi.hi - 1 : Interval::kPosInf};
      }
      default:
        return Interval::all();
    }
  }

  // True if the expression may depend on machine state (a register, a let, or a loop whose
  // bounds do).
  bool dependsOnState(const Expr& e) const {
    for (const ExprNode& n : e.nodes()) {
      if (n.op != ExprOp::kRef) continue;
      if (n.ref == RefKind::kReg || n.ref == RefKind::kLet) return true;
      if (n.ref == RefKind::kLoop) {
        const Stmt* loop = facts_.loop_stmts[static_cast<size_t>(n.slot)];
        if (dependsOnState(loop->expr) || dependsOnState(loop->expr2)) return true;
      }
    }
    return false;
  }

  // Proves goal <= 0.
  bool nonPositive(const Expr& goal) const {
    VarBounds vb = [this](Var v) { return bound(v); };
    std::optional<Poly> p = toPoly(goal);
    if (!p) return boundExpr(goal, vb).hi <= 0;
    if (nonPositive(*p, vb)) return true;
    // Intervals forget that a loop variable stays below its bound (`r < y_size`); with each loop
    // variable replaced by the end of its range that maximises the goal, they need not know it.
    std::optional<Poly> m = maximiseLoops(*p, vb);
    return m && nonPositive(*m, vb);
  }

  bool nonPositive(const Poly& p, const VarBounds& vb) const {
    if (boundPoly(p, vb).hi <= 0) return true;
    for (const Poly& c : constraints_) {
      Poly d = p;
      if (d.add(c, -1) && boundPoly(d, vb).hi <= 0) return true;
    }
    return false;
  }

  // p with every loop variable replaced by the bound expression of its loop that maximises p
  // (hi - 1 for a coefficient known non-negative, lo for one known non-positive), repeated for
  // loops whose bounds use enclosing loop variables; nullopt if p is not affine in them or a
  // coefficient's sign is unknown. Sound: a loop without trips makes no access.
  std::optional<Poly> maximiseLoops(const Poly& p, const VarBounds& vb) const {
    Poly cur = p;
    for (int round = 0; round < kMaxRank && cur.uses(RefKind::kLoop); ++round) {
      std::optional<Affine> aff = affineIn(cur, RefKind::kLoop);
      if (!aff) return std::nullopt;
      Poly next = aff->constant;
      for (const AffineTerm& t : aff->terms) {
        const Stmt* loop = facts_.loop_stmts[static_cast<size_t>(t.var.slot)];
        Interval sign = boundPoly(t.coeff, vb);
        std::optional<Poly> end;
        if (sign.lo >= 0) {
          end = toPoly(loop->expr2);
          if (end && !end->add(Poly::constant(1), -1)) return std::nullopt;
        } else if (sign.hi <= 0) {
          end = toPoly(loop->expr);
        }
        Poly term = t.coeff;
        if (!end || !term.mul(*end) || !next.add(term)) return std::nullopt;
      }
      cur = std::move(next);
    }
    if (cur.uses(RefKind::kLoop)) return std::nullopt;
    return cur;
  }

  void check(const AccessInfo& a) {
    const Stmt& s = *a.stmt;
    const Buffer& b = isa_.buffers[static_cast<size_t>(s.buffer_index)];
    bool declared = s.kind == StmtKind::kReads || s.kind == StmtKind::kWrites;
    size_t dims = declared ? b.access.size() : static_cast<size_t>(b.rank());
    for (size_t k = 0; k < dims; ++k) {
      const Expr& start = s.starts[k];
      const Expr& extent = declared ? s.sizes[k] : a.value_type->dims[k];
      if (dependsOnState(start) || dependsOnState(extent)) continue;
      bool access_dim = k < b.access.size();
      int64_t size = access_dim ? b.access[k] : b.unit[k - b.access.size()];
      std::string slice = b.name.text + "[" + exprText(start) + "]";
      Expr lower = Expr::unary(ExprOp::kNeg, start);
      if (!nonPositive(lower)) {
        isa_.fail(start.offset(),
                  "the slice of " + b.name.text + " may start below 0 in dimension " +
                      std::to_string(k) + ": `" + exprText(start) +
                      " >= 0` does not follow from the constraints of " + inst_.name.text,
                  "add `require " + exprText(start) + " >= 0;`");
      }
      if (size == kUnknownSize) continue;
      Expr end = Expr::binary(ExprOp::kAdd, start, extent);
      Expr goal = Expr::binary(ExprOp::kSub, end, Expr::integer(size));
      if (nonPositive(goal)) continue;
      const Expr& dim_expr = access_dim ? b.access_exprs[k] : b.unit_exprs[k - b.access.size()];
      std::string limit = exprText(dim_expr);
      isa_.fail(start.offset(),
                "the slice of " + b.name.text + " may exceed its size " + std::to_string(size) +
                    " in dimension " + std::to_string(k) + ": `" + exprText(end) + " <= " + limit +
                    "` does not follow from the constraints of " + inst_.name.text,
                "add `require " + exprText(end) + " <= " + limit + ";`");
    }
  }

  Isa& isa_;
  const Instruction& inst_;
  const BodyFacts& facts_;
  const std::vector<Interval>& attr_bounds_;
  std::vector<Poly> constraints_;  // each <= 0
};

}  // namespace

void checkSlices(Checker& checker, int32_t instruction, const BodyFacts& facts,
                 const std::vector<Interval>& attr_bounds) {
  SliceChecker(checker, instruction, facts, attr_bounds).run();
}

}  // namespace tacit::taidl
