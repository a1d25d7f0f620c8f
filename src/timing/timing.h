// timing::Simulator: the cycle model derived from an ISA description (docs/timing.md).
//
// The spec says, per instruction, which engine it occupies, for how many cycles (interval) and
// when its results are visible (latency) — its `timing` clause — and per ISA the engines' queue
// depths and the memory interface (docs/taidl.md section 3.5). The simulator takes the program's
// dynamic instruction stream from the oracle (each executed instruction with the byte ranges it
// reads and writes) and computes when each instruction is dispatched, starts, uses the memory
// port and finishes:
//
//   dispatch  in program order, one instruction per cycle, when its engine's queue has a free
//             entry (an entry is held from dispatch to finish: back-pressure);
//   start     when its engine is free (each engine runs its instructions in order), and every
//             earlier instruction that wrote bytes it reads or writes, or read bytes it writes,
//             has finished (byte ranges exactly as the oracle reports them);
//   memory    an instruction that moves B bytes of HBM occupies the shared memory port for
//             max(ceil(B / beat), ceil(B * latency / (in_flight * request))) cycles (bandwidth
//             or requests in flight, whichever binds) at the earliest free time from its start;
//             its data arrive `latency` cycles after its port time;
//   finish    max(start + latency of the clause, end of its port time + memory latency).
//
// Engines run concurrently; nothing else is shared. A spec without engines has one implicit
// engine whose instructions take their `cost` in cycles, so the total is then the sum of costs
// (plus the memory time if a memory interface is declared).
//
//   timing::Simulator sim(isa);
//   oracle::RunOptions o;
//   o.trace = [&](const oracle::TraceEvent& e) { sim.add(e); };
//   oracle::run(isa, program, inputs, o);
//   std::cout << sim.report().text();
#pragma once

#include <cstdint>
#include <map>
#include <ostream>
#include <span>
#include <string>
#include <vector>

#include "oracle/machine.h"
#include "taidl/isa.h"

namespace tacit::timing {

// What one execution of an instruction occupies (docs/timing.md, "The rules"), from its timing
// clause at its attribute values: its engine, interval (default: its cost), latency (default,
// and at least, the interval) and HBM bytes (-1: the bytes of its HBM slices). Throws
// taidl::ExprError when an expression fails; values may be negative (the caller decides).
struct CallTiming {
  size_t engine = 0;
  int64_t interval = 0, latency = 0, bytes = -1;
};
CallTiming callTiming(const taidl::Instruction& inst, std::span<const int64_t> attrs, int64_t cost);
// Cycles `bytes` of HBM hold the memory port: the bus width or the requests in flight over the
// latency, whichever binds.
int64_t portCycles(const taidl::MemoryPort& memory, int64_t bytes);
// Zero for every input of `program` (the model's cycles never depend on values).
std::map<std::string, hlo::Literal> zeroInputs(const oracle::Program& program);

// One simulated instruction.
struct Event {
  int32_t instruction = -1;
  int32_t engine = 0;
  int64_t dispatch = 0, start = 0, finish = 0;
  int64_t interval = 0;                  // cycles its engine is busy from its start
  int64_t port_start = 0, port_end = 0;  // its memory-port time (equal: none)
  int64_t hbm_bytes = 0;
};

struct EngineUse {
  std::string name;
  int64_t instructions = 0;
  int64_t busy = 0;  // cycles the engine is occupied (its instructions' intervals)
};

struct Report {
  std::string isa;
  int64_t cycles = 0;  // when the last instruction finishes
  int64_t instructions = 0;
  std::vector<EngineUse> engines;
  bool has_memory = false;
  int64_t memory_busy = 0;  // cycles the memory port is occupied
  int64_t hbm_bytes = 0;
  int64_t memory_latency = 0;
  // Cycles the in-order dispatch waited for a full queue, summed over instructions.
  int64_t queue_stall = 0;
  // Cycles instructions waited for earlier ones they depend on, beyond their engine and dispatch.
  int64_t dependency_stall = 0;

  std::string text() const;
  std::string json() const;
};

struct Options {
  // Events kept for the trace (0: none); the report covers every instruction regardless.
  int64_t keep_events = 0;
};

class Simulator {
 public:
  explicit Simulator(const taidl::Isa& isa, Options options = {});

  // Adds one executed instruction (call from oracle::RunOptions::trace, in execution order).
  // A timing expression that fails to evaluate or is negative is a DiagnosticError at the
  // program statement.
  void add(const oracle::TraceEvent& e);

  Report report() const;
  int64_t instructions() const { return instructions_; }
  // Bytes the simulator holds: the byte ranges it tracks, the port calendar, the kept events.
  int64_t memoryBytes() const;
  const std::vector<Event>& events() const { return events_; }
  bool eventsTruncated() const { return truncated_; }
  // The kept events in Chrome trace-event JSON (chrome://tracing, ui.perfetto.dev): one track
  // per engine and one for the memory port; one cycle is shown as one microsecond.
  void writeChromeTrace(std::ostream& out) const;

 private:
  // What the last instructions did to a byte range [start, end) of a buffer.
  struct Segment {
    int64_t end = 0;
    int64_t written = 0;  // when the last write to it finishes
    int64_t read = 0;     // when the last read of it since then finishes
  };
  using Ranges = std::map<int64_t, Segment>;  // start -> segment; disjoint
  struct EngineState {
    int64_t free = 0;
    std::vector<int64_t> in_queue;  // finish times of dispatched, unfinished instructions (heap)
    EngineUse use;
  };
  int64_t readyFor(const oracle::TouchedRange& r) const;
  void record(const oracle::TouchedRange& r, int64_t finish);
  void forget(int64_t before);
  int64_t reservePort(int64_t earliest, int64_t cycles);

  const taidl::Isa& isa_;
  Options options_;
  std::vector<EngineState> engines_;
  std::vector<Ranges> ranges_;       // per buffer
  int64_t segments_ = 0;             // in ranges_, for memoryBytes
  int64_t next_forget_ = 0;          // instructions before the next forget()
  std::map<int64_t, int64_t> port_;  // the memory port's reservations: start -> end
  int64_t last_dispatch_ = -1;
  int64_t cycles_ = 0;
  int64_t instructions_ = 0;
  int64_t memory_busy_ = 0, hbm_bytes_ = 0;
  int64_t queue_stall_ = 0, dependency_stall_ = 0;
  std::vector<Event> events_;
  bool truncated_ = false;
};

// The first `max_instructions` executed instructions of `program` through a simulator (the run
// stops there): the prefix's report, whose `instructions` say how far it got. A cheap fidelity of
// the full run for a program whose loops repeat the same work (a tuner's first rungs).
Report simulatePrefix(const taidl::Isa& isa, const oracle::Program& program,
                      const std::map<std::string, hlo::Literal>& inputs, int64_t max_instructions);

// Runs `program` on the oracle with a simulator attached (`simulator`, if given: it keeps its
// events for a trace) and returns the report. `run` sets the oracle's other options (a step
// limit) and `stats`, if given, receives its counters: one run gives both.
Report simulate(const taidl::Isa& isa, const oracle::Program& program,
                const std::map<std::string, hlo::Literal>& inputs, Simulator* simulator = nullptr,
                oracle::RunOptions run = {}, oracle::Stats* stats = nullptr);

}  // namespace tacit::timing
