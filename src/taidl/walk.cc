#include "taidl/walk.h"

#include "taidl/printer.h"

namespace tacit::taidl {

size_t SpecKeyHash::operator()(const SpecKey& k) const {
  uint64_t h = 0xcbf29ce484222325ULL;
  for (int64_t w : k.words) {
    h ^= static_cast<uint64_t>(w);
    h *= 0x100000001b3ULL;
    h ^= h >> 29;
  }
  return static_cast<size_t>(h);
}

void failAtCall(const Isa& isa, const CallSite& site, uint32_t spec_offset, std::string message) {
  Diagnostic d = makeError(site.file, site.loc, std::move(message));
  Diagnostic note =
      makeError(isa.fileName(), isa.loc(spec_offset), "in the spec of the instruction");
  note.severity = Severity::kNote;
  d.notes.push_back(std::move(note));
  throw DiagnosticError(std::move(d));
}

namespace {

class Walker {
 public:
  Walker(const Isa& isa, const Instruction& inst, std::span<const int64_t> attrs,
         std::span<int64_t> regs, const WalkOptions& options, WalkResult& out)
      : isa_(isa), inst_(inst), attrs_(attrs), regs_(regs), options_(options), out_(out) {}

  void run() {
    out_.key.words.assign(attrs_.begin(), attrs_.begin() + inst_.num_alpha);
    out_.starts.clear();
    out_.accesses = 0;
    out_.loops.assign(inst_.loop_names.size(), 0);
    for (const Stmt* r : inst_.requires_)
      require(*r);
    out_.cost = inst_.cost ? eval(inst_.cost->expr) : 1;
    block(inst_.body);
    for (const Stmt* w : inst_.writes)
      access(*w, true);
  }

 private:
  EvalEnv env() const { return EvalEnv{attrs_, regs_, out_.loops}; }

  int64_t eval(const Expr& e) {
    try {
      return evalExpr(e, env());
    } catch (const ExprError& err) {
      failAtCall(isa_, options_.site, err.offset,
                 err.message + " in `" + exprText(e) + "` while executing " +
                     isa_.callText(inst_, attrs_));
    }
  }

  void require(const Stmt& r) {
    if (eval(r.expr) != 0) return;
    std::string message = "constraint `" + exprText(r.expr) + "` of " + inst_.name.text +
                          " is violated by " + isa_.callText(inst_, attrs_) + registersText(r.expr);
    if (options_.constraints == ConstraintMode::kError)
      failAtCall(isa_, options_.site, r.offset, message);
    if (options_.warnings) {
      Diagnostic d = makeWarning(options_.site.file, options_.site.loc, message);
      Diagnostic note = isa_.warning(r.offset, "the constraint");
      note.severity = Severity::kNote;
      d.notes.push_back(std::move(note));
      options_.warnings->report(std::move(d));
    }
  }

  std::string registersText(const Expr& e) const {
    std::string out;
    for (const ExprNode& n : e.nodes()) {
      if (n.op != ExprOp::kRef || n.ref != RefKind::kReg) continue;
      std::string item =
          "$" + e.refName(n) + "=" + std::to_string(regs_[static_cast<size_t>(n.slot)]);
      if (out.find(item) == std::string::npos) out += (out.empty() ? " with " : ", ") + item;
    }
    return out;
  }

  void access(const Stmt& s, bool declared_write) {
    const Buffer& b = isa_.buffers[static_cast<size_t>(s.buffer_index)];
    for (const Expr& e : s.starts)
      out_.starts.push_back(eval(e));
    if (s.kind == StmtKind::kReads || declared_write) {
      for (size_t k = 0; k < b.unit.size(); ++k)
        out_.starts.push_back(0);
    }
    ++out_.accesses;
  }

  void count(const Stmt& s) {
    if (++executed_ > kMaxStatementsExecuted)
      failAtCall(isa_, options_.site, s.offset,
                 isa_.callText(inst_, attrs_) + " executes more than " +
                     std::to_string(kMaxStatementsExecuted) + " statements");
  }

  void block(const std::vector<Stmt>& body) {
    for (const Stmt& s : body) {
      count(s);
      switch (s.kind) {
        case StmtKind::kSet:
          regs_[static_cast<size_t>(s.reg)] = eval(s.expr);
          break;
        case StmtKind::kReads:
        case StmtKind::kRead:
        case StmtKind::kWrite:
          access(s, false);
          break;
        case StmtKind::kIf: {
          bool taken = eval(s.expr) != 0;
          out_.key.words.push_back(taken ? 1 : 0);
          block(taken ? s.body : s.else_body);
          break;
        }
        case StmtKind::kRepeat: {
          int64_t lo = eval(s.expr), hi = eval(s.expr2);
          int64_t trips = hi > lo ? hi - lo : 0;
          out_.key.words.push_back(lo);
          out_.key.words.push_back(trips);
          for (int64_t i = 0; i < trips; ++i) {
            out_.loops[static_cast<size_t>(s.loop)] = lo + i;
            block(s.body);
          }
          break;
        }
        default:
          break;  // require/cost at entry, writes at the end, ops are data
      }
    }
  }

  const Isa& isa_;
  const Instruction& inst_;
  std::span<const int64_t> attrs_;
  std::span<int64_t> regs_;
  const WalkOptions& options_;
  WalkResult& out_;
  int64_t executed_ = 0;
};

}  // namespace

void walk(const Isa& isa, int32_t instruction, std::span<const int64_t> attrs,
          std::span<int64_t> regs, const WalkOptions& options, WalkResult& out) {
  const Instruction& inst = isa.instructions[static_cast<size_t>(instruction)];
  if (attrs.size() != inst.attrs.size() || regs.size() != isa.registers.size())
    fail("walk: " + inst.name.text + " takes " + std::to_string(inst.attrs.size()) +
         " attributes and " + std::to_string(isa.registers.size()) + " registers");
  Walker(isa, inst, attrs, regs, options, out).run();
}

std::vector<ExpandedCall> expandMacro(const Isa& isa, int32_t macro, std::span<const int64_t> attrs,
                                      const CallSite& site) {
  const Macro& m = isa.macros[static_cast<size_t>(macro)];
  std::vector<ExpandedCall> out;
  for (const Call& c : m.calls) {
    std::vector<int64_t> values;
    for (const Expr& e : c.bound) {
      try {
        values.push_back(evalExpr(e, EvalEnv{attrs, {}, {}}));
      } catch (const ExprError& err) {
        failAtCall(isa, site, err.offset, err.message + " in an argument of macro " + m.name.text);
      }
    }
    if (!c.callee_is_macro) {
      out.push_back(ExpandedCall{c.callee_index, std::move(values)});
      continue;
    }
    for (ExpandedCall& inner : expandMacro(isa, c.callee_index, values, site))
      out.push_back(std::move(inner));
  }
  return out;
}

}  // namespace tacit::taidl
