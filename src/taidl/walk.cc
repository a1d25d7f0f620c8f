#include "taidl/walk.h"

#include <algorithm>
#include <cstring>
#include <limits>
#include <type_traits>

#include "hlo/literal.h"
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

// The walk's expression evaluator (the oracle calls it for every executed instruction, so it
// must be cheap). Nodes are stored in post-order, so one pass over the node array evaluates every
// node into a small stack array: no recursion, no std::string (applyBinary builds its messages).
// It evaluates eagerly, also the branch a short-circuit `&&`, `||` or `?:` skips, so it gives up
// (returns false) on anything that could fail — division by zero, inexact `/`, overflow — and on
// unusual shapes (large or unresolved expressions); the caller then runs evalExpr, which has the
// exact semantics and error messages. Without failures eager and lazy evaluation agree (the
// expressions are pure).
constexpr size_t kFastNodes = 64;

bool fastEval(const Expr& e, const EvalEnv& env, int64_t* out) {
  const std::vector<ExprNode>& nodes = e.nodes();
  size_t count = nodes.size();
  if (count == 0 || count > kFastNodes) return false;
  if (count == 1) {  // most slice starts: one attribute or an integer
    const ExprNode& n = nodes[0];
    if (n.op == ExprOp::kInt) {
      *out = n.value;
      return true;
    }
    if (n.op == ExprOp::kRef && (n.ref == RefKind::kAlpha || n.ref == RefKind::kBeta) &&
        static_cast<size_t>(n.slot) < env.attrs.size()) {
      *out = env.attrs[static_cast<size_t>(n.slot)];
      return true;
    }
  }
  int64_t v[kFastNodes];
  for (size_t i = 0; i < count; ++i) {
    const ExprNode& n = nodes[i];
    // Children precede their parent (post-order); anything else takes the general path.
    auto child = [&](int32_t c, int64_t* x) {
      if (c < 0 || static_cast<size_t>(c) >= i) return false;
      *x = v[c];
      return true;
    };
    int64_t a = 0, b = 0, c = 0;
    switch (n.op) {
      case ExprOp::kInt:
        v[i] = n.value;
        continue;
      case ExprOp::kRef:
        switch (n.ref) {
          case RefKind::kParam:
          case RefKind::kConst:
            v[i] = n.value;
            continue;
          case RefKind::kAlpha:
          case RefKind::kBeta:
            if (static_cast<size_t>(n.slot) >= env.attrs.size()) return false;
            v[i] = env.attrs[static_cast<size_t>(n.slot)];
            continue;
          case RefKind::kReg:
            if (static_cast<size_t>(n.slot) >= env.regs.size()) return false;
            v[i] = env.regs[static_cast<size_t>(n.slot)];
            continue;
          case RefKind::kLoop:
            if (static_cast<size_t>(n.slot) >= env.loops.size()) return false;
            v[i] = env.loops[static_cast<size_t>(n.slot)];
            continue;
          default:
            return false;
        }
      case ExprOp::kNot:
        if (!child(n.a, &a)) return false;
        v[i] = a == 0 ? 1 : 0;
        continue;
      case ExprOp::kNeg:
        if (!child(n.a, &a) || a == std::numeric_limits<int64_t>::min()) return false;
        v[i] = -a;
        continue;
      case ExprOp::kCond:
        if (!child(n.a, &a) || !child(n.b, &b) || !child(n.c, &c)) return false;
        v[i] = a != 0 ? b : c;
        continue;
      default:
        break;
    }
    if (!child(n.a, &a) || !child(n.b, &b)) return false;
    int64_t r = 0;
    switch (n.op) {
      case ExprOp::kAdd:
        if (__builtin_add_overflow(a, b, &r)) return false;
        break;
      case ExprOp::kSub:
        if (__builtin_sub_overflow(a, b, &r)) return false;
        break;
      case ExprOp::kMul:
        if (__builtin_mul_overflow(a, b, &r)) return false;
        break;
      case ExprOp::kEq:
        r = a == b;
        break;
      case ExprOp::kNe:
        r = a != b;
        break;
      case ExprOp::kLt:
        r = a < b;
        break;
      case ExprOp::kLe:
        r = a <= b;
        break;
      case ExprOp::kGt:
        r = a > b;
        break;
      case ExprOp::kGe:
        r = a >= b;
        break;
      case ExprOp::kAnd:
        r = a != 0 && b != 0;
        break;
      case ExprOp::kOr:
        r = a != 0 || b != 0;
        break;
      case ExprOp::kMin:
        r = a < b ? a : b;
        break;
      case ExprOp::kMax:
        r = a < b ? b : a;
        break;
      default: {
        // Division and modulo: applyBinary has the rules; only its failures need evalExpr.
        std::string why;
        if (!applyBinary(n.op, a, b, &r, &why)) return false;
        break;
      }
    }
    v[i] = r;
  }
  *out = v[count - 1];
  return true;
}

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
    out_.lets.assign(inst_.let_names.size(), 0);
    for (const Stmt* r : inst_.requires_)
      require(*r);
    out_.cost = inst_.cost ? eval(inst_.cost->expr) : 1;
    block(inst_.body);
    for (const Stmt* w : inst_.writes)
      access(*w, true);
  }

 private:
  EvalEnv env() const { return EvalEnv{attrs_, regs_, out_.loops, out_.lets}; }

  int64_t eval(const Expr& e) {
    int64_t v = 0;
    if (fastEval(e, env(), &v)) return v;
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

  // The element a let names, from the machine's buffers (docs/taidl.md section 4.7). Runs once
  // per micro-op of an instruction that loops over micro-ops: nothing is allocated unless it fails.
  int64_t let(const Stmt& s) {
    const Buffer& b = isa_.buffers[static_cast<size_t>(s.buffer_index)];
    if (!options_.memory)
      failAtCall(isa_, options_.site, s.offset,
                 isa_.callText(inst_, attrs_) +
                     " reads machine state (a let) but was walked "
                     "without it");
    const BufferBytes bytes = options_.memory(s.buffer_index);
    // The buffer tensor's dimensions: access, then unit (HBM: u8[its bytes]).
    auto dim = [&](size_t k) {
      if (k >= b.access.size()) return b.unit[k - b.access.size()];
      return b.is_hbm ? bytes.size : b.access[k];
    };
    const size_t rank = s.starts.size();  // the buffer's rank (the checker saw to it)
    int64_t starts[kMaxRank] = {};
    int64_t index = 0;
    bool inside = true;
    for (size_t k = 0; k < rank; ++k) {
      starts[k] = eval(s.starts[k]);
      inside = inside && starts[k] >= 0 && starts[k] < dim(k);
      index = index * dim(k) + starts[k];
    }
    const int64_t elem = hlo::byteSize(b.dtype);
    if (!inside || (index + 1) * elem > bytes.size) {
      std::string at, extent;
      for (size_t k = 0; k < rank; ++k) {
        at += (k ? ", " : "") + std::to_string(starts[k]);
        extent += (k ? ", " : "") + std::to_string(dim(k));
      }
      failAtCall(
          isa_, options_.site, s.offset,
          "let " + s.name.text + " of " + isa_.callText(inst_, attrs_) + " reads " + b.name.text +
              "[" + at + "], outside the buffer (" + std::string(hlo::primitiveTypeName(b.dtype)) +
              "[" + extent + "]" +
              (inside ? ", of which the machine holds " + std::to_string(bytes.size) + " bytes)"
                      : ")"));
    }
    const uint8_t* p = bytes.data + index * elem;
    return hlo::dispatchEvaluable(b.dtype, [&]<hlo::PrimitiveType kT>() -> int64_t {
      using T = typename hlo::NativeType<kT>::type;
      if constexpr (std::is_integral_v<T>) {
        T v;
        std::memcpy(&v, p, sizeof(T));
        return static_cast<int64_t>(v);  // a u64 above INT64_MAX keeps its bits
      } else {
        return 0;  // not reached: the checker requires an integer element type
      }
    });
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
        case StmtKind::kLet:
          out_.lets[static_cast<size_t>(s.loop)] = let(s);
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

// ---- CompiledWalk ------------------------------------------------------------------------------

CompiledWalk::CompiledWalk(const Isa& isa, int32_t instruction)
    : isa_(isa), inst_(isa.instructions[static_cast<size_t>(instruction)]) {
  has_lets_ = !inst_.let_names.empty();
  compile(inst_.body);
  flatten();
}

void CompiledWalk::flatten() {
  if (blocks_.size() != 1 || has_sets_ || blocks_[0].statements > kMaxStatementsExecuted) return;
  std::vector<FlatStart> starts;
  uint32_t accesses = 0;
  auto add = [&](const Stmt& s, bool units) {
    for (const Expr& e : s.starts) {
      if (e.nodes().size() != 1) return false;
      const ExprNode& n = e.nodes()[0];
      if (n.op == ExprOp::kInt) {
        starts.push_back({-1, n.value});
      } else if (n.op == ExprOp::kRef && (n.ref == RefKind::kAlpha || n.ref == RefKind::kBeta) &&
                 n.slot >= 0 && static_cast<size_t>(n.slot) < inst_.attrs.size()) {
        starts.push_back({n.slot, 0});
      } else if (n.op == ExprOp::kRef && (n.ref == RefKind::kParam || n.ref == RefKind::kConst)) {
        starts.push_back({-1, n.value});
      } else {
        return false;
      }
    }
    if (units) {
      const Buffer& b = isa_.buffers[static_cast<size_t>(s.buffer_index)];
      starts.insert(starts.end(), b.unit.size(), FlatStart{});
    }
    ++accesses;
    return true;
  };
  for (const Node& n : blocks_[0].nodes) {
    if (n.stmt->kind == StmtKind::kIf || n.stmt->kind == StmtKind::kRepeat) return;
    if (!add(*n.stmt, n.stmt->kind == StmtKind::kReads)) return;
  }
  for (const Stmt* w : inst_.writes) {
    if (!add(*w, true)) return;
  }
  flat_ = true;
  flat_starts_ = std::move(starts);
  flat_accesses_ = accesses;
}

int32_t CompiledWalk::compile(const std::vector<Stmt>& body) {
  auto index = static_cast<int32_t>(blocks_.size());
  blocks_.emplace_back();
  std::vector<Node> nodes;
  for (const Stmt& s : body) {
    Node n{&s};
    switch (s.kind) {
      case StmtKind::kSet:
        has_sets_ = true;
        break;
      case StmtKind::kReads:
      case StmtKind::kRead:
      case StmtKind::kWrite:
        break;
      case StmtKind::kIf:
        n.body = compile(s.body);
        n.else_body = compile(s.else_body);
        break;
      case StmtKind::kRepeat:
        n.body = compile(s.body);
        break;
      default:
        continue;  // require/cost at entry, declared writes at the end, ops are data
    }
    nodes.push_back(n);
  }
  // (blocks_ may have grown: index, not a reference taken before the recursion.)
  blocks_[static_cast<size_t>(index)].nodes = std::move(nodes);
  blocks_[static_cast<size_t>(index)].statements = static_cast<int64_t>(body.size());
  return index;
}

bool CompiledWalk::run(std::span<const int64_t> attrs, std::span<int64_t> regs, WalkResult& out,
                       uint64_t proven) const {
  if (has_lets_ || attrs.size() != inst_.attrs.size() || regs.size() != isa_.registers.size())
    return false;
  EvalEnv env{attrs, regs, {}, {}};
  for (size_t k = 0; k < inst_.requires_.size(); ++k) {
    if (k < 64 && (proven >> k & 1) != 0) continue;
    int64_t v = 0;
    if (!fastEval(inst_.requires_[k]->expr, env, &v) || v == 0) return false;
  }
  int64_t cost = 1;
  if (inst_.cost && !fastEval(inst_.cost->expr, env, &cost)) return false;
  out.key.words.assign(attrs.begin(), attrs.begin() + inst_.num_alpha);
  if (flat_) {
    out.starts.resize(flat_starts_.size());
    for (size_t i = 0; i < flat_starts_.size(); ++i) {
      const FlatStart& f = flat_starts_[i];
      out.starts[i] = f.slot >= 0 ? attrs[static_cast<size_t>(f.slot)] : f.value;
    }
    out.accesses = flat_accesses_;
    out.loops.assign(inst_.loop_names.size(), 0);
    out.cost = cost;
    return true;
  }
  out.starts.clear();
  out.accesses = 0;
  out.loops.assign(inst_.loop_names.size(), 0);
  out.cost = cost;
  if (has_sets_) out.saved_regs.assign(regs.begin(), regs.end());
  int64_t executed = 0;
  bool ok = block(0, attrs, regs, out, executed);
  for (size_t w = 0; ok && w < inst_.writes.size(); ++w) {
    const Stmt& s = *inst_.writes[w];
    env.loops = out.loops;
    for (const Expr& e : s.starts) {
      int64_t v = 0;
      if (!fastEval(e, env, &v)) {
        ok = false;
        break;
      }
      out.starts.push_back(v);
    }
    const Buffer& b = isa_.buffers[static_cast<size_t>(s.buffer_index)];
    out.starts.insert(out.starts.end(), b.unit.size(), 0);
    ++out.accesses;
  }
  if (!ok && has_sets_) std::copy(out.saved_regs.begin(), out.saved_regs.end(), regs.begin());
  return ok;
}

bool CompiledWalk::block(int32_t index, std::span<const int64_t> attrs, std::span<int64_t> regs,
                         WalkResult& out, int64_t& executed) const {
  const Block& blk = blocks_[static_cast<size_t>(index)];
  // walk() counts each statement as it executes it and fails at the one past the limit; a block
  // that could cross it is left to walk().
  executed += blk.statements;
  if (executed > kMaxStatementsExecuted) return false;
  for (const Node& n : blk.nodes) {
    const Stmt& s = *n.stmt;
    EvalEnv env{attrs, regs, out.loops};
    int64_t v = 0;
    switch (s.kind) {
      case StmtKind::kSet:
        if (!fastEval(s.expr, env, &v)) return false;
        regs[static_cast<size_t>(s.reg)] = v;
        break;
      case StmtKind::kIf: {
        if (!fastEval(s.expr, env, &v)) return false;
        out.key.words.push_back(v != 0 ? 1 : 0);
        if (!block(v != 0 ? n.body : n.else_body, attrs, regs, out, executed)) return false;
        break;
      }
      case StmtKind::kRepeat: {
        int64_t lo = 0, hi = 0;
        if (!fastEval(s.expr, env, &lo) || !fastEval(s.expr2, env, &hi)) return false;
        int64_t trips = hi > lo ? hi - lo : 0;
        out.key.words.push_back(lo);
        out.key.words.push_back(trips);
        for (int64_t i = 0; i < trips; ++i) {
          out.loops[static_cast<size_t>(s.loop)] = lo + i;
          if (!block(n.body, attrs, regs, out, executed)) return false;
        }
        break;
      }
      default: {  // an access (kReads, kRead, kWrite)
        for (const Expr& e : s.starts) {
          if (!fastEval(e, env, &v)) return false;
          out.starts.push_back(v);
        }
        if (s.kind == StmtKind::kReads) {
          const Buffer& b = isa_.buffers[static_cast<size_t>(s.buffer_index)];
          out.starts.insert(out.starts.end(), b.unit.size(), 0);
        }
        ++out.accesses;
        break;
      }
    }
  }
  return true;
}

// ---- static proofs of requires ----------------------------------------------------------------

namespace {

// An interval [lo, hi] of int64 values; ok == false: unknown (or an evaluation could fail).
struct Range {
  int64_t lo = 0, hi = 0;
  bool ok = false;
};

Range exact(int64_t v) {
  return {v, v, true};
}

Range boolRange(bool surely_true, bool surely_false) {
  if (surely_true) return exact(1);
  if (surely_false) return exact(0);
  return {0, 1, true};
}

// Interval evaluation of node i; every value an evaluation with attributes in the ranges can
// produce lies in the result, and no such evaluation fails when the result is ok (overflow is
// checked on the bounds; division, registers and loop variables are not analysed).
Range rangeOf(const Expr& e, int32_t i, std::span<const int64_t> lo, std::span<const int64_t> hi,
              int depth) {
  if (depth > 64 || i < 0) return {};
  const ExprNode& n = e.node(i);
  auto sub = [&](int32_t c) { return rangeOf(e, c, lo, hi, depth + 1); };
  switch (n.op) {
    case ExprOp::kInt:
      return exact(n.value);
    case ExprOp::kRef:
      if (n.ref == RefKind::kParam || n.ref == RefKind::kConst) return exact(n.value);
      if ((n.ref == RefKind::kAlpha || n.ref == RefKind::kBeta) &&
          static_cast<size_t>(n.slot) < lo.size())
        return {lo[static_cast<size_t>(n.slot)], hi[static_cast<size_t>(n.slot)], true};
      return {};
    default:
      break;
  }
  Range a = sub(n.a);
  if (!a.ok) return {};
  switch (n.op) {
    case ExprOp::kNot:
      return boolRange(a.lo == 0 && a.hi == 0, a.lo > 0 || a.hi < 0);
    case ExprOp::kNeg:
      if (a.lo == std::numeric_limits<int64_t>::min()) return {};
      return {-a.hi, -a.lo, true};
    default:
      break;
  }
  Range b = sub(n.b);
  if (!b.ok) return {};
  bool a_true = a.lo > 0 || a.hi < 0, a_false = a.lo == 0 && a.hi == 0;
  bool b_true = b.lo > 0 || b.hi < 0, b_false = b.lo == 0 && b.hi == 0;
  Range r{0, 0, true};
  switch (n.op) {
    case ExprOp::kAdd:
      if (__builtin_add_overflow(a.lo, b.lo, &r.lo) || __builtin_add_overflow(a.hi, b.hi, &r.hi))
        return {};
      return r;
    case ExprOp::kSub:
      if (__builtin_sub_overflow(a.lo, b.hi, &r.lo) || __builtin_sub_overflow(a.hi, b.lo, &r.hi))
        return {};
      return r;
    case ExprOp::kMul: {
      int64_t p[4];
      if (__builtin_mul_overflow(a.lo, b.lo, &p[0]) || __builtin_mul_overflow(a.lo, b.hi, &p[1]) ||
          __builtin_mul_overflow(a.hi, b.lo, &p[2]) || __builtin_mul_overflow(a.hi, b.hi, &p[3]))
        return {};
      return {std::min(std::min(p[0], p[1]), std::min(p[2], p[3])),
              std::max(std::max(p[0], p[1]), std::max(p[2], p[3])), true};
    }
    case ExprOp::kEq:
      return boolRange(a.lo == a.hi && b.lo == b.hi && a.lo == b.lo, a.hi < b.lo || b.hi < a.lo);
    case ExprOp::kNe:
      return boolRange(a.hi < b.lo || b.hi < a.lo, a.lo == a.hi && b.lo == b.hi && a.lo == b.lo);
    case ExprOp::kLt:
      return boolRange(a.hi < b.lo, a.lo >= b.hi);
    case ExprOp::kLe:
      return boolRange(a.hi <= b.lo, a.lo > b.hi);
    case ExprOp::kGt:
      return boolRange(a.lo > b.hi, a.hi <= b.lo);
    case ExprOp::kGe:
      return boolRange(a.lo >= b.hi, a.hi < b.lo);
    case ExprOp::kAnd:
      return boolRange(a_true && b_true, a_false || b_false);
    case ExprOp::kOr:
      return boolRange(a_true || b_true, a_false && b_false);
    case ExprOp::kMin:
      return {std::min(a.lo, b.lo), std::min(a.hi, b.hi), true};
    case ExprOp::kMax:
      return {std::max(a.lo, b.lo), std::max(a.hi, b.hi), true};
    case ExprOp::kCond: {
      Range c = sub(n.c);
      if (!c.ok) return {};
      if (a_true) return b;
      if (a_false) return c;
      return {std::min(b.lo, c.lo), std::max(b.hi, c.hi), true};
    }
    default:
      return {};  // division and modulo (can fail), anything new
  }
}

}  // namespace

bool provablyHolds(const Isa& isa, int32_t instruction, size_t k, std::span<const int64_t> lo,
                   std::span<const int64_t> hi) {
  const Instruction& inst = isa.instructions[static_cast<size_t>(instruction)];
  if (k >= inst.requires_.size() || k >= 64 || lo.size() != inst.attrs.size() ||
      hi.size() != lo.size())
    return false;
  for (size_t i = 0; i < lo.size(); ++i) {
    if (lo[i] > hi[i]) return false;
  }
  const Expr& e = inst.requires_[k]->expr;
  if (e.empty()) return false;
  Range r = rangeOf(e, e.rootIndex(), lo, hi, 0);
  return r.ok && (r.lo > 0 || r.hi < 0);
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
