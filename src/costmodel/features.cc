#include "costmodel/features.h"

#include <algorithm>
#include <cmath>
#include <map>

#include "hlo/dtype.h"
#include "taidl/walk.h"
#include "timing/probe.h"
#include "timing/timing.h"

namespace tacit::costmodel {
namespace {

float lg(double x) {
  return static_cast<float>(std::log2(1 + std::max(0.0, x)));
}

// What one execution of an instruction costs, from its attribute values.
struct CallCosts {
  size_t engine = 0;
  double cost = 1, interval = 1, latency = 1, hbm = 0;
};

// The shortest p such that the sequence is its first p elements repeated (an unrolled body's
// copies: multiple buffering repeats a step's calls once per buffer).
size_t period(const std::vector<std::pair<bool, int32_t>>& seq) {
  for (size_t p = 1; p < seq.size(); ++p) {
    if (seq.size() % p != 0) continue;
    bool repeats = true;
    for (size_t i = p; i < seq.size() && repeats; ++i)
      repeats = seq[i] == seq[i % p];
    if (repeats) return p;
  }
  return std::max<size_t>(seq.size(), 1);
}

class Walker {
 public:
  explicit Walker(const taidl::Isa& isa)
      : isa_(isa),
        regs_(isa.initialRegisters()),
        busy_(std::max<size_t>(isa.engines.size(), 1), 0),
        counts_(isa.instructions.size(), 0) {}

  void body(const std::vector<oracle::Stmt>& stmts, double times, int depth) {
    bool innermost = true;
    for (const oracle::Stmt& s : stmts)
      innermost = innermost && s.kind != oracle::StmtKind::kLoop;
    std::vector<std::pair<bool, int32_t>> units;  // the body's calls, for its period
    std::vector<double> chain;                    // per call: its latency (and memory's)
    double calls = 0;
    for (const oracle::Stmt& s : stmts) {
      if (s.kind == oracle::StmtKind::kLoop) {
        const double trips =
            static_cast<double>(std::max<int64_t>(0, s.hi.constant - s.lo.constant));
        body(s.body, times * trips, depth + 1);
        continue;
      }
      if (s.kind != oracle::StmtKind::kCall) continue;
      std::vector<int64_t> attrs;
      for (const oracle::Affine& a : s.attrs)
        attrs.push_back(a.constant);
      if (s.is_macro) {
        double latency = 0;
        for (const taidl::ExpandedCall& c : taidl::expandMacro(isa_, s.unit, attrs)) {
          latency += call(c.instruction, c.attrs, times);
          ++calls;
        }
        chain.push_back(latency);
      } else {
        chain.push_back(call(s.unit, attrs, times));
        ++calls;
      }
      units.emplace_back(s.is_macro, s.unit);
    }
    max_depth_ = std::max(max_depth_, depth);
    if (innermost && depth > 0 && calls > 0) {
      innermost_iterations_ += times;
      calls_per_iteration_ = std::max(calls_per_iteration_, calls);
      const size_t p = period(units);
      unroll_ = std::max(unroll_, static_cast<double>(units.size() / p));
      // One copy's calls one after another, each waiting for the last: the iteration's latency
      // when nothing overlaps it, divided among the copies that do overlap.
      double one = 0;
      for (size_t i = 0; i < p; ++i)
        one += chain[i];
      latency_bound_ += times * one;
    }
  }

  // The features, the probe's (timing/probe.h) among the shared ones.
  Features features(const timing::Probe& probe) const {
    Features f;
    f.names = sharedNames();
    double total_busy = 0, max_busy = 0;
    for (double b : busy_) {
      total_busy += b;
      max_busy = std::max(max_busy, b);
    }
    const double latency = isa_.memory ? static_cast<double>(isa_.memory->latency) : 0;
    const double latency_bound = latency_bound_ / std::max(1.0, unroll_);
    const double bound = std::max({max_busy, port_, latency_bound});
    f.probe = probeParts(probe, bound);
    f.values = {lg(instructions_),
                lg(cost_),
                lg(hbm_),
                lg(port_),
                static_cast<float>(latency),
                lg(max_busy),
                lg(total_busy),
                lg(latency_sum_),
                static_cast<float>(total_busy > 0 ? max_busy / total_busy : 0),
                static_cast<float>(max_busy > 0 ? port_ / max_busy : 0),
                static_cast<float>(max_depth_),
                lg(innermost_iterations_),
                static_cast<float>(calls_per_iteration_),
                static_cast<float>(unroll_),
                lg(probe.cycles_per_call),
                lg(probe.ran ? static_cast<double>(probe.estimate) : 0),
                lg(latency_bound),
                lg(bound),
                static_cast<float>(f.probe.coverage)};
    for (size_t i = 0; i < counts_.size(); ++i) {
      f.names.push_back("count:" + isa_.instructions[i].name.text);
      f.values.push_back(lg(counts_[i]));
    }
    return f;
  }

 private:
  double eval(const taidl::Expr& e, const std::vector<int64_t>& attrs, double fallback) const {
    if (e.empty()) return fallback;
    try {
      return static_cast<double>(taidl::evalExpr(e, taidl::EvalEnv{attrs, regs_, loops_}));
    } catch (const taidl::ExprError&) {
      return fallback;
    }
  }

  // HBM bytes an instruction's slices name (every branch counted: an upper bound).
  double hbmBytes(const std::vector<taidl::Stmt>& stmts, const std::vector<int64_t>& attrs) const {
    double bytes = 0;
    for (const taidl::Stmt& s : stmts) {
      if (s.buffer_index == 0 &&
          (s.kind == taidl::StmtKind::kReads || s.kind == taidl::StmtKind::kWrites)) {
        double n = 1;
        for (const taidl::Expr& e : s.sizes)
          n *= eval(e, attrs, 0);
        bytes += n;
      } else if (s.buffer_index == 0 &&
                 (s.kind == taidl::StmtKind::kRead || s.kind == taidl::StmtKind::kWrite)) {
        double n = static_cast<double>(hlo::byteSize(s.type.dtype));
        for (const taidl::Expr& e : s.type.dims)
          n *= eval(e, attrs, 0);
        bytes += n;
      }
      bytes += hbmBytes(s.body, attrs) + hbmBytes(s.else_body, attrs);
    }
    return bytes;
  }

  // Accounts one call executed `times` times; returns its latency plus, if it moves HBM bytes,
  // the memory's.
  double call(int32_t instruction, const std::vector<int64_t>& attrs, double times) {
    const taidl::Instruction& inst = isa_.instructions[static_cast<size_t>(instruction)];
    const double cost = inst.cost ? eval(inst.cost->expr, attrs, 1) : 1;
    // The timing model's own reading of the clause; one that does not evaluate here (it needs a
    // register) counts as its cost on the first engine.
    timing::CallTiming t{0, static_cast<int64_t>(cost), static_cast<int64_t>(cost), -1};
    try {
      t = timing::callTiming(inst, attrs, static_cast<int64_t>(cost));
    } catch (const taidl::ExprError&) {
    }
    CallCosts c{t.engine, cost, static_cast<double>(t.interval), static_cast<double>(t.latency),
                t.bytes >= 0 ? static_cast<double>(t.bytes) : hbmBytes(inst.body, attrs)};
    instructions_ += times;
    cost_ += times * c.cost;
    hbm_ += times * c.hbm;
    busy_[c.engine] += times * c.interval;
    latency_sum_ += times * c.latency;
    counts_[static_cast<size_t>(instruction)] += times;
    if (isa_.memory && c.hbm > 0) {
      port_ += times *
               static_cast<double>(timing::portCycles(*isa_.memory, static_cast<int64_t>(c.hbm)));
      return c.latency + static_cast<double>(isa_.memory->latency);
    }
    return c.latency;
  }

  const taidl::Isa& isa_;
  std::vector<int64_t> regs_;
  std::vector<int64_t> loops_ = std::vector<int64_t>(64, 0);
  std::vector<double> busy_;
  std::vector<double> counts_;
  double instructions_ = 0, cost_ = 0, hbm_ = 0, port_ = 0, latency_sum_ = 0;
  double innermost_iterations_ = 0, calls_per_iteration_ = 0, unroll_ = 0, latency_bound_ = 0;
  int max_depth_ = 0;
};

}  // namespace

const std::vector<std::string>& sharedNames() {
  static const std::vector<std::string> names = {"log instructions",
                                                 "log spec cost",
                                                 "log HBM bytes",
                                                 "log memory-port cycles",
                                                 "memory latency",
                                                 "log busiest engine's cycles",
                                                 "log engines' cycles",
                                                 "log latencies",
                                                 "busiest engine's share",
                                                 "memory port / busiest",
                                                 "loop depth",
                                                 "log innermost iterations",
                                                 "calls per innermost iteration",
                                                 "copies per innermost iteration",
                                                 "log probe cycles per call",
                                                 "log probe estimate",
                                                 "log latency-bound cycles",
                                                 "log bound cycles",
                                                 "probe coverage"};
  return names;
}

Features programFeatures(const taidl::Isa& isa, const oracle::Program& program) {
  Walker w(isa);
  w.body(program.body, 1, 0);
  // The probe: the loop nest's steady state, what the sums cannot see (a load that waits for the
  // register a compute still reads, an engine idle behind a dependency).
  return w.features(timing::probe(isa, program));
}

}  // namespace tacit::costmodel
