// Internals of EvalPlan (evaluator.h): slots, steps and the planner that compiles instructions.
//
// A plan is a list of Steps over a table of slots. A slot is one array buffer: a plan input
// (caller-owned), a constant (filled at compile time) or a temporary (preallocated in the plan's
// arena). Every HLO value is a Value: its shape plus the slots of its array leaves, so tuples,
// get-tuple-element, reshape, copy, bitcast-convert and friends cost nothing at run time (they
// only rename slots). Steps read and write slots through the slot table, which run() points at
// the caller's buffers; the root's temporaries are redirected to the caller's output buffers when
// that is safe, so results are written in place.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "hlo/instruction.h"
#include "hlo/literal.h"
#include "hlo_eval/evaluator.h"
#include "hlo_eval/kernels/elementwise.h"
#include "support/diagnostic.h"

namespace tacit::hlo::detail {

// Where an instruction came from, kept by steps that can fail at run time.
struct Where {
  std::string file;
  SourceLoc loc;
  std::string name;
  std::string opcode;
  [[noreturn]] void fail(const std::string& message, const std::string& hint = {}) const;
};

// An elementwise step (unary, binary, compare, convert, select, clamp) as the fusion pass sees it
// (PlanImpl::fuseElementwise): a kernel applied to n elements, operands either advancing with
// the element index (stride 1) or broadcast scalars (stride 0).
struct ElementwiseOp {
  using UnaryFn = kernels::UnaryFn;
  using BinaryFn = kernels::BinaryFn;
  using SelectFn = kernels::SelectFn;
  using ClampFn = kernels::ClampFn;
  enum class Kind : uint8_t { kUnary, kBinary, kSelect, kClamp };
  Kind kind = Kind::kUnary;
  UnaryFn unary = nullptr;
  BinaryFn binary = nullptr;
  SelectFn select = nullptr;
  ClampFn clamp = nullptr;
  int operands = 0;
  int in[3] = {-1, -1, -1};
  int64_t stride[3] = {1, 1, 1};
  int out = -1;
  int64_t n = 0;
  // What the kernel computes, for the native code generator (evaluator_native.cc): the opcode
  // (kConvert for convert), the operand element type (select: the result's), the result element
  // type and, for compare, the direction and whether it is TOTALORDER.
  HloOpcode opcode = HloOpcode::kAdd;
  PrimitiveType type = PrimitiveType::kInvalid;
  PrimitiveType result_type = PrimitiveType::kInvalid;
  ComparisonDirection direction = ComparisonDirection::kEq;
  bool total_order = false;

  // Slots in, out; n elements. A predicate (select) or a bound (clamp) with stride 0 is a scalar.
  static ElementwiseOp unaryOf(UnaryFn fn, int x, int out, int64_t n);
  static ElementwiseOp binaryOf(BinaryFn fn, int a, int b, int out, int64_t n);
  static ElementwiseOp selectOf(SelectFn fn, int pred, int64_t pred_stride, int on_true,
                                int on_false, int out, int64_t n);
  static ElementwiseOp clampOf(ClampFn fn, int lo, int64_t lo_stride, int x, int hi,
                               int64_t hi_stride, int out, int64_t n);
  // Records what the kernel computes (the fields above).
  ElementwiseOp& computing(HloOpcode op, PrimitiveType operand, PrimitiveType result) {
    opcode = op;
    type = operand;
    result_type = result;
    return *this;
  }
  // Runs the kernel on m elements; operand(i) is the address of operand i (asked only for the
  // operands the kind has: inlined into the fused loop, where it is called per chunk).
  template <class OperandAt>
  void apply(const OperandAt& operand, uint8_t* result, int64_t m) const {
    switch (kind) {
      case Kind::kUnary:
        unary(operand(0), result, m);
        break;
      case Kind::kBinary:
        binary(operand(0), operand(1), result, m);
        break;
      case Kind::kSelect:
        select(operand(0), stride[0], operand(1), operand(2), result, m);
        break;
      case Kind::kClamp:
        clamp(operand(0), stride[0], operand(1), operand(2), stride[2], result, m);
        break;
    }
  }
};

// One step of a fused elementwise run (PlanImpl::fuseElementwise) and where its operands and
// result are: a slot advancing with the element index, a slot read at its start by every chunk
// of kFusedChunk elements (a broadcast scalar, or a constant repeating with that period), or a
// temporary that only the run reads (in a chunk-sized scratch buffer; `bytes` is its offset).
inline constexpr int64_t kFusedChunk = 64;  // elements; a multiple of 64 keeps chunks aligned
struct FusedRef {
  enum class Mode : uint8_t { kSlot, kFixed, kScratch };
  Mode mode = Mode::kSlot;
  int slot = -1;
  size_t bytes = 0;  // kSlot: bytes per element; kScratch: offset in the scratch buffer
  // A constant whose elements are all equal: its first element (which native code embeds).
  const uint8_t* uniform = nullptr;
};
struct FusedOp {
  ElementwiseOp desc;
  FusedRef in[3], out;
};

// A fused run's native code: fn(bases, n) with bases[k] the address of slot args[k].
struct NativeCode {
  DirectKernel::Fn fn = nullptr;
  int64_t n = 0;
  std::vector<int> args;
  std::vector<bool> stored;  // per arg: the code writes it (else only reads)
  bool loads_before_stores = false;
};

class Step;
// The run compiled to native code (evaluator_native.cc), or null when the machine lacks
// AVX-512 (F, VL, DQ, BW), n is not a multiple of 8, or an operation or type has no native form.
std::unique_ptr<Step> compileNativeRun(const std::vector<FusedOp>& ops, int64_t n);

class Step {
 public:
  virtual ~Step() = default;
  // Elementwise steps describe themselves for fusion (false: not elementwise).
  virtual bool elementwise(ElementwiseOp*) const { return false; }
  // Allocates workspace; called once when the plan is finalized for running (never by
  // checkEvaluable).
  virtual void allocate() {}
  virtual void run(uint8_t* const* slots) = 0;
  // Bytes of workspace the step allocated (GEMM packing buffers, im2col rows, ...).
  virtual size_t workspaceBytes() const { return 0; }
  // The native code of a fused run compiled to it (evaluator_native.cc), else null.
  virtual const NativeCode* native() const { return nullptr; }
};

struct Value {
  Shape shape;
  std::vector<int> leaves;  // slot per array leaf, depth-first
  const std::vector<int>& slots() const { return leaves; }
  int slot() const { return leaves.front(); }  // for array values
};

enum class SlotKind { kInput, kConstant, kTemp };

struct SlotInfo {
  SlotKind kind = SlotKind::kTemp;
  size_t bytes = 0;
  size_t offset = 0;  // in the arena (constants and temporaries)
  // Live range of a temporary in step indices: written no earlier than first_step, last read by
  // last_step (-1: never read). Temporaries whose ranges do not overlap share arena memory.
  int64_t first_step = 0;
  int64_t last_step = -1;
};

class PlanImpl {
 public:
  int addSlot(SlotKind kind, size_t bytes);
  // Extends the live range of `slot` to step `step` (kKeepAlive: to the end of the run).
  void touch(int slot, int64_t step);
  static constexpr int64_t kKeepAlive = INT64_MAX;
  void addStep(std::unique_ptr<Step> step) { steps.push_back(std::move(step)); }
  // Sets the data of a constant slot (copied into the arena by finalize()).
  void setConstant(int slot, const uint8_t* data) { constants.push_back({slot, data}); }
  void setConstantOwned(int slot, AlignedBytes data);
  // Allocates the arena, copies constants, allocates step workspaces, and decides which outputs
  // can be written in place.
  void finalize();
  void run(const void* const* inputs, size_t input_count, void* const* outputs,
           size_t output_count);
  size_t workspaceBytes() const;
  size_t nativeRunCount() const;
  std::optional<DirectKernel> directKernel() const;
  // Replaces each run of at least two consecutive elementwise steps over the same n elements by
  // one step that runs them chunk by chunk (evaluator_elementwise.cc); called by finalize().
  void fuseElementwise();
  // Whether fuseElementwise may compile runs to native code (EvalOptions::native_elementwise).
  bool native_elementwise = true;

  std::vector<Shape> parameter_shapes, input_shapes, output_shapes;
  Shape result_shape;
  std::vector<int> input_slots, output_slots;
  std::vector<SlotInfo> slot_info;
  std::vector<std::unique_ptr<Step>> steps;
  std::vector<std::unique_ptr<PlanImpl>> sub_plans;  // owned for steps that call computations

 private:
  struct ConstantInit {
    int slot;
    const uint8_t* data;
  };
  std::vector<ConstantInit> constants;
  std::vector<AlignedBytes> owned_constants;
  std::vector<uint8_t*> slots_;      // the runtime slot table
  std::vector<uint8_t*> home_;       // each slot's own buffer (arena address; null for inputs)
  std::vector<bool> output_direct_;  // output i may be written in place
  AlignedBytes arena_;
  // Outputs written in place have no arena space; a run that cannot write one in place gives
  // them their own buffers (once).
  void ensureOutputHomes();
  std::vector<int> lazy_outputs_;
  AlignedBytes output_homes_;
};

// Compiles instructions of one computation (and inlined callees) into a PlanImpl.
class Planner {
 public:
  Planner(PlanImpl& plan, const EvalOptions& options, std::string file, bool allocate, int depth);

  // Compiles `computation` with its parameters bound to `args`; returns the root's value.
  Value compileComputation(const HloComputation& computation, const std::vector<Value>& args);
  // Compiles `computation` as a separate plan (for loops, branches and per-element bodies).
  PlanImpl& compileSubPlan(const HloComputation& computation);

  // A fresh temporary value (one slot per array leaf) of `shape`.
  Value newTemp(const Shape& shape);
  // A constant value whose data is copied from `literal` (kept alive by the caller's module).
  Value newConstant(const Literal& literal);
  Value newConstantOwned(const Shape& shape, AlignedBytes data);
  void addStep(std::unique_ptr<Step> step) { plan_.addStep(std::move(step)); }

  Where where(const HloInstruction& inst) const;
  [[noreturn]] void fail(const HloInstruction& inst, const std::string& message,
                         const std::string& hint = {}) const;
  const EvalOptions& options() const { return options_; }
  // True while compiling the body of a fusion (or composite call): XLA's CPU pipeline does not
  // rewrite reductions there (see compileReduce).
  bool inFusion() const { return in_fusion_; }
  void setInFusion(bool in_fusion) { in_fusion_ = in_fusion; }
  const std::string& file() const { return file_; }
  bool allocating() const { return allocate_; }
  PlanImpl& plan() { return plan_; }

 private:
  Value compileInstruction(const HloInstruction& inst, const std::vector<Value>& operands,
                           const std::vector<Value>& args);
  void checkAttributes(const HloInstruction& inst) const;
  void checkShapes(const HloInstruction& inst) const;

  PlanImpl& plan_;
  const EvalOptions& options_;
  std::string file_;
  bool allocate_;
  int depth_;
  bool in_fusion_ = false;
};

// ---- Per-family compilers (evaluator_*.cc) -----------------------------------------------------
// Each validates the instruction (operand shapes, attributes, element types) and appends steps.

bool isElementwiseOpcode(HloOpcode op);

Value compileElementwise(Planner& p, const HloInstruction& inst, std::span<const Value> ops);
Value compileConvert(Planner& p, const HloInstruction& inst, std::span<const Value> ops);
Value compileShapeOp(Planner& p, const HloInstruction& inst, std::span<const Value> ops);
Value compileDot(Planner& p, const HloInstruction& inst, std::span<const Value> ops);
Value compileConvolution(Planner& p, const HloInstruction& inst, std::span<const Value> ops);
Value compileReduce(Planner& p, const HloInstruction& inst, std::span<const Value> ops);
Value compileReduceWindow(Planner& p, const HloInstruction& inst, std::span<const Value> ops);
Value compileMap(Planner& p, const HloInstruction& inst, std::span<const Value> ops);
Value compileSort(Planner& p, const HloInstruction& inst, std::span<const Value> ops);
Value compileWhile(Planner& p, const HloInstruction& inst, std::span<const Value> ops);
Value compileConditional(Planner& p, const HloInstruction& inst, std::span<const Value> ops);

// ---- Shared helpers ----------------------------------------------------------------------------

// Row-major strides of an array shape, in elements.
std::vector<int64_t> stridesOf(const Shape& shape);
// "f32[2,3]" for messages.
std::string shapeText(const Shape& shape);
// Requires an array shape of an evaluable element type.
void requireEvaluableArray(const Planner& p, const HloInstruction& inst, const Shape& shape,
                           const char* what);
// Requires `shape` to equal the instruction's declared shape (element type and dims).
void requireResultShape(const Planner& p, const HloInstruction& inst, const Shape& computed);
// The called computation of attribute `attr`, required to exist.
const HloComputation& calledComputation(const Planner& p, const HloInstruction& inst,
                                        const char* attr);
// Requires `comp` to take `params` scalar parameters of the given types and return a scalar of
// `results` types (one type: scalar; several: a tuple of scalars).
void requireScalarComputation(const Planner& p, const HloInstruction& inst,
                              const HloComputation& comp, std::span<const PrimitiveType> params,
                              std::span<const PrimitiveType> results);

// Runs a scalar sub-plan: inputs and outputs are pointers to single elements.
inline void runScalar(PlanImpl& plan, const void* const* inputs, size_t n_in, void* const* outputs,
                      size_t n_out) {
  plan.run(inputs, n_in, outputs, n_out);
}

}  // namespace tacit::hlo::detail
