// oracle::Machine: the bit-faithful functional simulator of one ISA (docs/oracle.md).
//
// The machine holds HBM and every buffer of the Isa (zero at reset, allocated lazily by the OS so
// untouched scratchpad pages cost nothing) and the register file (initial values at reset). It
// executes calls with the spec's semantics through the taidl walk (constraints, register
// updates, if/repeat decisions, slice starts) and one specialisation per (instruction, key),
// compiled once into hlo::EvalPlans. Slices are read and written in place in the machine's
// buffers whenever they are contiguous and aligned (the starts are runtime offsets: nothing is
// re-planned per executed instruction); other slices go through preallocated staging buffers.
//
//   oracle::Machine m(isa);
//   std::map<std::string, hlo::Literal> out = m.run(program, {{"q", q}, {"k", k}, {"v", v}});
//   std::cout << m.stats().text(isa);
//
// or, without a machine to keep (the backend's verifier):
//
//   auto out = oracle::run(isa, program, inputs, {.clamp = false});
//
// Errors are DiagnosticErrors located at the program statement (with a note in the spec where
// the spec is involved): a violated constraint (names the instruction, its attribute values and
// the constraint; RunOptions::warn_constraints turns it into a warning), an out-of-range slice
// (names the slice and the buffer bounds; RunOptions::clamp selects XLA's clamping instead), a
// missing, extra or mis-shaped input, and more than RunOptions::max_steps executed statements.
//
// A Machine is not thread-safe; use one per thread (an Isa can be shared).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "hlo/literal.h"
#include "oracle/program.h"
#include "support/diagnostic.h"
#include "taidl/isa.h"

namespace tacit::oracle {

// A contiguous byte range an executed instruction reads or writes: one run of one of its slices
// (an HBM slice is one run; a slice of a multi-dimensional buffer is one run per row it covers
// partly, e.g. a tile of 128 partitions at a column offset is 128 runs). A slice of more than
// kMaxTouchedRuns runs is reported as its span, first to last byte.
inline constexpr int64_t kMaxTouchedRuns = 4096;
struct TouchedRange {
  int32_t buffer = -1;  // 0 = HBM
  bool write = false;
  int64_t offset = 0;  // bytes from the buffer's start
  int64_t bytes = 0;
};

// One executed instruction (macros arrive expanded, with `macro` set).
struct TraceEvent {
  const taidl::Isa* isa = nullptr;
  int32_t instruction = -1;
  std::span<const int64_t> attrs;  // alpha then beta, in declaration order
  int32_t macro = -1;              // the macro this call expands, or -1
  std::string_view file;
  SourceLoc loc;                          // the program statement
  int64_t cost = 0;                       // the spec's cost expression for this execution
  std::span<const TouchedRange> touched;  // the runs it reads and writes, in its slices' order
  // "file:line: name(a=1, b=2)" (+ "  [macro m]").
  std::string text() const;
};

struct RunOptions {
  bool clamp = false;             // clamp out-of-range slice starts as XLA does (default: error)
  bool warn_constraints = false;  // a violated `require` warns (to `warnings`) instead of failing
  DiagnosticSink* warnings = nullptr;
  std::function<void(const TraceEvent&)> trace;   // called before each executed instruction
  std::function<void(const std::string&)> debug;  // debug statements' text (default: stdout)
  int64_t max_steps = kDefaultMaxSteps;  // executed statements (calls, loop iterations, debugs)
  // Queue independent executions of one elementwise specialisation and run them as one plan
  // (docs/oracle.md, "Batching"); results are identical either way. Off while `trace` is set.
  bool batch = true;
  // Execute qualifying call sites without the walk: per site, the entry, the cost and each
  // access's byte offset as an affine function of the loop variables, proven in bounds over the
  // loop ranges (docs/oracle.md, "Compiled call sites"); results and stats are identical.
  bool compiled_sites = true;
  // Compile the specialisations' elementwise runs to AVX-512 code where the machine has it, and
  // call a specialisation that is one such kernel on its slices in place (docs/oracle.md,
  // "Native kernels"); results are identical either way. Fixed when the Machine is made.
  bool native = true;
};

// Counters of one run (Machine::stats()); always collected, they cost a few additions per call.
struct Stats {
  int64_t instructions = 0;  // executed instructions (a macro counts its expansion)
  int64_t macro_calls = 0;
  int64_t steps = 0;                     // executed statements (see RunOptions::max_steps)
  int64_t total_cost = 0;                // sum of the spec's cost expressions
  std::vector<int64_t> per_instruction;  // executions per instruction index
  std::vector<int64_t> cost_per_instruction;
  // moved[src][dst]: bytes written to buffer dst by executions that read buffer src; src ==
  // buffers.size() counts writes of executions that read nothing (constants, zeroing).
  std::vector<std::vector<int64_t>> moved;
  std::vector<int64_t> bytes_read, bytes_written;  // per buffer
  int64_t specialisations = 0;                     // distinct (instruction, key) compiled
  // Loop iterations run as direct nests (docs/oracle.md, "Direct loop nests"), nested ones
  // included in their outer iteration.
  int64_t nest_iterations = 0;

  // A table: instruction counts, bytes per buffer pair, total cost.
  std::string text(const taidl::Isa& isa) const;
  // Bytes between HBM and the on-chip buffers: what executions reading an HBM buffer wrote on
  // chip and what executions reading an on-chip buffer wrote to HBM (a read-modify-write store
  // counts the whole region it rewrites).
  int64_t hbmBytes(const taidl::Isa& isa) const;
};

// The memory a Machine holds (Machine::memoryUse()).
struct MemoryUse {
  // HBM and every buffer: of a large buffer (an anonymous mapping) only the pages in memory.
  int64_t state_bytes = 0;
  // The compiled specialisations' data: plan arenas (temporaries, constants), kernel workspaces,
  // staging and batch buffers, native kernels' code pages. Not counted: tacit's own code, the
  // Isa, the program, the plans' bookkeeping.
  int64_t plan_bytes = 0;
};

class Machine {
 public:
  explicit Machine(const taidl::Isa& isa, RunOptions options = {});
  ~Machine();
  Machine(Machine&&) noexcept;
  Machine& operator=(Machine&&) = delete;
  Machine(const Machine&) = delete;

  const taidl::Isa& isa() const;
  RunOptions& options();

  // Zeroes HBM (resized to `hbm_bytes`) and every buffer, resets the registers and the stats.
  // Compiled specialisations are kept.
  void reset(int64_t hbm_bytes);
  int64_t hbmBytes() const;

  // The bytes of buffer `index` (0 = HBM): its whole tensor, row-major, little-endian.
  std::span<uint8_t> memory(int32_t buffer);
  std::span<int64_t> registers();
  const Stats& stats() const;
  MemoryUse memoryUse() const;

  // Executes one instruction or macro call now (attrs in declaration order).
  void call(std::string_view unit, std::span<const int64_t> attrs);

  // reset(program.hbm_bytes), writes constants then inputs (each by name, of its declared
  // shape), executes the body and returns every output by name.
  std::map<std::string, hlo::Literal> run(const Program& program,
                                          const std::map<std::string, hlo::Literal>& inputs);
  // Executes the body on the current state (HBM must have the program's size).
  void execute(const Program& program);

 private:
  class Impl;
  std::unique_ptr<Impl> impl_;
};

// One-shot: a fresh Machine runs the program. `stats` (optional) receives the counters.
std::map<std::string, hlo::Literal> run(const taidl::Isa& isa, const Program& program,
                                        const std::map<std::string, hlo::Literal>& inputs,
                                        const RunOptions& options = {}, Stats* stats = nullptr);

}  // namespace tacit::oracle
