// Warnings (docs/taidl.md section 8.7): unused values, unused attributes, writes that a later
// write overwrites before any read, and if conditions that are constant (for every attribute
// value the constraints allow).
#include <map>

#include "taidl/check.h"
#include "taidl/printer.h"

namespace tacit::taidl {
namespace {

class WarningChecker {
 public:
  WarningChecker(Checker& c, int32_t index, const BodyFacts& facts,
                 const std::vector<Interval>& attr_bounds)
      : c_(c),
        isa_(c.isa()),
        inst_(isa_.instructions[static_cast<size_t>(index)]),
        facts_(facts),
        attr_bounds_(attr_bounds) {
    for (const AccessInfo& a : facts.accesses)
      value_types_[a.stmt] = a.value_type;
  }

  void run() {
    unusedValues();
    unusedAttributes();
    conditions(inst_.body);
    overwrites(inst_.body, true);
  }

 private:
  void unusedValues() {
    for (size_t i = 0; i < facts_.value_defs.size(); ++i) {
      const Stmt* def = facts_.value_defs[i];
      if (!def || facts_.value_used[i] || def->kind == StmtKind::kReads) continue;
      c_.warn(def->name.offset, "value %" + inst_.value_names[i] + " is never used");
    }
  }

  void unusedAttributes() {
    for (size_t i = 0; i < inst_.attrs.size(); ++i) {
      if (facts_.attr_used[i]) continue;
      c_.warn(inst_.attrs[i].name.offset, "attribute " + inst_.attrs[i].name.text + " of " +
                                              inst_.name.text + " is never used");
    }
  }

  void conditions(const std::vector<Stmt>& body) {
    for (const Stmt& s : body) {
      if (s.kind == StmtKind::kIf) condition(s);
      conditions(s.body);
      conditions(s.else_body);
    }
  }

  void condition(const Stmt& s) {
    if (s.expr.usesState() || s.expr.uses(RefKind::kLoop)) return;
    bool constant = !s.expr.uses(RefKind::kAlpha);
    Interval v = boundExpr(s.expr, [&](Var var) {
      return var.kind == RefKind::kAlpha ? attr_bounds_[static_cast<size_t>(var.slot)]
                                         : Interval::all();
    });
    bool always = !v.contains(0), never = v.lo == 0 && v.hi == 0;
    if (!always && !never) return;
    std::string when = constant ? "" : " for every attribute value the constraints allow";
    c_.warn(s.expr.offset(),
            "condition `" + exprText(s.expr) + "` is always " + (always ? "true" : "false") + when,
            always ? "the else branch never executes" : "the branch never executes");
  }

  static bool sameExprs(const std::vector<Expr>& a, const std::vector<Expr>& b) {
    if (a.size() != b.size()) return false;
    for (size_t i = 0; i < a.size(); ++i) {
      auto pa = toPoly(a[i]), pb = toPoly(b[i]);
      bool same = (pa && pb) ? *pa == *pb : a[i].sameAs(b[i]);
      if (!same) return false;
    }
    return true;
  }

  bool sameSlice(const Stmt& a, const Stmt& b) {
    if (a.buffer_index != b.buffer_index || a.kind != b.kind) return false;
    const TypeExpr* ta = value_types_[&a];
    const TypeExpr* tb = value_types_[&b];
    return ta && tb && sameExprs(a.starts, b.starts) && compareTypes(*ta, *tb) == TypeEq::kEqual;
  }

  static bool touchesBuffer(const Stmt& s, int32_t buffer, bool reads_only) {
    bool is_read = s.kind == StmtKind::kRead || s.kind == StmtKind::kReads;
    bool is_write = s.kind == StmtKind::kWrite;
    if (s.buffer_index == buffer && (is_read || (!reads_only && is_write))) return true;
    for (const Stmt& t : s.body)
      if (touchesBuffer(t, buffer, reads_only)) return true;
    for (const Stmt& t : s.else_body)
      if (touchesBuffer(t, buffer, reads_only)) return true;
    return false;
  }

  void overwrites(const std::vector<Stmt>& body, bool top) {
    for (size_t i = 0; i < body.size(); ++i) {
      const Stmt& w = body[i];
      overwrites(w.body, false);
      overwrites(w.else_body, false);
      if (w.kind == StmtKind::kWrite) explicitOverwrite(body, i, top);
    }
    if (!top) return;
    // Declared writes happen at the end, in declaration order.
    for (size_t i = 0; i < inst_.writes.size(); ++i) {
      for (size_t j = i + 1; j < inst_.writes.size(); ++j) {
        if (sameSlice(*inst_.writes[i], *inst_.writes[j])) {
          report(*inst_.writes[i], *inst_.writes[j]);
          break;
        }
      }
    }
  }

  void explicitOverwrite(const std::vector<Stmt>& body, size_t i, bool top) {
    const Stmt& w = body[i];
    for (size_t j = i + 1; j < body.size(); ++j) {
      const Stmt& s = body[j];
      if (s.kind == StmtKind::kWrite && sameSlice(w, s)) {
        report(w, s);
        return;
      }
      if (touchesBuffer(s, w.buffer_index, true)) return;
    }
    (void)top;
  }

  void report(const Stmt& first, const Stmt& later) {
    c_.warn(first.offset, "this write to " + first.buffer.text +
                              " is overwritten by the write at " + isa_.locText(later.offset) +
                              " before it is read");
  }

  Checker& c_;
  Isa& isa_;
  const Instruction& inst_;
  const BodyFacts& facts_;
  const std::vector<Interval>& attr_bounds_;
  std::map<const Stmt*, const TypeExpr*> value_types_;
};

}  // namespace

void checkWarnings(Checker& checker, int32_t instruction, const BodyFacts& facts,
                   const std::vector<Interval>& attr_bounds) {
  WarningChecker(checker, instruction, facts, attr_bounds).run();
}

}  // namespace tacit::taidl
