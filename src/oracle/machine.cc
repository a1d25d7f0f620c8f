#include "oracle/machine.h"

#include <algorithm>
#include <cstring>
#include <iostream>
#include <unordered_map>

#include "hlo/printer.h"
#include "oracle/compiled_site.h"
#include "oracle/direct_nest.h"
#include "oracle/exec.h"
#include "oracle/tasm.h"
#include "support/strings.h"
#include "taidl/walk.h"

namespace tacit::oracle {

using detail::affineRange;
using detail::CompiledSite;
using detail::Entry;

namespace {

// A program statement prepared for execution: its walk options (the call site for
// diagnostics), scratch for attribute values, and the last entry it used (equal keys in a row
// skip the cache lookup).
struct Site {
  const Stmt* stmt = nullptr;
  taidl::WalkOptions walk;
  std::vector<int64_t> attrs;
  // What a run learns about the statement: prepare() starts each run from these defaults (the
  // rest is kept across runs: its memory, and the proofs and compilations still valid).
  enum class Fast : uint8_t { kUnknown, kYes, kNo };
  struct PerRun {
    Entry* memo = nullptr;  // the last entry used (equal keys in a row skip the cache lookup)
    bool expanded = false;  // a macro's `expansion` is that of `expanded_for`
    // Calls of an instruction: bit k set if its require k holds for every value the attributes
    // take in this program (interval analysis over the loop ranges), so it is not re-evaluated.
    uint64_t proven = 0;
    // Every attribute's value range over the loop ranges fits in int64 (with every partial
    // sum), so the attributes are evaluated without overflow checks.
    bool attrs_fit = false;
    const CompiledSite* compiled = nullptr;  // owned by Machine::Impl::compiled_
    bool looked_up = false;                  // compiled_ was searched
    bool compile_done = false;               // found, compiled, or known not to qualify
    // Loops: whether the body runs as `fast` (Machine::Impl::checkFast), and whether the rest
    // of an instance runs as `nest` (checkDirect).
    Fast fast_state = Fast::kUnknown;
    Fast direct_state = Fast::kUnknown;
  };
  PerRun run;
  // Macros: the expansion of the last attribute values, with one memo per expanded call.
  std::vector<int64_t> expanded_for;
  std::vector<taidl::ExpandedCall> expansion;
  std::vector<Entry*> memos;
  std::vector<Site> body;  // loops
  // What `run.proven` and `run.attrs_fit` were last proven for (kept across runs: the proofs are
  // the costly part of preparing a run).
  struct Proof {
    bool valid = false;
    int32_t unit = -1;
    bool is_macro = false;
    std::vector<Affine> attrs;
    std::vector<int64_t> lo, hi;
    uint64_t proven = 0;
    bool attrs_fit = false;
  };
  Proof proof;
  // The ranges of the enclosing loop variables (when known: the proofs of a compiled site).
  std::vector<int64_t> loop_lo, loop_hi;
  // Loops whose body is only calls compiled in this run execute them from this list, without
  // the walk over the body's Sites.
  std::vector<const CompiledSite*> fast;
  // Per call of `fast`: proven not to touch what the body's earlier executions in the same loop
  // instance write (fastDisjoint), so its conflict test with the queue can be skipped while the
  // queue holds only such executions.
  std::vector<uint8_t> fast_disjoint;
  std::vector<uint64_t> disjoint_for;  // the CompiledSite::serial of each call (kept across runs)
  // Loops whose statements, nested loops included, are all calls that run at once
  // (Executor::runsAtOnce): the rest of an instance runs as this nest, built for the calls whose
  // CompiledSite::serial are `nest_for` (kept across runs).
  std::unique_ptr<detail::DirectNest> nest;
  std::vector<uint64_t> nest_for;
};

// Affine::eval without the overflow checks (the caller proved they cannot fail).
int64_t evalUnchecked(const Affine& a, const std::vector<int64_t>& loops) {
  int64_t v = a.constant;
  for (const Affine::Term& t : a.terms)
    v += t.coeff * loops[t.depth];
  return v;
}

}  // namespace

class Machine::Impl {
 public:
  Impl(const taidl::Isa& isa, RunOptions options)
      : isa_(isa),
        options_(std::move(options)),
        exec_(isa, options_.native),
        walks_(isa.instructions.size()) {
    reset(1);
  }

  const taidl::Isa& isa_;
  RunOptions options_;
  detail::Executor exec_;
  std::vector<TouchedRange> touched_;  // the trace event's ranges (reused)
  detail::State state_;
  Stats stats_;
  taidl::WalkResult walk_;
  std::vector<std::unique_ptr<taidl::CompiledWalk>> walks_;  // per instruction, built on first use
  const std::string* file_ = nullptr;
  // Compiled call sites of the last program run, by statement (kept across its runs).
  const Program* compiled_for_ = nullptr;
  std::vector<Site> sites_;  // the last run's program, prepared (reused by the next run)
  std::unordered_map<const Stmt*, std::unique_ptr<CompiledSite>> compiled_;
  uint64_t serials_ = 0;  // CompiledSite::serial

  void reset(int64_t hbm_bytes) {
    if (hbm_bytes <= 0 || hbm_bytes > kMaxHbmBytes)
      fail("the HBM size must be between 1 and " + std::to_string(kMaxHbmBytes) + " bytes");
    state_.buffers.resize(isa_.buffers.size());
    for (size_t b = 0; b < isa_.buffers.size(); ++b)
      state_.buffers[b].allocate(static_cast<size_t>(bufferBytes(b, hbm_bytes)));
    exec_.discard();
    state_.hbm_bytes = hbm_bytes;
    state_.regs = isa_.initialRegisters();
    clearStats();
    exec_.forEachEntry([](Entry& e) { e.executions = 0; });
  }

  // Zeroed stats for a run; the vectors keep their memory (a warm run allocates nothing here).
  void clearStats() {
    Stats s;
    s.per_instruction = std::move(stats_.per_instruction);
    s.cost_per_instruction = std::move(stats_.cost_per_instruction);
    s.moved = std::move(stats_.moved);
    s.bytes_read = std::move(stats_.bytes_read);
    s.bytes_written = std::move(stats_.bytes_written);
    size_t n = isa_.instructions.size(), nb = isa_.buffers.size();
    s.per_instruction.assign(n, 0);
    s.cost_per_instruction.assign(n, 0);
    s.moved.resize(nb + 1);
    for (std::vector<int64_t>& row : s.moved)
      row.assign(nb, 0);
    s.bytes_read.assign(nb, 0);
    s.bytes_written.assign(nb, 0);
    stats_ = std::move(s);
  }

  int64_t bufferBytes(size_t b, int64_t hbm_bytes) const {
    const taidl::Buffer& buf = isa_.buffers[b];
    if (buf.is_hbm) return hbm_bytes;
    int64_t n = hlo::byteSize(buf.dtype);
    for (int64_t d : buf.access)
      n *= d;
    for (int64_t d : buf.unit)
      n *= d;
    return n;
  }

  // ---- preparing a program ----
  // Prepares `sites` for the statements `list`. The Sites of the previous run are reused (a run
  // allocates nothing for them), everything is set as for a fresh Site except the proof of the
  // requires, which is redone only if the call or its loop ranges differ from the proof's.
  // `lo`/`hi`: the range of each enclosing loop variable; `known` false once one is unknown.
  void prepare(std::vector<Site>& sites, const std::vector<Stmt>& list, std::vector<int64_t>& lo,
               std::vector<int64_t>& hi, bool known) {
    sites.resize(list.size());
    for (size_t i = 0; i < list.size(); ++i) {
      const Stmt& s = list[i];
      Site& site = sites[i];
      site.stmt = &s;
      site.walk.constraints =
          options_.warn_constraints ? taidl::ConstraintMode::kWarn : taidl::ConstraintMode::kError;
      site.walk.warnings = options_.warnings;
      if (file_ != nullptr)
        site.walk.site.file = *file_;
      else
        site.walk.site.file.clear();
      site.walk.site.loc = s.loc;
      site.attrs.resize(s.attrs.size());
      site.run = {};
      site.loop_lo.clear();
      site.loop_hi.clear();
      if (s.kind == StmtKind::kCall && known) {
        const Site::Proof& p = proof(site, lo, hi);
        site.run.proven = p.proven;
        site.run.attrs_fit = p.attrs_fit;
        site.loop_lo = lo;
        site.loop_hi = hi;
      }
      if (s.kind != StmtKind::kLoop) {
        site.body.clear();
        continue;
      }
      int64_t lmin = 0, lmax = 0, hmin = 0, hmax = 0;
      bool k = known && affineRange(s.lo, lo, hi, &lmin, &lmax) &&
               affineRange(s.hi, lo, hi, &hmin, &hmax) && lmin < hmax;
      lo.push_back(lmin);
      hi.push_back(hmax - 1);
      prepare(site.body, s.body, lo, hi, k);
      lo.pop_back();
      hi.pop_back();
    }
  }

  // The proofs of call site.stmt over the loop ranges: its requires (prove(); none for a macro)
  // and whether its attributes fit in int64. Kept from the site's last proof if that was for the
  // same call in the same loop ranges (they depend on nothing else).
  const Site::Proof& proof(Site& site, const std::vector<int64_t>& lo,
                           const std::vector<int64_t>& hi) {
    const Stmt& s = *site.stmt;
    Site::Proof& p = site.proof;
    if (p.valid && p.unit == s.unit && p.is_macro == s.is_macro && p.attrs == s.attrs &&
        p.lo == lo && p.hi == hi)
      return p;
    p.valid = false;
    p.proven = s.is_macro ? 0 : prove(s, lo, hi);
    p.attrs_fit = true;
    for (const Affine& a : s.attrs) {
      int64_t mn = 0, mx = 0;
      if (!affineRange(a, lo, hi, &mn, &mx)) p.attrs_fit = false;
    }
    p.unit = s.unit;
    p.is_macro = s.is_macro;
    p.attrs = s.attrs;
    p.lo = lo;
    p.hi = hi;
    p.valid = true;
    return p;
  }

  // The requires of call `s` that hold for all its attribute values in the loop ranges.
  uint64_t prove(const Stmt& s, const std::vector<int64_t>& lo, const std::vector<int64_t>& hi) {
    std::vector<int64_t> amin(s.attrs.size()), amax(s.attrs.size());
    for (size_t k = 0; k < s.attrs.size(); ++k) {
      if (!affineRange(s.attrs[k], lo, hi, &amin[k], &amax[k])) return 0;
    }
    uint64_t proven = 0;
    size_t n = isa_.instructions[static_cast<size_t>(s.unit)].requires_.size();
    for (size_t k = 0; k < n && k < 64; ++k) {
      if (taidl::provablyHolds(isa_, s.unit, k, amin, amax)) proven |= uint64_t{1} << k;
    }
    return proven;
  }

  taidl::BufferBytes letBytes(int32_t buffer) const {
    const detail::ZeroedMemory& m = state_.buffers[static_cast<size_t>(buffer)];
    return {m.data(), buffer == 0 ? state_.hbm_bytes : static_cast<int64_t>(m.size())};
  }

  const taidl::CompiledWalk& compiledWalk(int32_t inst) {
    std::unique_ptr<taidl::CompiledWalk>& w = walks_[static_cast<size_t>(inst)];
    if (!w) w = std::make_unique<taidl::CompiledWalk>(isa_, inst);
    return *w;
  }

  [[noreturn]] void failAt(const Site& s, const std::string& message,
                           const std::string& hint = {}) {
    fail(s.walk.site.file, s.walk.site.loc, message, hint);
  }

  void step(const Site& s, int64_t n = 1) {
    stats_.steps += n;
    if (stats_.steps > options_.max_steps)
      failAt(s,
             "the program executes more than " + std::to_string(options_.max_steps) +
                 " statements (the step limit)",
             "raise RunOptions::max_steps if the program is meant to run this long");
  }

  int64_t value(const Site& s, const Affine& a, const std::vector<int64_t>& loops) {
    int64_t v = 0;
    if (!a.eval(loops, &v)) failAt(s, "an affine value overflows 64-bit integers");
    return v;
  }

  // ---- executing ----
  void block(std::vector<Site>& sites, std::vector<int64_t>& loops) {
    for (Site& s : sites) {
      const Stmt& st = *s.stmt;
      step(s);
      switch (st.kind) {
        case StmtKind::kCall:
          if (!s.run.looked_up && options_.compiled_sites && !options_.trace) findCompiled(s);
          if (s.run.compiled != nullptr && !options_.trace) {
            compiledCall(*s.run.compiled, loops);
            break;
          }
          if (s.run.attrs_fit) {
            for (size_t k = 0; k < st.attrs.size(); ++k)
              s.attrs[k] = evalUnchecked(st.attrs[k], loops);
          } else {
            for (size_t k = 0; k < st.attrs.size(); ++k)
              s.attrs[k] = value(s, st.attrs[k], loops);
          }
          callSite(s);
          break;
        case StmtKind::kLoop:
          loop(s, loops);
          break;
        case StmtKind::kDebug:
          exec_.flush(state_);
          debug(s, loops);
          break;
      }
    }
  }

  void loop(Site& s, std::vector<int64_t>& loops) {
    int64_t lo = value(s, s.stmt->lo, loops), hi = value(s, s.stmt->hi, loops);
    if (hi <= lo) return;
    if (s.body.empty()) {
      step(s, hi - lo);
      return;
    }
    loops.push_back(lo);
    // The fast body's disjointness proofs cover the executions of this loop instance only: they
    // hold once the queue held nothing else (empty now, or run since).
    Instance inst{exec_.queued() == 0, exec_.flushes()};
    for (int64_t v = lo; v < hi; ++v) {
      loops.back() = v;
      if (v != lo) step(s);
      if (s.run.direct_state == Site::Fast::kYes && directRest(s, loops, hi)) break;
      if (s.run.fast_state == Site::Fast::kYes && fastBody(s, loops, inst)) continue;
      block(s.body, loops);
      if (s.run.fast_state == Site::Fast::kUnknown) checkFast(s);
      if (s.run.direct_state == Site::Fast::kUnknown) checkDirect(s);
    }
    loops.pop_back();
  }

  void callSite(Site& s) {
    if (!s.stmt->is_macro) {
      instruction(s.stmt->unit, s.attrs, s, s.run.memo, -1, s.run.proven);
      if (!s.run.compile_done && options_.compiled_sites && !options_.trace) {
        try {
          compileSite(s);
        } catch (const DiagnosticError&) {  // e.g. an overflow in the proofs: not compiled
        }
      }
      return;
    }
    ++stats_.macro_calls;
    if (!s.run.expanded || s.expanded_for != s.attrs) {
      s.expansion = taidl::expandMacro(isa_, s.stmt->unit, s.attrs, s.walk.site);
      s.memos.assign(s.expansion.size(), nullptr);
      s.expanded_for = s.attrs;
      s.run.expanded = true;
    }
    for (size_t c = 0; c < s.expansion.size(); ++c)
      instruction(s.expansion[c].instruction, s.expansion[c].attrs, s, s.memos[c], s.stmt->unit, 0);
  }

  void instruction(int32_t inst, std::span<const int64_t> attrs, Site& s, Entry*& memo,
                   int32_t macro, uint64_t proven) {
    // The compiled walk declines whatever needs the full walk's reporting (a violated require,
    // an evaluation failure): walk() then runs from the same state and reports exactly.
    if (!compiledWalk(inst).run(attrs, state_.regs, walk_, proven)) {
      if (!isa_.instructions[static_cast<size_t>(inst)].let_names.empty()) {
        // Lets read the buffers as they are now (docs/taidl.md section 4.7): queued executions
        // run first.
        exec_.flush(state_);
        if (!s.walk.memory) s.walk.memory = [this](int32_t b) { return letBytes(b); };
      }
      taidl::walk(isa_, inst, attrs, state_.regs, s.walk, walk_);
    }
    Entry* e = memo;
    if (e == nullptr || e->instruction != inst || e->spec->key.words != walk_.key.words) {
      size_t before = exec_.entries();
      e = &exec_.entry(inst, walk_.key, s.walk.site);
      stats_.specialisations += exec_.entries() > before ? 1 : 0;
      memo = e;
    }
    count(*e, inst);
    if (!options_.trace) {
      exec_.execute(*e, walk_, attrs, s.walk.site, options_.clamp, state_);
      return;
    }
    const int64_t* off =
        exec_.place(*e, walk_, attrs, s.walk.site, options_.clamp, state_.hbm_bytes);
    touched_.clear();
    for (size_t i = 0; i < e->touches.size(); ++i)
      appendRuns(e->accesses[i], e->touches[i].write, off[i]);
    TraceEvent ev{&isa_,           inst,       attrs,   macro, s.walk.site.file,
                  s.walk.site.loc, walk_.cost, touched_};
    options_.trace(ev);
    exec_.executePlaced(*e, state_, off);
  }

  // The contiguous byte runs of one slice at byte offset `base` (TouchedRange), in order; a slice
  // of more than kMaxTouchedRuns runs is reported as its span.
  void appendRuns(const detail::AccessPlan& a, bool write, int64_t base) {
    if (a.span_bytes == 0) return;
    if (a.outer == 0 || a.runs > kMaxTouchedRuns) {
      touched_.push_back(TouchedRange{a.buffer, write, base, a.span_bytes});
      return;
    }
    detail::forEachRun(a, [&](int64_t, int64_t off) {
      touched_.push_back(TouchedRange{a.buffer, write, base + off * a.elem, a.run_bytes});
    });
  }

  void count(Entry& e, int32_t inst) { count(e, inst, walk_.cost); }
  // `n` executions of entry `e` of instruction `inst`, each of `cost`.
  void count(Entry& e, int32_t inst, int64_t cost, int64_t n = 1) {
    stats_.instructions += n;
    stats_.total_cost += cost * n;
    stats_.per_instruction[static_cast<size_t>(inst)] += n;
    stats_.cost_per_instruction[static_cast<size_t>(inst)] += cost * n;
    e.executions += n;  // the byte counters are summed from these by stats()
  }

  // ---- compiled call sites (compiled_site.h) ----
  // The compilation of call `s` from an earlier run, if it was made for the same call.
  // (An entry without `entry` records a call that does not qualify.)
  void findCompiled(Site& s) {
    s.run.looked_up = true;
    auto it = compiled_.find(s.stmt);
    if (it == compiled_.end()) return;
    const CompiledSite& c = *it->second;
    const Stmt& st = *s.stmt;
    if (st.kind == StmtKind::kCall && !st.is_macro && c.unit == st.unit && c.attrs == st.attrs &&
        c.loop_lo == s.loop_lo && c.loop_hi == s.loop_hi && c.hbm_bytes == state_.hbm_bytes) {
      s.run.compiled = c.entry != nullptr ? &c : nullptr;
      s.run.compile_done = true;
    }
  }

  // After the first execution of call `s` in a run (which chose its entry through the full
  // path): compiles it, if it qualifies (detail::compileCall).
  void compileSite(Site& s) {
    s.run.compile_done = true;
    const Stmt& st = *s.stmt;
    auto c = std::make_unique<CompiledSite>();
    c->unit = st.unit;
    c->attrs = st.attrs;
    c->loop_lo = s.loop_lo;
    c->loop_hi = s.loop_hi;
    c->hbm_bytes = state_.hbm_bytes;
    c->serial = ++serials_;
    CompiledSite& kept = *(compiled_[s.stmt] = std::move(c));  // without entry until it fits
    detail::ExecutedCall call{&st,        s.attrs,   s.run.memo, s.run.proven, s.run.attrs_fit,
                              &s.loop_lo, &s.loop_hi};
    if (!detail::compileCall(isa_, compiledWalk(st.unit), state_.regs, state_.hbm_bytes, call,
                             kept))
      kept.entry = nullptr;
    else
      kept.direct_safe = detail::directSafeAlways(kept);
    s.run.compiled = kept.entry != nullptr ? &kept : nullptr;
  }

  void compiledCall(const CompiledSite& c, const std::vector<int64_t>& loops,
                    bool disjoint = false) {
    c.place(loops.data());
    count(*c.entry, c.unit, c.cost);
    exec_.executePlaced(*c.entry, state_, c.offsets.data(), disjoint, c.direct_safe);
  }

  // The start of a loop instance, as its fast body's disjointness proofs need it.
  struct Instance {
    bool queue_was_empty = false;
    uint64_t flushes = 0;
  };

  // Loop `s`'s body as its compiled calls (Site::fast), unless the step limit would be reached
  // in it (the statement-by-statement path then reports it at the right statement).
  bool fastBody(const Site& s, const std::vector<int64_t>& loops, const Instance& inst) {
    auto n = static_cast<int64_t>(s.fast.size());
    if (stats_.steps + n > options_.max_steps) return false;
    for (size_t k = 0; k < s.fast.size(); ++k) {
      ++stats_.steps;  // per call, as block() counts: exact if a call fails
      bool own = inst.queue_was_empty || exec_.flushes() != inst.flushes;
      compiledCall(*s.fast[k], loops, own && s.fast_disjoint[k] != 0);
    }
    return true;
  }

  // After an iteration of loop `s`: its body runs as Site::fast from now on if every statement
  // is a call compiled in this run (what block() would do for each then is compiledCall).
  void checkFast(Site& s) {
    if (!options_.compiled_sites || options_.trace) {
      s.run.fast_state = Site::Fast::kNo;
      return;
    }
    for (const Site& b : s.body) {
      if (b.stmt->kind != StmtKind::kCall || b.stmt->is_macro ||
          (b.run.compile_done && b.run.compiled == nullptr)) {
        s.run.fast_state = Site::Fast::kNo;
        return;
      }
      if (!b.run.compile_done) return;  // decided after a later iteration
    }
    s.fast.clear();
    for (const Site& b : s.body)
      s.fast.push_back(b.run.compiled);
    // The proofs are kept while the body's compilations are (an entry can only become known
    // not to batch since, which the proofs assumed it might).
    auto same = [](uint64_t id, const CompiledSite* c) { return id == c->serial; };
    if (!std::equal(s.disjoint_for.begin(), s.disjoint_for.end(), s.fast.begin(), s.fast.end(),
                    same)) {
      s.fast_disjoint = detail::fastDisjoint(s.fast, s.fast.front()->loop_lo.size() - 1);
      s.disjoint_for.clear();
      for (const CompiledSite* c : s.fast)
        s.disjoint_for.push_back(c->serial);
    }
    s.run.fast_state = Site::Fast::kYes;
  }

  // ---- direct loop nests (direct_nest.h) ----
  // The iterations of loop `s` from the current one (loops.back()) to `hi` as its nest, unless
  // something is queued or the step limit would be reached in them (the statement-by-statement
  // path then reports it at the right statement).
  bool directRest(Site& s, std::vector<int64_t>& loops, int64_t hi) {
    if (exec_.queued() != 0) return false;
    const int64_t iterations = hi - loops.back();
    int64_t per = 0, steps = 0, total = 0;
    if (__builtin_mul_overflow(iterations, s.nest->stepsPerIteration(), &per) ||
        __builtin_add_overflow(per, iterations - 1, &steps) ||
        __builtin_add_overflow(stats_.steps, steps, &total) || total > options_.max_steps)
      return false;
    stats_.steps += steps;
    stats_.nest_iterations += iterations;
    s.nest->run(state_, loops, loops.back(), hi);
    s.nest->forEachCall([&](const CompiledSite& c, int64_t executions) {
      count(*c.entry, c.unit, c.cost, executions * iterations);
    });
    return true;
  }

  // After the first iteration of loop `s`: whether the rest of each instance runs as a nest.
  void checkDirect(Site& s) {
    s.run.direct_state = Site::Fast::kNo;
    if (!options_.compiled_sites || options_.trace) return;
    std::vector<const CompiledSite*> calls;
    if (!directCalls(s.body, calls)) return;
    auto same = [](uint64_t id, const CompiledSite* c) { return id == c->serial; };
    if (!s.nest ||
        !std::equal(s.nest_for.begin(), s.nest_for.end(), calls.begin(), calls.end(), same)) {
      if (!s.nest) s.nest = std::make_unique<detail::DirectNest>();
      s.nest->clear();
      buildNest(s.body, *s.nest);
      s.nest_for.clear();
      for (const CompiledSite* c : calls)
        s.nest_for.push_back(c->serial);
    }
    s.run.direct_state = Site::Fast::kYes;
  }

  // The calls of `sites` and their nested loops in order, if each runs at once and every loop
  // has constant bounds.
  bool directCalls(const std::vector<Site>& sites, std::vector<const CompiledSite*>& calls) {
    for (const Site& b : sites) {
      const Stmt& st = *b.stmt;
      if (st.kind == StmtKind::kLoop) {
        if (!st.lo.terms.empty() || !st.hi.terms.empty() || !directCalls(b.body, calls))
          return false;
        continue;
      }
      if (st.kind != StmtKind::kCall || b.run.compiled == nullptr ||
          !exec_.runsAtOnce(*b.run.compiled->entry, b.run.compiled->direct_safe))
        return false;
      calls.push_back(b.run.compiled);
    }
    return true;
  }

  void buildNest(const std::vector<Site>& sites, detail::DirectNest& nest) {
    for (const Site& b : sites) {
      if (b.stmt->kind == StmtKind::kLoop) {
        nest.beginLoop(b.stmt->lo.constant, b.stmt->hi.constant);
        buildNest(b.body, nest);
        nest.endLoop();
      } else {
        nest.call(*b.run.compiled);
      }
    }
  }

  // Fills the byte counters of stats_ from the executions of each entry.
  const Stats& stats() {
    size_t nb = isa_.buffers.size();
    stats_.moved.assign(nb + 1, std::vector<int64_t>(nb, 0));
    stats_.bytes_read.assign(nb, 0);
    stats_.bytes_written.assign(nb, 0);
    exec_.forEachEntry([&](const Entry& e) {
      if (e.executions == 0) return;
      for (const Entry::Flow& f : e.flows) {
        size_t src = f.src < 0 ? nb : static_cast<size_t>(f.src);
        stats_.moved[src][static_cast<size_t>(f.dst)] += f.bytes * e.executions;
      }
      for (size_t i = 0; i < e.accesses.size(); ++i) {
        auto b = static_cast<size_t>(e.accesses[i].buffer);
        (e.spec->accesses[i].write ? stats_.bytes_written : stats_.bytes_read)[b] +=
            e.accesses[i].bytes * e.executions;
      }
    });
    return stats_;
  }

  void debug(Site& s, const std::vector<int64_t>& loops);

  void execute(const Program& p) {
    file_ = &p.file;
    if (compiled_for_ != &p) compiled_.clear();  // only the program run last is kept
    compiled_for_ = &p;
    std::vector<int64_t> lo, hi;
    prepare(sites_, p.body, lo, hi, true);
    std::vector<int64_t> loops;
    // A trace callback may look at memory between instructions: nothing is queued then.
    exec_.setBatching(options_.batch && !options_.trace);
    try {
      block(sites_, loops);
    } catch (...) {
      // What executed before the error is in memory; the failing call did not execute.
      exec_.flush(state_);
      throw;
    }
    exec_.flush(state_);
  }
};

// ---- debug statements --------------------------------------------------------------------------

void Machine::Impl::debug(Site& s, const std::vector<int64_t>& loops) {
  const Stmt& st = *s.stmt;
  const taidl::Buffer& b = isa_.buffers[static_cast<size_t>(st.buffer)];
  std::vector<int64_t> dims = b.access;
  if (b.is_hbm) dims[0] = state_.hbm_bytes;
  dims.insert(dims.end(), b.unit.begin(), b.unit.end());
  std::vector<int64_t> start(dims.size(), 0), extent = dims;
  std::string where = b.name.text + "[";
  for (size_t k = 0; k < dims.size(); ++k) {
    if (k < st.ranges.size()) {
      start[k] = value(s, st.ranges[k].start, loops);
      int64_t end = value(s, st.ranges[k].end, loops);
      if (start[k] < 0 || end < start[k] || end > dims[k])
        failAt(s, "debug range [" + std::to_string(start[k]) + ":" + std::to_string(end) +
                      ") is outside dimension " + std::to_string(k) + " of " + b.name.text +
                      " (size " + std::to_string(dims[k]) + ")");
      extent[k] = end - start[k];
    }
    where +=
        (k ? ", " : "") + std::to_string(start[k]) + ":" + std::to_string(start[k] + extent[k]);
  }
  where += "]";
  hlo::Literal lit(hlo::Shape(b.dtype, extent));
  int64_t elem = hlo::byteSize(b.dtype);
  std::vector<int64_t> stride = hlo::rowMajorStrides(dims);
  std::vector<int64_t> idx(dims.size(), 0);
  const uint8_t* mem = state_.buffers[static_cast<size_t>(st.buffer)].data();
  for (int64_t n = 0; n < lit.elementCount(); ++n) {
    int64_t off = 0;
    for (size_t k = 0; k < dims.size(); ++k)
      off += (start[k] + idx[k]) * stride[k];
    std::memcpy(lit.bytes() + n * elem, mem + off * elem, static_cast<size_t>(elem));
    for (size_t k = dims.size(); k-- > 0;) {
      if (++idx[k] < extent[k]) break;
      idx[k] = 0;
    }
  }
  if (st.view != hlo::PrimitiveType::kInvalid) {
    int64_t size = hlo::byteSize(st.view);
    if (lit.elementCount() % size != 0)
      failAt(s, "debug: " + std::to_string(lit.elementCount()) +
                    " bytes are not a whole number of " +
                    std::string(hlo::primitiveTypeName(st.view)) + " elements");
    hlo::Literal viewed(hlo::Shape(st.view, {lit.elementCount() / size}));
    if (lit.byteCount() > 0)  // an empty slice's literal has no storage (a null pointer)
      std::memcpy(viewed.bytes(), lit.bytes(), lit.byteCount());
    lit = std::move(viewed);
    where += " as " + std::string(hlo::primitiveTypeName(st.view));
  }
  std::string text = (st.label.empty() ? "" : st.label + ": ") + where + " = " +
                     lit.shape().shortStr() + " " + hlo::literalText(lit) + "\n";
  if (options_.debug)
    options_.debug(text);
  else
    std::cout << text;
}

// ---- Machine -----------------------------------------------------------------------------------

Machine::Machine(const taidl::Isa& isa, RunOptions options)
    : impl_(std::make_unique<Impl>(isa, std::move(options))) {}
Machine::~Machine() = default;
Machine::Machine(Machine&&) noexcept = default;

const taidl::Isa& Machine::isa() const {
  return impl_->isa_;
}
RunOptions& Machine::options() {
  return impl_->options_;
}
void Machine::reset(int64_t hbm_bytes) {
  impl_->reset(hbm_bytes);
}
int64_t Machine::hbmBytes() const {
  return impl_->state_.hbm_bytes;
}
std::span<int64_t> Machine::registers() {
  return impl_->state_.regs;
}
const Stats& Machine::stats() const {
  return impl_->stats();
}

MemoryUse Machine::memoryUse() const {
  MemoryUse u;
  for (const detail::ZeroedMemory& m : impl_->state_.buffers)
    u.state_bytes += static_cast<int64_t>(m.residentBytes());
  u.plan_bytes = static_cast<int64_t>(impl_->exec_.planBytes());
  return u;
}

std::span<uint8_t> Machine::memory(int32_t buffer) {
  if (buffer < 0 || static_cast<size_t>(buffer) >= impl_->state_.buffers.size())
    fail("Machine::memory: no buffer number " + std::to_string(buffer));
  auto& m = impl_->state_.buffers[static_cast<size_t>(buffer)];
  m.wroteAnywhere();  // the caller may write anywhere
  return {m.data(), m.size()};
}

void Machine::call(std::string_view unit, std::span<const int64_t> attrs) {
  Program p("call", impl_->state_.hbm_bytes);
  p.call(impl_->isa_, unit, std::vector<Affine>(attrs.begin(), attrs.end()));
  execute(p);
}

void Machine::execute(const Program& program) {
  if (program.hbm_bytes != impl_->state_.hbm_bytes)
    fail(program.file, {},
         "the program needs " + std::to_string(program.hbm_bytes) +
             " bytes of HBM, the machine has " + std::to_string(impl_->state_.hbm_bytes));
  impl_->execute(program);
}

std::map<std::string, hlo::Literal> Machine::run(
    const Program& program, const std::map<std::string, hlo::Literal>& inputs) {
  const taidl::Isa& isa = impl_->isa_;
  checkProgram(isa, program);
  for (const auto& [name, lit] : inputs) {
    const Tensor* t = program.findTensor(name);
    if (t == nullptr || t->kind != TensorKind::kInput)
      fail(program.file, {}, "the program has no input '" + name + "'",
           "inputs: " + joinWith(program.tensors, ", ", [](const Tensor& x) {
             return x.kind == TensorKind::kInput ? x.name : std::string("-");
           }));
  }
  impl_->reset(program.hbm_bytes);
  uint8_t* hbm = impl_->state_.buffers[0].data();
  for (const Tensor& t : program.tensors) {
    if (t.kind == TensorKind::kConst) {
      if (t.value.byteCount() != 0) std::memcpy(hbm + t.addr, t.value.bytes(), t.value.byteCount());
      impl_->state_.buffers[0].wrote(static_cast<size_t>(t.addr),
                                     static_cast<size_t>(t.addr) + t.value.byteCount());
      continue;
    }
    if (t.kind != TensorKind::kInput) continue;
    auto it = inputs.find(t.name);
    if (it == inputs.end())
      fail(program.file, t.loc, "missing input '" + t.name + "' (" + t.shape.shortStr() + ")");
    const hlo::Literal& v = it->second;
    if (v.isTuple() || v.isUnknown() || v.shape().elementType() != t.shape.elementType() ||
        v.shape().dims() != t.shape.dims())
      fail(program.file, t.loc,
           "input '" + t.name + "' is declared " + t.shape.shortStr() + " but the value given is " +
               (v.isTuple() ? std::string("a tuple") : v.shape().shortStr()),
           "wrong tensor size or type");
    if (v.byteCount() != 0) std::memcpy(hbm + t.addr, v.bytes(), v.byteCount());
    impl_->state_.buffers[0].wrote(static_cast<size_t>(t.addr),
                                   static_cast<size_t>(t.addr) + v.byteCount());
  }
  impl_->execute(program);
  std::map<std::string, hlo::Literal> out;
  for (const Tensor& t : program.tensors) {
    if (t.kind != TensorKind::kOutput) continue;
    hlo::Literal lit(t.shape);
    if (lit.byteCount() != 0)  // a zero-element output has no storage (null pointers)
      std::memcpy(lit.bytes(), impl_->state_.buffers[0].data() + t.addr, lit.byteCount());
    out.emplace(t.name, std::move(lit));
  }
  return out;
}

std::map<std::string, hlo::Literal> run(const taidl::Isa& isa, const Program& program,
                                        const std::map<std::string, hlo::Literal>& inputs,
                                        const RunOptions& options, Stats* stats) {
  Machine m(isa, options);
  auto out = m.run(program, inputs);
  if (stats != nullptr) *stats = m.stats();
  return out;
}

}  // namespace tacit::oracle
