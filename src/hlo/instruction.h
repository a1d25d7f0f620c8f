// The HLO IR: instructions, computations, modules.
//
// Modelled on XLA's HloInstruction / HloComputation / HloModule, flattened: one instruction class
// with typed fields for every attribute tacit gives meaning to (HloAttributes) and, for everything
// else, the attribute's canonical source text (RawAttribute) so that printing round-trips.
// Instructions are owned by their computation, computations by their module; operands and called
// computations are non-owning pointers.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "hlo/literal.h"
#include "hlo/opcode.h"
#include "hlo/shape.h"
#include "support/diagnostic.h"

namespace tacit::hlo {

class HloComputation;
class HloModule;

// slice={[start:limit:stride], ...}
struct SliceDim {
  int64_t start = 0;
  int64_t limit = 0;
  int64_t stride = 1;
  friend bool operator==(const SliceDim&, const SliceDim&) = default;
};

// padding=lo_hi_interior per dimension (pad op).
struct PadDim {
  int64_t lo = 0;
  int64_t hi = 0;
  int64_t interior = 0;
  friend bool operator==(const PadDim&, const PadDim&) = default;
};

// One dimension of window={size=.. stride=.. pad=lo_hi lhs_dilate=.. rhs_dilate=..
// rhs_reversal=..}.
struct WindowDim {
  int64_t size = 1;
  int64_t stride = 1;
  int64_t pad_lo = 0;
  int64_t pad_hi = 0;
  int64_t lhs_dilation = 1;
  int64_t rhs_dilation = 1;
  bool reversal = false;
  friend bool operator==(const WindowDim&, const WindowDim&) = default;
};

// dot dimension numbers (all four lists may be empty).
struct DotDims {
  std::vector<int64_t> lhs_batch, lhs_contracting, rhs_batch, rhs_contracting;
  friend bool operator==(const DotDims&, const DotDims&) = default;
};

// Convolution dimension numbers, from dim_labels=b01f_01io->b01f. Spatial vectors are in label
// order ('0', '1', ...).
struct ConvDims {
  int64_t input_batch = 0, input_feature = 1;
  std::vector<int64_t> input_spatial;
  int64_t kernel_input_feature = 0, kernel_output_feature = 1;
  std::vector<int64_t> kernel_spatial;
  int64_t output_batch = 0, output_feature = 1;
  std::vector<int64_t> output_spatial;
  friend bool operator==(const ConvDims&, const ConvDims&) = default;
};

enum class ComparisonDirection { kEq, kNe, kGe, kGt, kLe, kLt };
enum class ComparisonType { kFloat, kTotalOrder, kSigned, kUnsigned };

// A called-computation attribute: to_apply=, calls=, condition=, body=, true_computation=,
// false_computation=, branch_computations={...}, select=, scatter=, called_computations={...}.
struct CalledComputations {
  std::string attribute;  // e.g. "to_apply"
  std::vector<HloComputation*> computations;
  bool is_list = false;  // printed as {a, b} rather than a
};

// An attribute kept as text: its canonical value (comments removed, whitespace collapsed to one
// space outside strings). Printing emits `name=value` verbatim.
struct RawAttribute {
  std::string name;
  std::string value;
  SourceLoc loc;
  friend bool operator==(const RawAttribute& a, const RawAttribute& b) {
    return a.name == b.name && a.value == b.value;
  }
};

// Typed attributes. A field is set iff the attribute is present in the text (or was set by a
// builder); the printer prints exactly the set fields, in XLA's printer order.
struct HloAttributes {
  std::optional<std::vector<int64_t>>
      dimensions;                // broadcast, transpose, reduce, reverse, concatenate, sort, ...
  std::optional<int64_t> index;  // get-tuple-element index=
  std::optional<int64_t> iota_dimension;
  std::optional<std::vector<SliceDim>> slice;
  std::optional<std::vector<int64_t>> dynamic_slice_sizes;
  std::optional<std::vector<PadDim>> padding;
  std::optional<std::vector<WindowDim>> window;
  std::optional<ConvDims> conv_dims;  // dim_labels=
  std::optional<int64_t> feature_group_count;
  std::optional<int64_t> batch_group_count;
  std::optional<DotDims> dot_dims;  // set on every dot
  std::optional<ComparisonDirection> direction;
  std::optional<ComparisonType> comparison_type;
  std::optional<int64_t> exponent_bits, mantissa_bits;  // reduce-precision
  std::optional<bool> is_stable;                        // sort
  std::vector<CalledComputations> called;
  std::vector<RawAttribute> raw;  // every other attribute, in source order
};

class HloInstruction {
 public:
  HloInstruction(HloOpcode opcode, std::string name, Shape shape);

  HloOpcode opcode() const { return opcode_; }
  // The spelling: opcodeName(opcode()) for known opcodes, the source spelling for kUnknown.
  const std::string& opcodeSpelling() const { return opcode_spelling_; }
  void setUnknownOpcodeSpelling(std::string spelling);

  const std::string& name() const { return name_; }
  void setName(std::string name) { name_ = std::move(name); }
  const Shape& shape() const { return shape_; }
  Shape& mutableShape() { return shape_; }

  const std::vector<HloInstruction*>& operands() const { return operands_; }
  HloInstruction* operand(int64_t i) const { return operands_[static_cast<size_t>(i)]; }
  int64_t operandCount() const { return static_cast<int64_t>(operands_.size()); }
  void addOperand(HloInstruction* operand) { operands_.push_back(operand); }
  void setOperand(int64_t i, HloInstruction* operand) {
    operands_[static_cast<size_t>(i)] = operand;
  }

  HloComputation* parent() const { return parent_; }
  bool isRoot() const;

  // parameter(N): the parameter number; -1 for other opcodes.
  int64_t parameterNumber() const { return parameter_number_; }
  void setParameterNumber(int64_t n) { parameter_number_ = n; }
  // constant(...): the value.
  const std::optional<Literal>& literal() const { return literal_; }
  void setLiteral(Literal literal) { literal_ = std::move(literal); }

  HloAttributes& attrs() { return attrs_; }
  const HloAttributes& attrs() const { return attrs_; }
  // The computation of a called-computation attribute (e.g. "to_apply"), or nullptr.
  HloComputation* called(std::string_view attribute, size_t i = 0) const;
  const RawAttribute* raw(std::string_view name) const;

  std::vector<HloInstruction*>& controlPredecessors() { return control_predecessors_; }
  const std::vector<HloInstruction*>& controlPredecessors() const { return control_predecessors_; }

  // Where the instruction was defined (line:col of its name) and its source file, for diagnostics.
  SourceLoc loc() const { return loc_; }
  void setLoc(SourceLoc loc) { loc_ = loc; }

 private:
  friend class HloComputation;
  HloOpcode opcode_;
  std::string opcode_spelling_;
  std::string name_;
  Shape shape_;
  std::vector<HloInstruction*> operands_;
  HloComputation* parent_ = nullptr;
  int64_t parameter_number_ = -1;
  std::optional<Literal> literal_;
  HloAttributes attrs_;
  std::vector<HloInstruction*> control_predecessors_;
  SourceLoc loc_;
};

class HloComputation {
 public:
  explicit HloComputation(std::string name);

  const std::string& name() const { return name_; }
  void setName(std::string name) { name_ = std::move(name); }
  HloModule* parent() const { return parent_; }
  bool isEntry() const;

  // Instructions in definition order; operands always precede their users.
  const std::vector<std::unique_ptr<HloInstruction>>& instructions() const { return instructions_; }
  int64_t instructionCount() const { return static_cast<int64_t>(instructions_.size()); }
  // Appends an instruction (its operands must already be in this computation) and returns it.
  HloInstruction* addInstruction(std::unique_ptr<HloInstruction> instruction);

  HloInstruction* root() const { return root_; }
  void setRoot(HloInstruction* root) { root_ = root; }
  // Parameters indexed by parameter number (filled by addInstruction).
  const std::vector<HloInstruction*>& parameters() const { return parameters_; }
  HloInstruction* parameter(int64_t i) const { return parameters_[static_cast<size_t>(i)]; }
  int64_t parameterCount() const { return static_cast<int64_t>(parameters_.size()); }
  HloInstruction* findInstruction(std::string_view name) const;

  // `, execution_thread="..."` after the body, if present.
  const std::optional<std::string>& executionThread() const { return execution_thread_; }
  void setExecutionThread(std::optional<std::string> t) { execution_thread_ = std::move(t); }

  SourceLoc loc() const { return loc_; }
  void setLoc(SourceLoc loc) { loc_ = loc; }

 private:
  friend class HloModule;
  std::string name_;
  HloModule* parent_ = nullptr;
  std::vector<std::unique_ptr<HloInstruction>> instructions_;
  std::vector<HloInstruction*> parameters_;
  HloInstruction* root_ = nullptr;
  std::optional<std::string> execution_thread_;
  SourceLoc loc_;
};

// entry_computation_layout={(p0, p1, ...)->result}
struct ProgramShape {
  std::vector<Shape> parameters;
  Shape result;
  friend bool operator==(const ProgramShape&, const ProgramShape&) = default;
};

class HloModule {
 public:
  explicit HloModule(std::string name);

  const std::string& name() const { return name_; }
  void setName(std::string name) { name_ = std::move(name); }
  // The file the module was parsed from ("" if built in memory), for diagnostics.
  const std::string& sourceFile() const { return source_file_; }
  void setSourceFile(std::string file) { source_file_ = std::move(file); }

  // Computations in definition order: callees precede callers; the entry is one of them.
  const std::vector<std::unique_ptr<HloComputation>>& computations() const { return computations_; }
  HloComputation* addComputation(std::unique_ptr<HloComputation> computation);
  HloComputation* entry() const { return entry_; }
  void setEntry(HloComputation* entry) { entry_ = entry; }
  HloComputation* findComputation(std::string_view name) const;

  // Header attributes. entry_computation_layout is typed (it carries parameter/result layouts);
  // all others are kept as text in source order.
  const std::optional<ProgramShape>& entryLayout() const { return entry_layout_; }
  void setEntryLayout(std::optional<ProgramShape> layout) { entry_layout_ = std::move(layout); }
  std::vector<RawAttribute>& headerAttributes() { return header_attributes_; }
  const std::vector<RawAttribute>& headerAttributes() const { return header_attributes_; }

 private:
  std::string name_;
  std::string source_file_;
  std::vector<std::unique_ptr<HloComputation>> computations_;
  HloComputation* entry_ = nullptr;
  std::optional<ProgramShape> entry_layout_;
  std::vector<RawAttribute> header_attributes_;
};

std::string_view comparisonDirectionName(ComparisonDirection d);  // "EQ", ...
std::string_view comparisonTypeName(ComparisonType t);            // "FLOAT", ...

}  // namespace tacit::hlo
