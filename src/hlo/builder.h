// Programmatic construction of HLO computations with inferred shapes and unique names.
//
// Later modules (the ISA language, instruction selection) build HLO through this API instead of
// text. Every method appends one instruction to the computation under construction, infers its
// result shape with shape_inference.h (the same rules the verifier applies), names it
// `<opcode>` / `<opcode>.N` (unique in the computation) unless a name is given, and returns it.
// Invalid construction (mismatched shapes, bad dimension numbers, operands from another builder,
// a duplicate name, ...) throws tacit::DiagnosticError with a message naming the operation.
//
//   HloModule module("m");
//   HloComputation* add = addScalarReducer(module, HloOpcode::kAdd, PrimitiveType::kF32);
//   HloBuilder b("main");
//   HloInstruction* x = b.parameter(0, Shape(PrimitiveType::kF32, {4, 8}));
//   HloInstruction* zero = b.constant(scalarLiteral(PrimitiveType::kF32, 0));
//   b.reduce({x}, {zero}, {1}, add);
//   b.addTo(module, /*entry=*/true);   // root = last instruction
//
// The builder owns the computation until addTo()/build(). Instructions may only use operands of
// the same builder.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "hlo/instruction.h"

namespace tacit::hlo {

class HloBuilder {
 public:
  explicit HloBuilder(std::string computation_name);

  // ---- leaves ----
  // parameter(number): numbers must end up covering 0..n-1 (the verifier checks).
  HloInstruction* parameter(int64_t number, const Shape& shape, std::string name = {});
  HloInstruction* constant(Literal literal, std::string name = {});
  // iota over `shape` (an array of rank >= 1) along `dimension`.
  HloInstruction* iota(const Shape& shape, int64_t dimension, std::string name = {});

  // ---- elementwise ----
  // Any one-operand elementwise opcode (abs, negate, exponential, not, copy, ...).
  HloInstruction* unary(HloOpcode opcode, HloInstruction* x, std::string name = {});
  // Any two-operand elementwise opcode (add, multiply, maximum, and, shift-left, ...); operands
  // must have the same shape (no implicit broadcasting, as in HLO).
  HloInstruction* binary(HloOpcode opcode, HloInstruction* lhs, HloInstruction* rhs,
                         std::string name = {});
  HloInstruction* compare(HloInstruction* lhs, HloInstruction* rhs, ComparisonDirection direction,
                          std::optional<ComparisonType> type = std::nullopt, std::string name = {});
  HloInstruction* select(HloInstruction* pred, HloInstruction* on_true, HloInstruction* on_false,
                         std::string name = {});
  HloInstruction* clamp(HloInstruction* min, HloInstruction* x, HloInstruction* max,
                        std::string name = {});
  HloInstruction* convert(HloInstruction* x, PrimitiveType type, std::string name = {});
  // bitcast-convert to `type`; widths that differ add or remove a trailing dimension (XLA rule).
  HloInstruction* bitcastConvert(HloInstruction* x, PrimitiveType type, std::string name = {});
  HloInstruction* copy(HloInstruction* x, std::string name = {});

  // ---- shape manipulation ----
  HloInstruction* reshape(HloInstruction* x, std::vector<int64_t> dims, std::string name = {});
  // broadcast to `result_dims`; operand dimension i maps to result dimension `dimensions[i]`.
  HloInstruction* broadcast(HloInstruction* x, std::vector<int64_t> result_dims,
                            std::vector<int64_t> dimensions, std::string name = {});
  HloInstruction* transpose(HloInstruction* x, std::vector<int64_t> permutation,
                            std::string name = {});
  HloInstruction* reverse(HloInstruction* x, std::vector<int64_t> dimensions,
                          std::string name = {});
  // slice with per-dimension [start, limit) and stride (strides default to 1).
  HloInstruction* slice(HloInstruction* x, std::vector<int64_t> starts, std::vector<int64_t> limits,
                        std::vector<int64_t> strides = {}, std::string name = {});
  HloInstruction* dynamicSlice(HloInstruction* x, std::vector<HloInstruction*> start_indices,
                               std::vector<int64_t> sizes, std::string name = {});
  HloInstruction* dynamicUpdateSlice(HloInstruction* x, HloInstruction* update,
                                     std::vector<HloInstruction*> start_indices,
                                     std::string name = {});
  HloInstruction* concatenate(std::vector<HloInstruction*> operands, int64_t dimension,
                              std::string name = {});
  HloInstruction* pad(HloInstruction* x, HloInstruction* padding_value, std::vector<PadDim> padding,
                      std::string name = {});

  // ---- contractions and reductions ----
  // dot with dimension numbers; the result element type defaults to the operands' (which must
  // then agree) and may be given explicitly (s8 x s8 -> s32, bf16 x bf16 -> f32).
  HloInstruction* dot(HloInstruction* lhs, HloInstruction* rhs, DotDims dims,
                      std::optional<PrimitiveType> result_type = std::nullopt,
                      std::string name = {});
  // reduce(inputs..., inits...) over `dimensions` with `reducer` (2N scalar parameters); the
  // reducer must already belong to the module the computation will join.
  HloInstruction* reduce(std::vector<HloInstruction*> inputs, std::vector<HloInstruction*> inits,
                         std::vector<int64_t> dimensions, HloComputation* reducer,
                         std::string name = {});

  // ---- tuples ----
  HloInstruction* tuple(std::vector<HloInstruction*> elements, std::string name = {});
  HloInstruction* getTupleElement(HloInstruction* tuple, int64_t index, std::string name = {});

  // Any opcode: operands, attributes and (for opcodes whose result cannot be inferred) the result
  // shape. The shape is inferred/checked as the verifier does.
  HloInstruction* add(HloOpcode opcode, std::vector<HloInstruction*> operands,
                      HloAttributes attrs = {}, const std::optional<Shape>& shape = std::nullopt,
                      std::string name = {});

  // A copy of `original` (an instruction of another computation) whose operands are `operands`
  // (of this builder): its opcode, name, shape, attributes, literal and parameter number as they
  // are, not re-inferred, so an instruction the parser accepted is copied whatever its opcode.
  // Control predecessors are not copied (they name instructions of the original's computation).
  // `name` replaces the original's when given.
  HloInstruction* clone(const HloInstruction& original, std::vector<HloInstruction*> operands,
                        std::string name = {});

  // The computation under construction (instructions so far).
  const HloComputation& computation() const { return *computation_; }
  // Finishes the computation with `root` (default: the last instruction).
  std::unique_ptr<HloComputation> build(HloInstruction* root = nullptr);
  // build() and add it to `module` under a name unique in the module (the builder's name, or
  // name.N); entry=true makes it the entry computation.
  HloComputation* addTo(HloModule& module, bool entry = false, HloInstruction* root = nullptr);

 private:
  HloInstruction* append(std::unique_ptr<HloInstruction> inst, std::string name);
  void checkOperand(const HloInstruction* operand, std::string_view op) const;
  std::string uniqueName(std::string base);

  std::unique_ptr<HloComputation> computation_;
  std::unordered_set<std::string> names_;
  std::unordered_map<std::string, int> next_suffix_;  // per base name: keeps naming linear
};

// A scalar literal of an evaluable element type holding `value` (converted as `convert` does).
Literal scalarLiteral(PrimitiveType type, double value);
// Adds `(T, T) -> T` computing `opcode` (add, maximum, ...) to `module` and returns it.
HloComputation* addScalarReducer(HloModule& module, HloOpcode opcode, PrimitiveType type);

// A deep copy: every computation, instruction, attribute and literal, with pointers remapped.
std::unique_ptr<HloModule> cloneModule(const HloModule& module);

}  // namespace tacit::hlo
