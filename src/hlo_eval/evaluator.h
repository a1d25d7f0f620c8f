// The reference evaluator: tacit's one tensor-semantics engine (XLA CPU semantics, bit for bit;
// the rules are in docs/numerics.md and src/hlo_eval/kernels/scalar.h).
//
// Two ways to use it:
//
//  * One-shot: `evaluate(module, arguments)` evaluates the entry computation on Literals.
//
//  * Compiled (the oracle's way): build an EvalPlan once from an HloComputation, then call run()
//    as often as needed with caller-provided buffers:
//
//        EvalPlan plan = EvalPlan::compile(*module.entry());    // validates; may throw
//        for (...) plan.run(input_pointers, output_pointers);   // no allocation, no shape work
//
//    compile() resolves every shape, selects one kernel per instruction (element-type dispatch
//    happens here, never per element), inlines call/fusion, compiles called computations (while,
//    conditional, reduce/map/sort bodies) into sub-plans, folds constants and iota into
//    preallocated buffers and preallocates every intermediate buffer and workspace. run() then
//    only executes kernels.
//
// Buffers: every array value is dense row-major (C order) bytes in Literal's element storage
// (literal.h: pred as one byte 0/1, f16/bf16 as 16-bit patterns, little-endian). Tuple-shaped
// parameters and results are flattened depth-first into their array leaves: inputs() lists the
// leaves of parameter 0, then parameter 1, ...; outputs() the leaves of the result. Output buffers
// may overlap input buffers (the plan then stages results internally); pred inputs must hold 0/1.
//
// A plan is not thread-safe (run() reuses its intermediate buffers): use one plan per thread.
//
// Errors: compile() and checkEvaluable() throw DiagnosticError at the first unsupported opcode,
// element type or attribute, or inconsistent shape, located at the instruction (file:line:col of
// the module's sourceFile()). run() throws DiagnosticError only for data-dependent failures: a
// while loop exceeding EvalOptions::max_while_iterations, and (in DynamicIndexMode::kError) an
// out-of-range dynamic-slice / dynamic-update-slice start.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <vector>

#include "hlo/instruction.h"
#include "hlo/literal.h"
#include "hlo/shape.h"

namespace tacit::hlo {

enum class DynamicIndexMode {
  kClamp,  // XLA semantics: start indices are clamped so the slice lies inside the operand
  kError,  // an out-of-range start is a DiagnosticError naming the instruction and the bounds
};

struct EvalOptions {
  // Iterations one execution of a `while` may take before run() fails (guards against hangs).
  int64_t max_while_iterations = 1'000'000;
  DynamicIndexMode dynamic_index_mode = DynamicIndexMode::kClamp;
  // Fused runs of elementwise operations may be compiled to AVX-512 code (docs/numerics.md, "Native
  // elementwise runs"); results are identical either way. Off: every run is interpreted.
  bool native_elementwise = true;
};

namespace detail {
class PlanImpl;
}

// A plan that is one native elementwise run reading its inputs and writing its outputs where the
// caller's buffers are (EvalPlan::directKernel): the caller may call `fn` itself, skipping run()'s
// checks. `args[k]` says what base pointer k is; every element is at base + i * its size.
struct DirectKernel {
  using Fn = void (*)(uint8_t* const* bases, int64_t n);
  struct Arg {
    enum class Kind : uint8_t { kInput, kOutput, kFixed };
    Kind kind = Kind::kInput;
    int index = -1;            // kInput / kOutput: the run() input or output
    uint8_t* fixed = nullptr;  // kFixed: a constant of the plan
  };
  Fn fn = nullptr;
  int64_t n = 0;
  std::vector<Arg> args;
  // Every input is loaded before any output is stored, per group of eight elements: an output
  // may then be exactly an input (the same address and size). Any other overlap of an output
  // with an input needs run().
  bool loads_before_stores = false;
};

class EvalPlan {
 public:
  // Compiles `computation` (which must belong to a module if diagnostics should name a file).
  static EvalPlan compile(const HloComputation& computation, const EvalOptions& options = {});

  EvalPlan(EvalPlan&&) noexcept;
  EvalPlan& operator=(EvalPlan&&) noexcept;
  ~EvalPlan();

  // Parameter shapes in parameter order, and their flattened array leaves (the run() inputs).
  const std::vector<Shape>& parameterShapes() const;
  const std::vector<Shape>& inputShapes() const;
  // The result shape and its flattened array leaves (the run() outputs).
  const Shape& resultShape() const;
  const std::vector<Shape>& outputShapes() const;
  // Bytes of preallocated intermediate, constant and workspace memory.
  size_t workspaceBytes() const;
  // Fused elementwise runs compiled to native code (EvalOptions::native_elementwise), over this
  // plan and the plans it calls: for tests and benchmarks.
  size_t nativeRunCount() const;
  // The plan as one native kernel, or nullopt (see DirectKernel).
  std::optional<DirectKernel> directKernel() const;

  // Runs the plan: inputs[i] holds inputShapes()[i], outputs[i] receives outputShapes()[i]
  // (byteSize() bytes each; null is allowed for empty arrays). The spans' sizes must match.
  void run(std::span<const void* const> inputs, std::span<void* const> outputs);

  // Convenience for tests and tools: checks the arguments against parameterShapes() (a mismatch
  // is a DiagnosticError), allocates the result and runs.
  Literal run(std::span<const Literal> arguments);

 private:
  explicit EvalPlan(std::unique_ptr<detail::PlanImpl> impl);
  std::unique_ptr<detail::PlanImpl> impl_;
};

// Evaluates the module's entry computation (compile + run once).
Literal evaluate(const HloModule& module, std::span<const Literal> arguments,
                 const EvalOptions& options = {});
Literal evaluate(const HloComputation& computation, std::span<const Literal> arguments,
                 const EvalOptions& options = {});

// Reports (as a DiagnosticError) the first instruction of the entry computation, or of a
// computation it calls, that the evaluator cannot evaluate: unsupported opcode, element type or
// attribute, or inconsistent shapes. Evaluates nothing and allocates no tensor memory.
// Instructions the root does not depend on are not evaluated and therefore not checked.
void checkEvaluable(const HloModule& module);
void checkEvaluable(const HloComputation& computation);

// Flattens a (possibly nested tuple) shape into its array leaves, depth-first.
std::vector<Shape> flattenShape(const Shape& shape);

}  // namespace tacit::hlo
