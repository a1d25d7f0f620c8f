// The cycle model's recurrences (timing.h, docs/timing.md). Dispatch and every engine are in
// order, so each instruction's events follow from the earlier instructions' alone: one pass in
// execution order computes them, with the memory port's reservations kept as a calendar (a later
// instruction may take the port in a gap before an earlier one's transfer).
#include "timing/timing.h"

#include <algorithm>
#include <limits>

#include "hlo/dtype.h"
#include "support/diagnostic.h"

namespace tacit::timing {
namespace {

int64_t ceilDiv(int64_t a, int64_t b) {
  return (a + b - 1) / b;
}

// Segments whose last use ends before the dispatch time cannot delay any later instruction; they
// are dropped every this many instructions (bounding the tracked ranges by what is in flight).
constexpr int64_t kForgetEvery = 1 << 16;

}  // namespace

Simulator::Simulator(const taidl::Isa& isa, Options options) : isa_(isa), options_(options) {
  size_t n = std::max<size_t>(isa.engines.size(), 1);
  engines_.resize(n);
  for (size_t i = 0; i < n; ++i)
    engines_[i].use.name = isa.engines.empty() ? "core" : isa.engines[i].name.text;
  ranges_.resize(isa.buffers.size());
}

// When the last writer of bytes `r` (for a write: also the last readers) finishes.
int64_t Simulator::readyFor(const oracle::TouchedRange& r) const {
  const Ranges& m = ranges_[static_cast<size_t>(r.buffer)];
  int64_t lo = r.offset, hi = r.offset + r.bytes, ready = 0;
  auto it = m.upper_bound(lo);
  if (it != m.begin() && std::prev(it)->second.end > lo) --it;
  for (; it != m.end() && it->first < hi; ++it) {
    const Segment& x = it->second;
    ready = std::max(ready, r.write ? std::max(x.written, x.read) : x.written);
  }
  return ready;
}

// Records that an instruction finishing at `finish` reads or writes the bytes `r`.
void Simulator::record(const oracle::TouchedRange& r, int64_t finish) {
  Ranges& m = ranges_[static_cast<size_t>(r.buffer)];
  int64_t lo = r.offset, hi = r.offset + r.bytes;
  // Boundaries at lo and hi: a segment across one is cut in two.
  for (int64_t at : {lo, hi}) {
    auto it = m.upper_bound(at);
    if (it == m.begin()) continue;
    --it;
    if (it->first < at && it->second.end > at) {
      Segment right = it->second;
      it->second.end = at;
      m.emplace(at, right);
      ++segments_;
    }
  }
  auto it = m.lower_bound(lo);
  if (r.write) {
    // A write orders every later access after itself: one segment replaces what was there.
    while (it != m.end() && it->first < hi) {
      it = m.erase(it);
      --segments_;
    }
    m.emplace(lo, Segment{hi, finish, 0});
    ++segments_;
    return;
  }
  int64_t at = lo;
  while (at < hi) {
    if (it == m.end() || it->first > at) {  // a gap up to the next segment
      int64_t gap_end = it == m.end() ? hi : std::min(hi, it->first);
      it = m.emplace_hint(it, at, Segment{gap_end, 0, finish});
      ++segments_;
    } else {
      it->second.read = std::max(it->second.read, finish);
    }
    at = it->second.end;
    ++it;
  }
}

// Drops the segments no later instruction can wait for (every later start is after `before`).
void Simulator::forget(int64_t before) {
  for (Ranges& m : ranges_) {
    for (auto it = m.begin(); it != m.end();) {
      if (std::max(it->second.written, it->second.read) <= before) {
        it = m.erase(it);
        --segments_;
      } else {
        ++it;
      }
    }
  }
}

// The earliest time >= `earliest` at which the port is free for `cycles` cycles; reserves it.
int64_t Simulator::reservePort(int64_t earliest, int64_t cycles) {
  int64_t t = earliest;
  auto it = port_.upper_bound(t);
  if (it != port_.begin()) {
    auto prev = std::prev(it);
    if (prev->second > t) t = prev->second;
  }
  while (it != port_.end() && it->first < t + cycles) {
    t = std::max(t, it->second);
    ++it;
  }
  port_.emplace(t, t + cycles);
  return t;
}

CallTiming callTiming(const taidl::Instruction& inst, std::span<const int64_t> attrs,
                      int64_t cost) {
  CallTiming t;
  t.interval = cost;
  t.latency = -1;
  if (const taidl::Stmt* clause = inst.timing) {
    t.engine = static_cast<size_t>(clause->engine);
    const taidl::EvalEnv env{attrs, {}, {}};
    if (!clause->expr.empty()) t.interval = taidl::evalExpr(clause->expr, env);
    if (!clause->expr2.empty()) t.latency = taidl::evalExpr(clause->expr2, env);
    if (!clause->expr3.empty()) t.bytes = taidl::evalExpr(clause->expr3, env);
  }
  t.latency = std::max(t.latency, t.interval);
  return t;
}

int64_t portCycles(const taidl::MemoryPort& m, int64_t bytes) {
  return std::max(ceilDiv(bytes, m.beat), ceilDiv(bytes * m.latency, m.in_flight * m.request));
}

std::map<std::string, hlo::Literal> zeroInputs(const oracle::Program& program) {
  std::map<std::string, hlo::Literal> inputs;
  for (const oracle::Tensor& t : program.tensors) {
    if (t.kind == oracle::TensorKind::kInput) inputs.emplace(t.name, hlo::Literal(t.shape));
  }
  return inputs;
}

void Simulator::add(const oracle::TraceEvent& e) {
  const taidl::Instruction& inst = isa_.instructions[static_cast<size_t>(e.instruction)];
  CallTiming t;
  try {
    t = callTiming(inst, e.attrs, e.cost);
  } catch (const taidl::ExprError& err) {
    fail(std::string(e.file), e.loc,
         "the timing clause of " + isa_.callText(inst, e.attrs) + " fails: " + err.message);
  }
  const bool given_bytes = inst.timing && !inst.timing->expr3.empty();
  for (auto [value, what] : {std::pair{t.interval, "interval"}, std::pair{t.latency, "latency"},
                             std::pair{given_bytes ? t.bytes : 0, "bytes"}}) {
    if (value < 0)
      fail(std::string(e.file), e.loc,
           "the timing " + std::string(what) + " of " + isa_.callText(inst, e.attrs) +
               " is negative (" + std::to_string(value) + ")",
           "the timing clause at " + isa_.locText(inst.timing->offset) + " gives it");
  }
  const size_t engine = t.engine;
  const int64_t interval = t.interval, latency = t.latency, bytes = t.bytes;
  EngineState& eng = engines_[engine];

  // Dispatch: in order, one per cycle, into a free entry of the engine's queue.
  int64_t dispatch = last_dispatch_ + 1;
  int64_t queue = isa_.engines.empty() ? 1 : isa_.engines[engine].queue;
  auto later = std::greater<int64_t>();  // a min-heap of finish times
  while (!eng.in_queue.empty() && eng.in_queue.front() <= dispatch) {
    std::pop_heap(eng.in_queue.begin(), eng.in_queue.end(), later);
    eng.in_queue.pop_back();
  }
  if (static_cast<int64_t>(eng.in_queue.size()) >= queue) {
    int64_t freed = eng.in_queue.front();
    std::pop_heap(eng.in_queue.begin(), eng.in_queue.end(), later);
    eng.in_queue.pop_back();
    queue_stall_ += freed - dispatch;
    dispatch = freed;
  }
  last_dispatch_ = dispatch;

  // Start: engine free and dependencies through the touched ranges finished.
  int64_t ready = 0, hbm = 0;
  for (const oracle::TouchedRange& r : e.touched) {
    if (r.bytes <= 0) continue;
    if (r.buffer == 0) hbm += r.bytes;
    ready = std::max(ready, readyFor(r));
  }
  if (bytes >= 0)
    hbm = bytes;  // the clause knows what the DMA moves (a pitched slice's span
                  // includes the gaps between its rows)
  int64_t start = std::max({dispatch, eng.free, ready});
  if (ready > std::max(dispatch, eng.free))
    dependency_stall_ += ready - std::max(dispatch, eng.free);

  // Memory port, then finish.
  int64_t finish = start + latency, free = start + interval;
  int64_t port_start = start, port_end = start;
  if (isa_.memory && hbm > 0) {
    const taidl::MemoryPort& m = *isa_.memory;
    const int64_t cycles = portCycles(m, hbm);
    port_start = reservePort(start, cycles);
    port_end = port_start + cycles;
    memory_busy_ += cycles;
    finish = std::max(finish, port_end + m.latency);
    free = std::max(free, port_end);
  }
  hbm_bytes_ += hbm;
  // Reservations that end before this dispatch can no longer matter: every later instruction
  // starts after it.
  while (!port_.empty() && port_.begin()->second <= dispatch)
    port_.erase(port_.begin());

  for (const oracle::TouchedRange& r : e.touched) {
    if (r.bytes > 0) record(r, finish);
  }
  if (++next_forget_ == kForgetEvery) {
    next_forget_ = 0;
    forget(dispatch);
  }
  eng.free = free;
  eng.in_queue.push_back(finish);
  std::push_heap(eng.in_queue.begin(), eng.in_queue.end(), later);
  ++eng.use.instructions;
  eng.use.busy += free - start;
  cycles_ = std::max(cycles_, finish);
  ++instructions_;
  if (static_cast<int64_t>(events_.size()) < options_.keep_events) {
    events_.push_back(Event{e.instruction, static_cast<int32_t>(engine), dispatch, start, finish,
                            free - start, port_start, port_end, hbm});
  } else if (options_.keep_events > 0) {
    truncated_ = true;
  }
}

Report Simulator::report() const {
  Report r;
  r.isa = isa_.name;
  r.cycles = cycles_;
  r.instructions = instructions_;
  for (const EngineState& e : engines_)
    r.engines.push_back(e.use);
  r.has_memory = isa_.memory.has_value();
  r.memory_busy = memory_busy_;
  r.hbm_bytes = hbm_bytes_;
  r.memory_latency = isa_.memory ? isa_.memory->latency : 0;
  r.queue_stall = queue_stall_;
  r.dependency_stall = dependency_stall_;
  return r;
}

int64_t Simulator::memoryBytes() const {
  // A map node: the value, three pointers and the colour, rounded by the allocator.
  constexpr size_t kNode = 64;
  size_t bytes =
      events_.capacity() * sizeof(Event) + (port_.size() + static_cast<size_t>(segments_)) * kNode;
  for (const EngineState& e : engines_)
    bytes += e.in_queue.capacity() * sizeof(int64_t);
  return static_cast<int64_t>(bytes);
}

Report simulate(const taidl::Isa& isa, const oracle::Program& program,
                const std::map<std::string, hlo::Literal>& inputs, Simulator* simulator,
                oracle::RunOptions run, oracle::Stats* stats) {
  Simulator local(isa);
  Simulator& sim = simulator ? *simulator : local;
  run.trace = [&](const oracle::TraceEvent& e) { sim.add(e); };
  oracle::run(isa, program, inputs, run, stats);
  return sim.report();
}

Report simulatePrefix(const taidl::Isa& isa, const oracle::Program& program,
                      const std::map<std::string, hlo::Literal>& inputs, int64_t max_instructions) {
  struct Enough {};  // thrown from the trace callback to end the run; nothing else throws it
  Simulator sim(isa);
  oracle::RunOptions options;
  options.trace = [&](const oracle::TraceEvent& e) {
    if (sim.instructions() >= max_instructions) throw Enough{};
    sim.add(e);
  };
  try {
    oracle::run(isa, program, inputs, options);
  } catch (const Enough&) {
  }
  return sim.report();
}

}  // namespace tacit::timing
