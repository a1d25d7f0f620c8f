// Type-checking by instantiation (docs/taidl.md section 8.3): every operation is checked by HLO
// shape inference (the one source of HLO typing rules) at concrete values of the computational
// attributes that shapes depend on: every value of their inferred ranges when there are at most
// 4096 combinations, otherwise the corners of the ranges and 64 seeded random points. Points that
// violate the alpha-only requires are skipped. Type equalities the body check could not decide
// symbolically (non-polynomial dimensions) are compared at the same points.
#include <algorithm>
#include <map>
#include <random>

#include "hlo/builder.h"
#include "hlo/shape_inference.h"
#include "support/strings.h"
#include "taidl/check.h"
#include "taidl/ops.h"
#include "taidl/printer.h"

namespace tacit::taidl {
namespace {

bool usesLoopInShapes(const std::vector<Stmt>& body, int32_t loop);

bool exprUsesLoop(const Expr& e, int32_t loop) {
  return e.usesSlot(RefKind::kLoop, loop);
}

bool literalUsesLoop(const LiteralValue& v, int32_t loop) {
  if (v.kind == LiteralValue::Kind::kExpr) return exprUsesLoop(v.expr, loop);
  return std::any_of(v.elements.begin(), v.elements.end(),
                     [&](const LiteralValue& e) { return literalUsesLoop(e, loop); });
}

bool stmtUsesLoopInShapes(const Stmt& s, int32_t loop) {
  auto any = [&](const std::vector<Expr>& list) {
    return std::any_of(list.begin(), list.end(),
                       [&](const Expr& e) { return exprUsesLoop(e, loop); });
  };
  if (any(s.type.dims)) return true;
  for (const OpAttr& a : s.attrs) {
    if (any(a.list) || (!a.expr.empty() && exprUsesLoop(a.expr, loop))) return true;
    for (const RangeExpr& r : a.ranges) {
      if (exprUsesLoop(r.start, loop) || exprUsesLoop(r.limit, loop) ||
          (!r.stride.empty() && exprUsesLoop(r.stride, loop)))
        return true;
    }
  }
  if (s.kind == StmtKind::kConstant && literalUsesLoop(s.literal, loop)) return true;
  if (s.kind == StmtKind::kIf && exprUsesLoop(s.expr, loop)) return true;
  if (s.kind == StmtKind::kRepeat && (exprUsesLoop(s.expr, loop) || exprUsesLoop(s.expr2, loop)))
    return true;
  return usesLoopInShapes(s.body, loop) || usesLoopInShapes(s.else_body, loop);
}

int64_t countStatements(const std::vector<Stmt>& body) {
  int64_t n = 0;
  for (const Stmt& s : body)
    n += 1 + countStatements(s.body) + countStatements(s.else_body);
  return n;
}

bool usesLoopInShapes(const std::vector<Stmt>& body, int32_t loop) {
  return std::any_of(body.begin(), body.end(),
                     [&](const Stmt& s) { return stmtUsesLoopInShapes(s, loop); });
}

class TypeChecker {
 public:
  TypeChecker(Checker& c, int32_t index, const BodyFacts& facts)
      : c_(c),
        isa_(c.isa()),
        inst_(isa_.instructions[static_cast<size_t>(index)]),
        index_(index),
        facts_(facts),
        reducers_("reducers") {}

  void run() {
    attrs_.assign(inst_.attrs.size(), 0);
    loops_.assign(inst_.loop_names.size(), 0);
    shapes_.resize(inst_.value_names.size());
    chooseAxes();
    collectFilters();
    int64_t valid = 0;
    int64_t budget = kTypeCheckBudget, skipped = 0;
    forEachPoint([&] {
      if (!satisfiesFilters()) return;
      if (budget <= 0) {
        ++skipped;
        return;
      }
      executed_ = 0;
      try {
        walk(inst_.body);
      } catch (const TooLong& t) {
        // An execution beyond the statement limit is the oracle's error when it happens; a spec
        // may allow such values (loop extents of 14-bit encoding fields).
        if (too_long_.empty()) too_long_ = t.message;
        budget -= executed_ + 1;
        return;
      }
      ++valid;
      checkDeferred();
      budget -= executed_ + 1;
    });
    if (!too_long_.empty()) {
      if (valid == 0) isa_.fail(too_long_offset_, too_long_);
      c_.warn(too_long_offset_, too_long_ + "; the oracle rejects such executions",
              "the statement limit bounds one execution: loops in an instruction are unrolled");
    }
    if (skipped > 0) {
      c_.warn(inst_.name.offset, "types of " + inst_.name.text + " were checked at " +
                                     std::to_string(valid) + " attribute values only (" +
                                     std::to_string(skipped) + " more exceed the checking budget)");
    }
    if (valid > 0) return;
    if (exhaustive_) {
      isa_.fail(inst_.name.offset,
                "no value of the computational attributes of " + inst_.name.text +
                    " satisfies its constraints",
                "the instruction could never execute; check its require statements");
    }
    c_.warn(inst_.name.offset, "types of " + inst_.name.text +
                                   " were not checked: no sampled attribute values satisfy the "
                                   "constraints");
  }

 private:
  struct Axis {
    int32_t slot;
    int64_t lo, hi;
  };

  void chooseAxes() {
    const auto& ranges = isa_.instruction_ranges[static_cast<size_t>(index_)];
    for (int32_t i = 0; i < inst_.num_alpha; ++i) {
      if (!facts_.alpha_relevant[static_cast<size_t>(i)]) continue;
      Interval r = ranges[static_cast<size_t>(i)].range;
      if (r.empty()) {
        isa_.fail(inst_.attrs[static_cast<size_t>(i)].name.offset,
                  "the constraints of " + inst_.name.text + " leave no value for " +
                      inst_.attrs[static_cast<size_t>(i)].name.text);
      }
      if (!r.hasLo() || !r.hasHi()) {
        int64_t lo = r.hasLo() ? r.lo : r.hasHi() ? r.hi - 7 : 1;
        c_.warn(inst_.attrs[static_cast<size_t>(i)].name.offset,
                "computational attribute " + inst_.attrs[static_cast<size_t>(i)].name.text +
                    " of " + inst_.name.text + " has no inferable " +
                    (r.hasLo()   ? "upper"
                     : r.hasHi() ? "lower"
                                 : "lower or upper") +
                    " bound; types were checked for " + std::to_string(lo) + ".." +
                    std::to_string(lo + 7) + " only",
                "add a require bounding it (the compiler will refuse to enumerate it)");
        r = Interval{lo, lo + 7};
      }
      axes_.push_back(Axis{i, r.lo, r.hi});
    }
    double product = 1;
    for (const Axis& a : axes_)
      product *= static_cast<double>(a.hi) - static_cast<double>(a.lo) + 1;
    exhaustive_ = product <= static_cast<double>(kExhaustivePoints);
  }

  // The alpha-only requires over relevant attributes: a point must satisfy them.
  void collectFilters() {
    for (Expr& e : attributeConstraints(inst_)) {
      bool ok = true;
      for (const ExprNode& n : e.nodes()) {
        if (n.op != ExprOp::kRef) continue;
        if (n.ref == RefKind::kBeta) ok = false;
        if (n.ref == RefKind::kAlpha && !facts_.alpha_relevant[static_cast<size_t>(n.slot)])
          ok = false;
      }
      if (ok) filters_.push_back(std::move(e));
    }
  }

  bool satisfiesFilters() {
    for (const Expr& f : filters_) {
      try {
        if (evalExpr(f, env()) == 0) return false;
      } catch (const ExprError&) {
        return false;  // the require itself fails for these values: not a valid point
      }
    }
    return true;
  }

  template <typename Fn>
  void forEachPoint(const Fn& fn) {
    if (exhaustive_) {
      enumerate(0, fn);
      return;
    }
    if (axes_.size() <= 12) {
      for (uint32_t mask = 0; mask < (1u << axes_.size()); ++mask) {
        for (size_t k = 0; k < axes_.size(); ++k)
          set(axes_[k], (mask >> k) & 1 ? axes_[k].hi : axes_[k].lo);
        fn();
      }
    }
    std::mt19937_64 rng(std::hash<std::string>()(inst_.name.text) ^ 0x7461636974ULL);
    for (int i = 0; i < kRandomPoints; ++i) {
      for (const Axis& a : axes_) {
        std::uniform_int_distribution<int64_t> dist(a.lo, a.hi);
        set(a, dist(rng));
      }
      fn();
    }
  }

  template <typename Fn>
  void enumerate(size_t k, const Fn& fn) {
    if (k == axes_.size()) {
      fn();
      return;
    }
    for (int64_t v = axes_[k].lo;; ++v) {
      set(axes_[k], v);
      enumerate(k + 1, fn);
      if (v == axes_[k].hi) break;
    }
  }

  void set(const Axis& a, int64_t v) { attrs_[static_cast<size_t>(a.slot)] = v; }

  EvalEnv env() const { return EvalEnv{attrs_, {}, loops_}; }

  std::string pointText() const {
    if (axes_.empty()) return "";
    return " (for " +
           joinWith(axes_, ", ",
                    [&](const Axis& a) {
                      return inst_.attrs[static_cast<size_t>(a.slot)].name.text + "=" +
                             std::to_string(attrs_[static_cast<size_t>(a.slot)]);
                    }) +
           ")";
  }

  [[noreturn]] void failAt(uint32_t offset, const std::string& message) {
    isa_.fail(offset, message + pointText());
  }

  // One point's execution exceeds the statement limit.
  struct TooLong {
    std::string message;
  };
  [[noreturn]] void tooLong(uint32_t offset) {
    too_long_offset_ = offset;
    throw TooLong{"instruction " + inst_.name.text + " executes more than " +
                  std::to_string(kMaxStatementsExecuted) + " statements" + pointText()};
  }

  template <typename Fn>
  auto guarded(Fn&& fn) -> decltype(fn()) {
    try {
      return fn();
    } catch (const ExprError& e) {
      failAt(e.offset, e.message);
    }
  }

  hlo::HloComputation* reducer(hlo::HloOpcode op, hlo::PrimitiveType t, uint32_t offset) {
    auto key = std::make_pair(op, t);
    auto it = cache_.find(key);
    if (it != cache_.end()) return it->second;
    try {
      hlo::HloComputation* c = hlo::addScalarReducer(reducers_, op, t);
      cache_.emplace(key, c);
      return c;
    } catch (const DiagnosticError&) {
      failAt(offset, "to_apply=" + std::string(hlo::opcodeName(op)) + " is not valid for " +
                         std::string(hlo::primitiveTypeName(t)) + " values");
    }
  }

  void checkOp(const Stmt& s) {
    hlo::Shape result = guarded([&] { return evalType(s.type, env()); });
    std::vector<const hlo::Shape*> operands;
    for (int32_t v : s.operand_values)
      operands.push_back(&shapes_[static_cast<size_t>(v)]);
    hlo::PrimitiveType reduce_type =
        operands.size() > 1 ? operands[1]->elementType() : hlo::PrimitiveType::kInvalid;
    const OpAttr* to_apply = nullptr;
    for (const OpAttr& a : s.attrs) {
      if (a.name.text == "to_apply") to_apply = &a;
    }
    hlo::HloAttributes attrs = guarded([&] {
      return evalOpAttrs(s.hlo_opcode, s.attrs, env(), reduce_type,
                         [&](hlo::HloOpcode op, hlo::PrimitiveType t) {
                           return reducer(op, t, to_apply ? to_apply->value_offset : s.offset);
                         });
    });
    hlo::ShapeResult r = hlo::inferShape(s.hlo_opcode, operands, attrs, &result);
    if (!r.ok()) failAt(s.opcode.offset, r.error);
    shapes_[static_cast<size_t>(s.value)] = result;
  }

  void walk(const std::vector<Stmt>& body) {
    for (const Stmt& s : body) {
      if (++executed_ > kMaxStatementsExecuted) tooLong(s.offset);
      switch (s.kind) {
        case StmtKind::kReads:
        case StmtKind::kRead:
          shapes_[static_cast<size_t>(s.value)] = guarded([&] { return evalType(s.type, env()); });
          break;
        case StmtKind::kOp:
          checkOp(s);
          break;
        case StmtKind::kConstant: {
          hlo::Shape shape = guarded([&] { return evalType(s.type, env()); });
          guarded([&] {
            checkLiteral(s.literal, shape, env());
            return 0;
          });
          shapes_[static_cast<size_t>(s.value)] = shape;
          break;
        }
        case StmtKind::kIf:
          if (s.expr.usesState()) {
            walk(s.body);  // decided by machine state: both branches must type-check
            walk(s.else_body);
          } else if (guarded([&] { return evalExpr(s.expr, env()); }) != 0) {
            walk(s.body);
          } else {
            walk(s.else_body);
          }
          break;
        case StmtKind::kRepeat:
          repeat(s);
          break;
        default:
          break;
      }
    }
  }

  void repeat(const Stmt& s) {
    auto slot = static_cast<size_t>(s.loop);
    bool shapes_use_loop = usesLoopInShapes(s.body, s.loop);
    if (s.expr.usesState() || s.expr2.usesState()) {
      if (shapes_use_loop) {
        isa_.fail(s.name.offset,
                  "loop variable " + s.name.text +
                      " is used in a type, attribute or condition, but the loop bounds depend "
                      "on machine state (a register or a let)",
                  "shapes that depend on machine state cannot be planned");
      }
      loops_[slot] = 0;
      walk(s.body);
      return;
    }
    int64_t lo = guarded([&] { return evalExpr(s.expr, env()); });
    int64_t hi = guarded([&] { return evalExpr(s.expr2, env()); });
    if (!shapes_use_loop) {
      // Every iteration has the same types: check one, count them all.
      loops_[slot] = lo;
      if (lo >= hi) return;
      walk(s.body);
      int64_t per_iteration = countStatements(s.body);
      if (hi - lo - 1 > (kMaxStatementsExecuted - executed_) / std::max<int64_t>(per_iteration, 1))
        tooLong(s.offset);
      executed_ += (hi - lo - 1) * per_iteration;
      return;
    }
    for (int64_t i = lo; i < hi; ++i) {
      loops_[slot] = i;
      walk(s.body);
    }
  }

  void checkDeferred() {
    for (const DeferredTypeEq& d : facts_.deferred) {
      bool loop_dependent = false;
      for (const Expr& e : d.a->dims)
        loop_dependent |= e.uses(RefKind::kLoop);
      for (const Expr& e : d.b->dims)
        loop_dependent |= e.uses(RefKind::kLoop);
      if (loop_dependent) continue;  // compared per iteration by the oracle's shape checks
      hlo::Shape a = guarded([&] { return evalType(*d.a, env()); });
      hlo::Shape b = guarded([&] { return evalType(*d.b, env()); });
      if (a.dims() != b.dims()) failAt(d.offset, d.what);
    }
  }

  Checker& c_;
  Isa& isa_;
  const Instruction& inst_;
  int32_t index_;
  const BodyFacts& facts_;
  std::vector<Axis> axes_;
  bool exhaustive_ = true;
  std::string too_long_;  // the first point beyond the statement limit
  uint32_t too_long_offset_ = 0;
  std::vector<Expr> filters_;
  std::vector<int64_t> attrs_;
  std::vector<int64_t> loops_;
  std::vector<hlo::Shape> shapes_;
  int64_t executed_ = 0;
  hlo::HloModule reducers_;
  std::map<std::pair<hlo::HloOpcode, hlo::PrimitiveType>, hlo::HloComputation*> cache_;
};

}  // namespace

void checkTypes(Checker& checker, int32_t instruction, const BodyFacts& facts) {
  TypeChecker(checker, instruction, facts).run();
}

}  // namespace tacit::taidl
