// Symbolic execution of instructions and macros (docs/taidl.md section 5).
//
// A unit (an instruction, or a macro flattened into its instruction calls) is executed with its
// attributes as symbols. Registers start unknown and take the symbolic value of each `set`;
// an `if` whose condition becomes a constant is decided, one over computational attributes is
// split into two cases, one over addressing attributes or unknown registers makes the unit not
// selectable; `repeat`s with constant bounds are unrolled. Reads look back through the writes of
// the unit: the same slice forwards the written value, a provably disjoint one is skipped,
// anything else is not selectable. Reads that reach the machine state become inputs (whole units,
// affine addresses), and the writes that are not overwritten by a later write of the same slice
// become the outputs.
#include "taidl/symbolic.h"

#include <algorithm>
#include <map>

#include "hlo/builder.h"
#include "support/strings.h"
#include "taidl/check.h"
#include "taidl/ops.h"
#include "taidl/printer.h"
#include "taidl/simplify.h"

namespace tacit::taidl {
namespace {

// Why the unit is not selectable (thrown from deep inside the execution).
struct NotSelectable {
  std::string reason;
  uint32_t offset;
};

struct FlatCall {
  int32_t instruction = -1;
  std::vector<Expr> args;  // one per instruction attribute, over the unit's attributes
  uint32_t offset = 0;     // the call in the macro (0 for an instruction unit)
};

struct MemWrite {
  int32_t buffer;
  std::vector<Expr> starts;   // full rank
  std::vector<Expr> extents;  // full rank
  int32_t value;
  uint32_t offset;
  size_t call;
  bool superseded = false;
};

struct Frame {
  const std::vector<Stmt>* block;
  size_t next = 0;
  int32_t loop = -1;
  int64_t end = 0;
};

struct State {
  std::vector<std::optional<Expr>> regs;
  SymCase kase;
  std::vector<uint32_t> op_offsets;  // per op: its statement
  std::vector<MemWrite> writes;
  size_t call = 0;
  bool in_call = false;
  std::vector<Frame> frames;
  std::vector<int32_t> values;  // value slot of the current call -> op
  std::vector<int64_t> loops;
  std::vector<std::optional<Expr>> loop_exprs;  // a one-trip loop over alpha bounds: its value
  std::vector<Expr> lets;                       // let slot of the current call -> its kLet ref
  std::vector<const Stmt*> let_stmts;           // per let of the case: its statement
  int64_t executed = 0;
};

Expr negate(const Expr& c) {
  const ExprNode& r = c.root();
  ExprOp flipped;
  switch (r.op) {
    case ExprOp::kEq:
      flipped = ExprOp::kNe;
      break;
    case ExprOp::kNe:
      flipped = ExprOp::kEq;
      break;
    case ExprOp::kLt:
      flipped = ExprOp::kGe;
      break;
    case ExprOp::kLe:
      flipped = ExprOp::kGt;
      break;
    case ExprOp::kGt:
      flipped = ExprOp::kLe;
      break;
    case ExprOp::kGe:
      flipped = ExprOp::kLt;
      break;
    default:
      return Expr::unary(ExprOp::kNot, c);
  }
  return Expr::binary(flipped, c.subtree(r.a), c.subtree(r.b));
}

// Expressions here are simplified: polynomials are in canonical form, so structural equality is
// polynomial equality.
bool sameValue(const Expr& a, const Expr& b) {
  return a.sameAs(b);
}

bool sameList(const std::vector<Expr>& a, const std::vector<Expr>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (!sameValue(a[i], b[i])) return false;
  }
  return true;
}

// a + ea <= b (constant difference), i.e. [a, a + ea) ends before b starts.
bool endsBefore(const Expr& a, const Expr& ea, const Expr& b) {
  auto pa = toPoly(a), pe = toPoly(ea), pb = toPoly(b);
  if (!pa || !pe || !pb) return false;
  Poly d = *pa;
  if (!d.add(*pe) || !d.add(*pb, -1)) return false;
  auto c = d.constantValue();
  return c && *c <= 0;
}

bool disjoint(const MemWrite& w, const std::vector<Expr>& starts,
              const std::vector<Expr>& extents) {
  for (size_t k = 0; k < starts.size() && k < w.starts.size(); ++k) {
    if (endsBefore(w.starts[k], w.extents[k], starts[k]) ||
        endsBefore(starts[k], extents[k], w.starts[k]))
      return true;
  }
  return false;
}

class Composer {
 public:
  Composer(const Isa& isa, std::vector<FlatCall> calls, const std::vector<Attribute>& attrs,
           std::string unit, bool is_macro, std::span<const int64_t> entry = {},
           std::vector<std::vector<int64_t>>* exits = nullptr,
           const std::vector<bool>* dropped_buffers = nullptr)
      : entry_(entry.begin(), entry.end()),
        exits_(exits),
        dropped_(dropped_buffers),
        isa_(isa),
        calls_(std::move(calls)),
        attrs_(attrs),
        unit_(std::move(unit)),
        is_macro_(is_macro) {}

  Semantics run() {
    Semantics sem;
    try {
      State init;
      init.regs.assign(isa_.registers.size(), std::nullopt);
      for (size_t r = 0; r < entry_.size() && r < init.regs.size(); ++r)
        init.regs[r] = Expr::integer(entry_[r]);
      init.kase.cost = Expr::integer(0);
      work_.push_back(std::move(init));
      while (!work_.empty()) {
        State st = std::move(work_.back());
        work_.pop_back();
        execute(st);
        finish(st);
        if (done_.size() + work_.size() > static_cast<size_t>(kMaxCases))
          throw NotSelectable{"more than " + std::to_string(kMaxCases) +
                                  " cases (if statements on computational attributes)",
                              0};
      }
      if (done_.empty() && writes_nothing_)
        throw NotSelectable{unit_ + " writes no buffer (it only changes registers)", 0};
      if (done_.empty()) throw NotSelectable{"no case of " + unit_ + " is feasible", 0};
      sem.selectable = true;
      sem.cases = std::move(done_);
      sem.let_fields = fields_;
    } catch (const NotSelectable& n) {
      sem.selectable = false;
      sem.reason = n.reason;
      sem.reason_loc = isa_.loc(n.offset);
      sem.cases.clear();
    }
    return sem;
  }

 private:
  // ---- expressions ----
  std::string varName(Var v) const {
    if ((v.kind == RefKind::kAlpha || v.kind == RefKind::kBeta) && v.slot >= 0 &&
        static_cast<size_t>(v.slot) < attrs_.size())
      return attrs_[static_cast<size_t>(v.slot)].name.text;
    if (v.kind == RefKind::kBeta && v.slot >= 0 &&
        static_cast<size_t>(v.slot) < attrs_.size() + fields_.size())
      return fields_[static_cast<size_t>(v.slot) - attrs_.size()].name;
    return "?";
  }

  Expr simp(const Expr& e) const {
    return simplify(e, [this](Var v) { return varName(v); });
  }

  std::string where(const State& st) const { return where(st.call); }

  // `call`: the call of a macro being composed (in `finish`, the call that wrote a slice: the
  // state's own index is then past the last call).
  std::string where(size_t call) const {
    if (!is_macro_ || call >= calls_.size()) return "";
    const FlatCall& fc = calls_[call];
    return "call " + std::to_string(call + 1) + " (" +
           isa_.instructions[static_cast<size_t>(fc.instruction)].name.text + "): ";
  }

  std::string at(uint32_t offset) const { return " (at " + isa_.locText(offset) + ")"; }

  // The expression over the unit's attributes; `unknown` receives a register read that has no
  // known value (the result is then empty).
  Expr subst(const Expr& e, const State& st, int32_t* unknown) const {
    const FlatCall& fc = calls_[st.call];
    // Registers hold expressions: `set $x = min($x, $x)` doubles one per step. Bound the size
    // before building it.
    size_t size = 0;
    for (const ExprNode& n : e.nodes()) {
      size_t k = 1;
      if (n.op == ExprOp::kRef && n.ref == RefKind::kReg && st.regs[static_cast<size_t>(n.slot)])
        k = st.regs[static_cast<size_t>(n.slot)]->nodes().size();
      if (n.op == ExprOp::kRef && (n.ref == RefKind::kAlpha || n.ref == RefKind::kBeta))
        k = fc.args[static_cast<size_t>(n.slot)].nodes().size();
      size += k;
    }
    if (size > kMaxSymbolicExprNodes)
      throw NotSelectable{where(st) + "an expression grows beyond " +
                              std::to_string(kMaxSymbolicExprNodes) + " operators",
                          e.offset()};
    bool failed = false;
    Expr out = e.substitute([&](const Expr&, const ExprNode& n) -> std::optional<Expr> {
      switch (n.ref) {
        case RefKind::kAlpha:
        case RefKind::kBeta:
          return fc.args[static_cast<size_t>(n.slot)];
        case RefKind::kLoop:
          if (const auto& sym = st.loop_exprs[static_cast<size_t>(n.slot)]) return *sym;
          return Expr::integer(st.loops[static_cast<size_t>(n.slot)]);
        case RefKind::kLet:
          return st.lets[static_cast<size_t>(n.slot)];
        case RefKind::kReg: {
          const auto& r = st.regs[static_cast<size_t>(n.slot)];
          if (r) return *r;
          if (!failed && unknown) *unknown = n.slot;
          failed = true;
          return Expr::integer(0);
        }
        default:
          return std::nullopt;
      }
    });
    if (failed) return Expr();
    return simp(out);
  }

  // Like subst, but an unknown register makes the unit not selectable.
  Expr need(const Expr& e, const State& st, std::string_view what, uint32_t offset) const {
    int32_t reg = -1;
    Expr out = subst(e, st, &reg);
    if (!out.empty()) return out;
    throw NotSelectable{where(st) + std::string(what) + " `" + exprText(e) + "` reads register $" +
                            isa_.registers[static_cast<size_t>(reg)].name.text +
                            ", which is not set before it (machine state)" + at(offset),
                        offset};
  }

  TypeExpr substType(const TypeExpr& t, const State& st) const {
    TypeExpr out{t.dtype, {}, t.offset};
    for (const Expr& d : t.dims)
      out.dims.push_back(need(d, st, "dimension", d.offset()));
    return out;
  }

  LiteralValue substLiteral(const LiteralValue& v, const State& st) const {
    LiteralValue out = v;
    if (v.kind == LiteralValue::Kind::kExpr) out.expr = need(v.expr, st, "literal", v.offset);
    out.elements.clear();
    for (const LiteralValue& e : v.elements)
      out.elements.push_back(substLiteral(e, st));
    return out;
  }

  std::vector<OpAttr> substAttrs(const std::vector<OpAttr>& attrs, const State& st) const {
    std::vector<OpAttr> out = attrs;
    auto fix = [&](Expr& e) {
      if (!e.empty()) e = need(e, st, "attribute", e.offset());
    };
    for (OpAttr& a : out) {
      if (a.name.text == "direction" || a.name.text == "type" || a.name.text == "to_apply")
        continue;
      fix(a.expr);
      for (Expr& e : a.list)
        fix(e);
      for (RangeExpr& r : a.ranges) {
        fix(r.start);
        fix(r.limit);
        fix(r.stride);
      }
    }
    return out;
  }

  // ---- execution ----
  const Instruction& callee(const State& st) const {
    return isa_.instructions[static_cast<size_t>(calls_[st.call].instruction)];
  }

  void startCall(State& st) {
    const Instruction& inst = callee(st);
    st.values.assign(inst.value_names.size(), -1);
    st.loops.assign(inst.loop_names.size(), 0);
    st.loop_exprs.assign(inst.loop_names.size(), std::nullopt);
    st.lets.assign(inst.let_names.size(), Expr());
    for (const Stmt* r : inst.requires_) {
      Expr c = need(r->expr, st, "require", r->offset);
      if (auto v = c.constantValue()) {
        if (*v != 0) continue;
        // Entered in a concrete register state, the call cannot execute in that state: the
        // macro does not follow a protocol through it (not an error in the spec).
        if (!entry_.empty())
          throw NotSelectable{where(st) + "its constraint `" + exprText(r->expr) +
                                  "` is false in a reachable register state" + at(r->offset),
                              r->offset};
        uint32_t site = is_macro_ ? calls_[st.call].offset : r->offset;
        isa_.fail(site, (is_macro_ ? "call " + std::to_string(st.call + 1) + " (" + inst.name.text +
                                         ") can never execute in " + unit_
                                   : unit_ + " can never execute") +
                            ": its constraint `" + exprText(r->expr) + "` (at " +
                            isa_.locText(r->offset) + ") is always false here");
      }
      std::vector<Expr> parts;
      splitConjunctsLocal(c, parts);
      for (Expr& p : parts) {
        if (!p.constantValue()) st.kase.constraints.push_back(std::move(p));
      }
    }
    Expr cost = inst.cost ? need(inst.cost->expr, st, "cost", inst.cost->offset) : Expr::integer(1);
    st.kase.cost = simp(Expr::binary(ExprOp::kAdd, st.kase.cost, cost));
    st.frames = {Frame{&inst.body}};
    st.in_call = true;
  }

  static void splitConjunctsLocal(const Expr& e, std::vector<Expr>& out) {
    if (e.root().op != ExprOp::kAnd) {
      out.push_back(e);
      return;
    }
    splitConjunctsLocal(e.subtree(e.root().a), out);
    splitConjunctsLocal(e.subtree(e.root().b), out);
  }

  void endCall(State& st) {
    const Instruction& inst = callee(st);
    for (const Stmt* w : inst.writes) {
      const Buffer& b = isa_.buffers[static_cast<size_t>(w->buffer_index)];
      std::vector<Expr> starts, extents;
      for (size_t k = 0; k < w->starts.size(); ++k) {
        starts.push_back(address(w->starts[k], st));
        extents.push_back(need(w->sizes[k], st, "size", w->sizes[k].offset()));
      }
      for (int64_t u : b.unit) {
        starts.push_back(Expr::integer(0));
        extents.push_back(Expr::integer(u));
      }
      addWrite(st, w->buffer_index, std::move(starts), std::move(extents),
               st.values[static_cast<size_t>(w->value)], w->offset);
    }
    st.in_call = false;
    ++st.call;
  }

  void execute(State& st) {
    while (true) {
      if (!st.in_call) {
        if (st.call == calls_.size()) return;
        startCall(st);
      }
      if (st.frames.empty()) {
        endCall(st);
        continue;
      }
      Frame& f = st.frames.back();
      if (f.next == f.block->size()) {
        if (f.loop >= 0 && ++st.loops[static_cast<size_t>(f.loop)] < f.end) {
          f.next = 0;
          continue;
        }
        st.frames.pop_back();
        continue;
      }
      const Stmt& s = (*f.block)[f.next++];
      if (++st.executed > kMaxSymbolicStatements)
        throw NotSelectable{unit_ + " unrolls to more than " +
                                std::to_string(kMaxSymbolicStatements) + " statements",
                            s.offset};
      statement(st, s);
    }
  }

  void statement(State& st, const Stmt& s) {
    switch (s.kind) {
      case StmtKind::kSet: {
        int32_t reg = -1;
        Expr v = subst(s.expr, st, &reg);  // an unknown operand leaves the register unknown
        st.regs[static_cast<size_t>(s.reg)] = v.empty() ? std::nullopt : std::optional<Expr>(v);
        return;
      }
      case StmtKind::kLet:
        let(st, s);
        return;
      case StmtKind::kReads:
      case StmtKind::kRead:
        read(st, s);
        return;
      case StmtKind::kWrite: {
        std::vector<Expr> starts;
        for (const Expr& e : s.starts)
          starts.push_back(address(e, st));
        int32_t v = st.values[static_cast<size_t>(s.value)];
        addWrite(st, s.buffer_index, std::move(starts),
                 st.kase.ops[static_cast<size_t>(v)].type.dims, v, s.offset);
        return;
      }
      case StmtKind::kOp:
      case StmtKind::kConstant:
        operation(st, s);
        return;
      case StmtKind::kIf:
        branch(st, s);
        return;
      case StmtKind::kRepeat: {
        Expr lo = need(s.expr, st, "repeat bound", s.expr.offset());
        Expr hi = need(s.expr2, st, "repeat bound", s.expr2.offset());
        auto l = lo.constantValue(), h = hi.constantValue();
        if (!l || !h) {
          oneTrip(st, s, lo, hi);
          return;
        }
        if (*l < *h) {
          st.loops[static_cast<size_t>(s.loop)] = *l;
          st.frames.push_back(Frame{&s.body, 0, s.loop, *h});
        }
        return;
      }
      default:
        return;  // require/cost at entry, writes at the end
    }
  }

  // A loop whose bounds are computational attributes (a LOAD's row count, a GEMM's own loop nest)
  // is selected with one trip: the case gains `hi == lo + 1`, and the body runs once with the loop
  // variable at `lo`. More trips are the compiler's own loops (docs/taidl.md section 5).
  void oneTrip(State& st, const Stmt& s, const Expr& lo, const Expr& hi) {
    if (lo.uses(RefKind::kLet) || hi.uses(RefKind::kLet))
      throw NotSelectable{where(st) + "repeat bounds [" + exprText(lo) + ", " + exprText(hi) +
                              ") depend on data" + at(s.offset),
                          s.offset};
    Expr one =
        simp(Expr::binary(ExprOp::kEq, hi, Expr::binary(ExprOp::kAdd, lo, Expr::integer(1))));
    if (auto v = one.constantValue(); v && *v == 0) return;  // never one trip: no case
    if (!one.constantValue()) {
      st.kase.path.push_back(one);
      st.kase.constraints.push_back(one);
    }
    st.loops[static_cast<size_t>(s.loop)] = 0;
    st.loop_exprs[static_cast<size_t>(s.loop)] = lo;
    st.frames.push_back(Frame{&s.body, 0, s.loop, 1});
  }

  // `let NAME = B[starts]`: the element's word becomes a kLet reference (its index in the case's
  // lets); its uses in addresses become bit fields (address()).
  void let(State& st, const Stmt& s) {
    SymLet l;
    l.buffer = s.buffer_index;
    l.loc = isa_.loc(s.offset);
    for (const Expr& e : s.starts) {
      Expr start = need(e, st, "let index", e.offset());
      if (start.uses(RefKind::kBeta) || start.uses(RefKind::kLet))
        throw NotSelectable{where(st) + "let " + s.name.text + " reads " + s.buffer.text + " at `" +
                                exprText(start) +
                                "`, an index that depends on addressing attributes or data" +
                                at(s.offset),
                            s.offset};
      l.starts.push_back(std::move(start));
    }
    auto id = static_cast<int32_t>(st.kase.lets.size());
    st.kase.lets.push_back(std::move(l));
    st.lets[static_cast<size_t>(s.loop)] = Expr::ref(RefKind::kLet, id, s.name.text);
    st.let_stmts.push_back(&s);
  }

  // An address: a let's word may appear in it only as bit fields `word // d % m` (d and m
  // constants), each replaced by its addressing attribute.
  Expr address(const Expr& e, State& st) {
    Expr a = need(e, st, "address", e.offset());
    if (!a.uses(RefKind::kLet)) return a;
    Expr out = fields(a, a.rootIndex(), st, e.offset());
    return simp(out);
  }

  Expr fields(const Expr& e, int32_t i, State& st, uint32_t offset) {
    const ExprNode& n = e.node(i);
    auto isWord = [&](int32_t k) {
      return e.node(k).op == ExprOp::kRef && e.node(k).ref == RefKind::kLet;
    };
    auto constant = [&](int32_t k) -> int64_t {
      auto v = e.subtree(k).constantValue();
      return v && *v > 0 ? *v : 0;
    };
    int32_t word = -1;
    int64_t d = 1, m = 0;
    if (isWord(i)) {
      word = i;
    } else if (n.op == ExprOp::kFloorDiv && isWord(n.a) && constant(n.b)) {
      word = n.a, d = constant(n.b);
    } else if (n.op == ExprOp::kMod && constant(n.b)) {
      const ExprNode& x = e.node(n.a);
      if (isWord(n.a)) {
        word = n.a, m = constant(n.b);
      } else if (x.op == ExprOp::kFloorDiv && isWord(x.a) && constant(x.b)) {
        word = x.a, d = constant(x.b), m = constant(n.b);
      }
    }
    if (word >= 0) return field(st, e.node(word).slot, d, m);
    if (!e.subtree(i).uses(RefKind::kLet)) return e.subtree(i);
    switch (n.op) {
      case ExprOp::kNeg:
        return Expr::unary(n.op, fields(e, n.a, st, offset));
      case ExprOp::kAdd:
      case ExprOp::kSub:
      case ExprOp::kMul:
        return Expr::binary(n.op, fields(e, n.a, st, offset), fields(e, n.b, st, offset));
      default: {
        const Stmt& s = *st.let_stmts[static_cast<size_t>(firstLet(e, i))];
        throw NotSelectable{
            where(st) + "the address `" + exprText(e) + "` uses let " + s.name.text +
                " other than as bit fields `word // d % m` of its word" + at(offset),
            offset};
      }
    }
  }

  static int32_t firstLet(const Expr& e, int32_t i) {
    Expr sub = e.subtree(i);
    for (const ExprNode& n : sub.nodes())
      if (n.op == ExprOp::kRef && n.ref == RefKind::kLet) return n.slot;
    return 0;
  }

  // The attribute of field (d, m) of let `id` of this case (one slot per field over all cases).
  Expr field(State& st, int32_t id, int64_t d, int64_t m) {
    SymLet& l = st.kase.lets[static_cast<size_t>(id)];
    for (int32_t f : l.fields) {
      const SymLetField& x = fields_[static_cast<size_t>(f)];
      if (x.divisor == d && x.modulus == m) return Expr::ref(RefKind::kBeta, x.slot, x.name);
    }
    // The same let statement in another case, at the same position, shares the slot.
    const Stmt* s = st.let_stmts[static_cast<size_t>(id)];
    for (size_t f = 0; f < fields_.size(); ++f) {
      if (field_stmts_[f] == s && field_lets_[f] == id && fields_[f].divisor == d &&
          fields_[f].modulus == m) {
        l.fields.push_back(static_cast<int32_t>(f));
        return Expr::ref(RefKind::kBeta, fields_[f].slot, fields_[f].name);
      }
    }
    SymLetField x;
    x.slot = static_cast<int32_t>(attrs_.size() + fields_.size());
    x.divisor = d;
    x.modulus = m;
    x.name = s->name.text +
             (m ? "//" + std::to_string(d) + "%" + std::to_string(m) : "//" + std::to_string(d));
    l.fields.push_back(static_cast<int32_t>(fields_.size()));
    fields_.push_back(x);
    field_stmts_.push_back(s);
    field_lets_.push_back(id);
    return Expr::ref(RefKind::kBeta, x.slot, x.name);
  }

  // A word must be the sum of its fields: fields disjoint in the word's digits (each divisor a
  // multiple of the previous field's divisor times modulus), each field inside its modulus and
  // the word inside the buffer's element type. The bounds become the case's constraints.
  void checkLetFields(SymCase& c) const {
    for (const SymLet& l : c.lets) {
      std::vector<SymLetField> fs;
      for (int32_t f : l.fields)
        fs.push_back(fields_[static_cast<size_t>(f)]);
      std::sort(fs.begin(), fs.end(),
                [](const SymLetField& a, const SymLetField& b) { return a.divisor < b.divisor; });
      const Buffer& b = isa_.buffers[static_cast<size_t>(l.buffer)];
      int bits = hlo::bitWidth(b.dtype);
      int64_t top = bits >= 63 ? INT64_MAX : (int64_t{1} << bits);
      for (size_t k = 0; k < fs.size(); ++k) {
        int64_t end = k + 1 < fs.size() ? fs[k + 1].divisor : top;
        if (fs[k].modulus == 0 && k + 1 < fs.size())
          throw NotSelectable{"the field `" + fs[k].name + "` of a let's word overlaps `" +
                                  fs[k + 1].name + "`: the word cannot be made from its fields",
                              0};
        int64_t span = fs[k].modulus ? fs[k].divisor * fs[k].modulus : top;
        if (k + 1 < fs.size() && (end % span != 0))
          throw NotSelectable{"the fields `" + fs[k].name + "` and `" + fs[k + 1].name +
                                  "` of a let's word overlap: the word cannot be made from its "
                                  "fields",
                              0};
        Expr ref = Expr::ref(RefKind::kBeta, fs[k].slot, fs[k].name);
        int64_t limit = fs[k].modulus ? fs[k].modulus : (top - 1) / fs[k].divisor + 1;
        c.constraints.push_back(Expr::binary(ExprOp::kGe, ref, Expr::integer(0)));
        c.constraints.push_back(Expr::binary(ExprOp::kLt, ref, Expr::integer(limit)));
      }
    }
  }

  void branch(State& st, const Stmt& s) {
    Expr c = need(s.expr, st, "if condition", s.expr.offset());
    if (auto v = c.constantValue()) {
      const std::vector<Stmt>& taken = *v != 0 ? s.body : s.else_body;
      if (!taken.empty()) st.frames.push_back(Frame{&taken});
      return;
    }
    if (c.uses(RefKind::kBeta))
      throw NotSelectable{where(st) + "if condition `" + exprText(c) +
                              "` depends on an addressing attribute" + at(s.offset),
                          s.offset};
    // A condition on computational attributes: one case per branch.
    State other = st;
    Expr no = simp(negate(c));
    other.kase.path.push_back(no);
    other.kase.constraints.push_back(no);
    if (!s.else_body.empty()) other.frames.push_back(Frame{&s.else_body});
    work_.push_back(std::move(other));
    st.kase.path.push_back(c);
    st.kase.constraints.push_back(c);
    if (!s.body.empty()) st.frames.push_back(Frame{&s.body});
  }

  void operation(State& st, const Stmt& s) {
    SymOp op;
    op.opcode = s.hlo_opcode;
    op.type = substType(s.type, st);
    for (int32_t v : s.operand_values)
      op.operands.push_back(st.values[static_cast<size_t>(v)]);
    if (s.kind == StmtKind::kConstant) {
      op.opcode = hlo::HloOpcode::kConstant;
      op.literal = substLiteral(s.literal, st);
    } else {
      op.attrs = substAttrs(s.attrs, st);
    }
    op.loc = isa_.loc(s.offset);
    st.values[static_cast<size_t>(s.value)] = push(st, std::move(op), s.offset);
  }

  int32_t push(State& st, SymOp op, uint32_t offset) {
    st.kase.ops.push_back(std::move(op));
    st.op_offsets.push_back(offset);
    return static_cast<int32_t>(st.kase.ops.size()) - 1;
  }

  void read(State& st, const Stmt& s) {
    const Buffer& b = isa_.buffers[static_cast<size_t>(s.buffer_index)];
    bool declared = s.kind == StmtKind::kReads;
    std::vector<Expr> starts, extents;
    for (const Expr& e : s.starts)
      starts.push_back(address(e, st));
    const std::vector<Expr>& ext = declared ? s.sizes : s.type.dims;
    for (const Expr& e : ext)
      extents.push_back(need(e, st, "extent", e.offset()));
    if (declared) {
      for (int64_t u : b.unit) {
        starts.push_back(Expr::integer(0));
        extents.push_back(Expr::integer(u));
      }
    }
    for (auto w = st.writes.rbegin(); w != st.writes.rend(); ++w) {
      if (w->buffer != s.buffer_index) continue;
      if (sameList(w->starts, starts) && sameList(w->extents, extents)) {
        st.values[static_cast<size_t>(s.value)] = w->value;  // forwarded
        return;
      }
      if (disjoint(*w, starts, extents)) continue;
      throw NotSelectable{
          where(st) + "reads a slice of " + b.name.text + " that " +
              (is_macro_ ? "call " + std::to_string(w->call + 1) : "an earlier write") +
              " may have written in part" + at(s.offset) +
              " (not provably the same slice, nor disjoint)",
          s.offset};
    }
    SymSlice slice = makeSlice(st.call, s.buffer_index, starts, extents, s.offset, "reads");
    for (const SymSlice& in : st.kase.inputs) {
      if (in.buffer == slice.buffer && sameList(in.starts, slice.starts) &&
          sameList(in.extents, slice.extents) && in.type.dims.size() == slice.type.dims.size()) {
        st.values[static_cast<size_t>(s.value)] = in.value;  // the same slice read twice
        return;
      }
    }
    SymOp param;
    param.opcode = hlo::HloOpcode::kParameter;
    param.input = static_cast<int32_t>(st.kase.inputs.size());
    param.type = slice.type;
    param.loc = slice.loc;
    slice.value = push(st, std::move(param), s.offset);
    st.values[static_cast<size_t>(s.value)] = slice.value;
    st.kase.inputs.push_back(std::move(slice));
  }

  // A whole-unit slice with affine addresses, or not selectable.
  SymSlice makeSlice(size_t call, int32_t buffer, const std::vector<Expr>& starts,
                     const std::vector<Expr>& extents, uint32_t offset,
                     std::string_view verb) const {
    const Buffer& b = isa_.buffers[static_cast<size_t>(buffer)];
    SymSlice out;
    out.buffer = buffer;
    out.loc = isa_.loc(offset);
    out.state = b.access.empty();
    out.type.dtype = b.dtype;
    out.type.dims = extents;
    size_t access = b.access.size();
    for (size_t k = access; k < starts.size(); ++k) {
      auto s0 = starts[k].constantValue();
      auto ext = extents[k].constantValue();
      if (!s0 || *s0 != 0 || !ext || *ext != b.unit[k - access])
        throw NotSelectable{where(call) + std::string(verb) + " part of a unit of " + b.name.text +
                                " (dimension " + std::to_string(k) + ": start `" +
                                exprText(starts[k]) + "`, extent `" + exprText(extents[k]) +
                                "`); only whole units can be allocated" + at(offset),
                            offset};
    }
    for (size_t k = 0; k < access; ++k) {
      std::optional<Poly> p = toPoly(starts[k]);
      std::optional<Affine> a = p ? affineIn(*p, RefKind::kBeta) : std::nullopt;
      if (!a)
        throw NotSelectable{where(call) + "the address `" + exprText(starts[k]) + "` of " +
                                b.name.text + " is not affine in the addressing attributes" +
                                at(offset),
                            offset};
      if (extents[k].uses(RefKind::kBeta))
        throw NotSelectable{where(call) + "the extent `" + exprText(extents[k]) + "` of " +
                                b.name.text + " depends on an addressing attribute" + at(offset),
                            offset};
      out.starts.push_back(starts[k]);
      out.affine.push_back(std::move(*a));
      out.extents.push_back(extents[k]);
    }
    return out;
  }

  // A later write of the same slice replaces an earlier output. Writes that may overlap in part
  // stay separate outputs in write order (a later one wins where they overlap): the allocator
  // keeps the outputs that are used disjoint.
  void addWrite(State& st, int32_t buffer, std::vector<Expr> starts, std::vector<Expr> extents,
                int32_t value, uint32_t offset) {
    for (MemWrite& w : st.writes) {
      if (w.buffer == buffer && !w.superseded && sameList(w.starts, starts) &&
          sameList(w.extents, extents))
        w.superseded = true;
    }
    st.writes.push_back(
        MemWrite{buffer, std::move(starts), std::move(extents), value, offset, st.call});
  }

  void finish(State& st) {
    for (const MemWrite& w : st.writes) {
      if (w.superseded) continue;
      if (dropped_ && (*dropped_)[static_cast<size_t>(w.buffer)]) continue;
      SymSlice out = makeSlice(w.call, w.buffer, w.starts, w.extents, w.offset, "writes");
      out.value = w.value;
      st.kase.outputs.push_back(std::move(out));
    }
    if (st.kase.outputs.empty()) {
      // A case that writes nothing (a LOAD of zero elements) is not one to select; a unit none
      // of whose cases writes is not selectable (run()).
      writes_nothing_ = true;
      return;
    }
    checkLetFields(st.kase);
    // A case whose constraints leave some attribute no value can never be taken.
    for (const Interval& b :
         inferBounds(st.kase.constraints, static_cast<int32_t>(attrs_.size() + fields_.size()))) {
      if (b.empty()) return;
    }
    prune(st.kase);
    if (exits_) exits_->push_back(exitRegisters(st));
    done_.push_back(std::move(st.kase));
  }

  // The registers' values at the end of a case entered with concrete values: constants, or the
  // unit is not selectable this way (its effect on the machine state depends on its attributes).
  std::vector<int64_t> exitRegisters(const State& st) const {
    std::vector<int64_t> out;
    for (size_t r = 0; r < st.regs.size(); ++r) {
      std::optional<int64_t> v = st.regs[r] ? st.regs[r]->constantValue() : std::nullopt;
      if (!v)
        throw NotSelectable{unit_ + " leaves register $" + isa_.registers[r].name.text +
                                " with a value that depends on its attributes",
                            0};
      out.push_back(*v);
    }
    return out;
  }

  // Drops operations and inputs no output depends on, renumbering the rest.
  static void prune(SymCase& c) {
    std::vector<bool> live(c.ops.size(), false);
    for (const SymSlice& o : c.outputs)
      live[static_cast<size_t>(o.value)] = true;
    for (size_t i = c.ops.size(); i-- > 0;) {
      if (!live[i]) continue;
      for (int32_t o : c.ops[i].operands)
        live[static_cast<size_t>(o)] = true;
    }
    std::vector<int32_t> remap(c.ops.size(), -1);
    std::vector<SymOp> ops;
    std::vector<SymSlice> inputs;
    for (size_t i = 0; i < c.ops.size(); ++i) {
      if (!live[i]) continue;
      SymOp op = std::move(c.ops[i]);
      for (int32_t& o : op.operands)
        o = remap[static_cast<size_t>(o)];
      remap[i] = static_cast<int32_t>(ops.size());
      if (op.opcode == hlo::HloOpcode::kParameter) {
        SymSlice in = std::move(c.inputs[static_cast<size_t>(op.input)]);
        in.value = remap[i];
        op.input = static_cast<int32_t>(inputs.size());
        inputs.push_back(std::move(in));
      }
      ops.push_back(std::move(op));
    }
    for (SymSlice& o : c.outputs)
      o.value = remap[static_cast<size_t>(o.value)];
    c.ops = std::move(ops);
    c.inputs = std::move(inputs);
  }

  std::vector<int64_t> entry_;                // concrete register values at entry, if any
  std::vector<std::vector<int64_t>>* exits_;  // per finished case: registers at the end
  const std::vector<bool>* dropped_;          // buffers whose writes are not outputs
  const Isa& isa_;
  std::vector<FlatCall> calls_;
  const std::vector<Attribute>& attrs_;
  std::string unit_;
  bool is_macro_;
  std::vector<State> work_;
  std::vector<SymCase> done_;
  // The let fields over all cases (Semantics::let_fields), with the let that made each.
  std::vector<SymLetField> fields_;
  bool writes_nothing_ = false;  // some case wrote no buffer (dropped)
  std::vector<const Stmt*> field_stmts_;
  std::vector<int32_t> field_lets_;
};

std::vector<Expr> identityArgs(const std::vector<Attribute>& attrs) {
  std::vector<Expr> args;
  for (size_t i = 0; i < attrs.size(); ++i) {
    args.push_back(Expr::ref(attrs[i].alpha ? RefKind::kAlpha : RefKind::kBeta,
                             static_cast<int32_t>(i), attrs[i].name.text));
  }
  return args;
}

Expr bindArgs(const Expr& e, const std::vector<Expr>& args) {
  return e.substitute([&](const Expr&, const ExprNode& n) -> std::optional<Expr> {
    if (n.ref == RefKind::kAlpha || n.ref == RefKind::kBeta)
      return args[static_cast<size_t>(n.slot)];
    return std::nullopt;
  });
}

void flatten(const Isa& isa, const Macro& m, const std::vector<Expr>& args, uint32_t site,
             std::vector<FlatCall>& out) {
  for (const Call& c : m.calls) {
    uint32_t offset = site ? site : c.offset;
    std::vector<Expr> bound;
    for (const Expr& e : c.bound) {
      bound.push_back(bindArgs(e, args));
      if (bound.back().nodes().size() > kMaxSymbolicExprNodes)
        isa.fail(offset,
                 "the arguments of this call grow too large through nested macros (more "
                 "than " +
                     std::to_string(kMaxSymbolicExprNodes) + " operators)");
    }
    if (c.callee_is_macro) {
      flatten(isa, isa.macros[static_cast<size_t>(c.callee_index)], bound, offset, out);
    } else {
      out.push_back(FlatCall{c.callee_index, std::move(bound), offset});
    }
    if (static_cast<int64_t>(out.size()) > kMaxMacroCalls)
      isa.fail(offset, "this macro expands to more than " + std::to_string(kMaxMacroCalls) +
                           " instruction calls");
  }
}

}  // namespace

Semantics instructionSemantics(const Isa& isa, int32_t instruction) {
  const Instruction& inst = isa.instructions[static_cast<size_t>(instruction)];
  std::vector<FlatCall> calls = {FlatCall{instruction, identityArgs(inst.attrs), inst.offset}};
  return Composer(isa, std::move(calls), inst.attrs, "instruction " + inst.name.text, false).run();
}

Semantics macroSemantics(const Isa& isa, int32_t macro, std::vector<Expr>* constraints) {
  const Macro& m = isa.macros[static_cast<size_t>(macro)];
  std::vector<FlatCall> calls;
  flatten(isa, m, identityArgs(m.attrs), 0, calls);
  if (constraints) {
    // The callees' attribute-only requires, bound to the macro's attributes.
    for (const FlatCall& fc : calls) {
      const Instruction& inst = isa.instructions[static_cast<size_t>(fc.instruction)];
      for (const Stmt* r : inst.requires_) {
        if (r->expr.uses(RefKind::kReg)) continue;
        constraints->push_back(bindArgs(r->expr, fc.args));
      }
    }
  }
  return Composer(isa, std::move(calls), m.attrs, "macro " + m.name.text, true).run();
}

Semantics macroSemanticsAt(const Isa& isa, int32_t macro, std::span<const int64_t> entry,
                           std::vector<std::vector<int64_t>>* exits,
                           const std::vector<bool>* dropped_buffers) {
  const Macro& m = isa.macros[static_cast<size_t>(macro)];
  std::vector<FlatCall> calls;
  flatten(isa, m, identityArgs(m.attrs), 0, calls);
  std::vector<std::vector<int64_t>> found;
  Semantics sem = Composer(isa, std::move(calls), m.attrs, "macro " + m.name.text, true, entry,
                           &found, dropped_buffers)
                      .run();
  if (exits) *exits = sem.selectable ? std::move(found) : std::vector<std::vector<int64_t>>{};
  return sem;
}

// ---- instantiation ----------------------------------------------------------------------------

std::unique_ptr<hlo::HloModule> instantiate(const Isa& isa, const SymCase& c,
                                            std::span<const int64_t> alpha,
                                            const std::string& name) {
  auto module = std::make_unique<hlo::HloModule>(name);
  std::map<std::pair<hlo::HloOpcode, hlo::PrimitiveType>, hlo::HloComputation*> reducers;
  ReducerFn reducer = [&](hlo::HloOpcode op, hlo::PrimitiveType t) {
    auto& slot = reducers[{op, t}];
    if (!slot) slot = hlo::addScalarReducer(*module, op, t);
    return slot;
  };
  EvalEnv env{alpha, {}, {}};
  hlo::HloBuilder b(name);
  std::vector<hlo::HloInstruction*> values;
  for (const SymOp& op : c.ops) {
    try {
      hlo::Shape shape = evalType(op.type, env);
      std::vector<hlo::HloInstruction*> operands;
      for (int32_t o : op.operands)
        operands.push_back(values[static_cast<size_t>(o)]);
      if (op.opcode == hlo::HloOpcode::kParameter) {
        values.push_back(b.parameter(op.input, shape, "in" + std::to_string(op.input)));
      } else if (op.opcode == hlo::HloOpcode::kConstant) {
        values.push_back(b.constant(evalLiteral(op.literal, shape, env)));
      } else {
        hlo::PrimitiveType rt =
            operands.size() > 1 ? operands[1]->shape().elementType() : hlo::PrimitiveType::kInvalid;
        hlo::HloAttributes attrs = evalOpAttrs(op.opcode, op.attrs, env, rt, reducer);
        values.push_back(b.add(op.opcode, operands, std::move(attrs), shape));
      }
    } catch (const ExprError& e) {
      throw DiagnosticError(makeError(isa.fileName(), op.loc, e.message));
    } catch (const DiagnosticError& e) {
      throw DiagnosticError(makeError(isa.fileName(), op.loc, e.diagnostic().message));
    }
  }
  std::vector<hlo::HloInstruction*> outs;
  for (const SymSlice& o : c.outputs)
    outs.push_back(values[static_cast<size_t>(o.value)]);
  b.tuple(outs, "outputs");
  b.addTo(*module, true);
  return module;
}

// ---- listing ----------------------------------------------------------------------------------

namespace {

std::string sliceText(const Isa& isa, const SymSlice& s) {
  const Buffer& b = isa.buffers[static_cast<size_t>(s.buffer)];
  std::string out =
      b.name.text + "[" + joinWith(s.starts, ", ", [](const Expr& e) { return exprText(e); }) + "]";
  return out + " : " + typeText(s.type);
}

}  // namespace

std::string semanticsText(const Isa& isa, const Semantics& s) {
  if (!s.selectable) return "not selectable: " + s.reason + "\n";
  std::string out;
  for (const SymCase& c : s.cases) {
    out += "case [" + joinWith(c.constraints, ", ", [](const Expr& e) { return exprText(e); }) +
           "]:\n";
    for (size_t i = 0; i < c.ops.size(); ++i) {
      const SymOp& op = c.ops[i];
      out += "  %" + std::to_string(i) + " = ";
      if (op.opcode == hlo::HloOpcode::kParameter) {
        out += "read " + sliceText(isa, c.inputs[static_cast<size_t>(op.input)]) + "\n";
        continue;
      }
      out += typeText(op.type) + " " + std::string(hlo::opcodeName(op.opcode)) + "(";
      if (op.opcode == hlo::HloOpcode::kConstant) out += literalText(op.literal);
      out += joinWith(op.operands, ", ", [](int32_t o) { return "%" + std::to_string(o); }) + ")";
      for (const OpAttr& a : op.attrs)
        out += ", " + opAttrText(a);
      out += "\n";
    }
    for (const SymSlice& o : c.outputs)
      out += "  write " + sliceText(isa, o) + " = %" + std::to_string(o.value) + "\n";
    out += "  cost " + exprText(c.cost) + "\n";
  }
  return out;
}

}  // namespace tacit::taidl
