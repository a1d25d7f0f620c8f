// The tensor IR of instruction selection: the e-graph language for HLO operators, kernel inputs and
// partially instantiated instructions (piis), with the shape and constant-ness analyses.
//
// Every e-node's attribute carries its complete identity (docs/algorithm.md §3.1): for an HLO
// operator the opcode's typed attributes *and* the result type (so reshape/convert/bitcast-convert
// targets, slice bounds, dot dimension numbers, constants' values are all compared); for a pii the
// selectable unit, its α values, which of its outputs the node stands for and the buffer that
// output lives in. Attributes are decoded once and cached by attribute id.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "egraph/egraph.h"
#include "egraph/language.h"
#include "hlo/instruction.h"
#include "isel/view.h"

namespace tacit::isel {

using egraph::AttrId;
using egraph::ClassId;
using egraph::NodeId;
using egraph::OpId;

// The scalar computation of a reduce, by kind: isel understands reducers that apply one
// commutative binary operator to their two parameters.
enum class Reducer : uint8_t { kNone, kAdd, kMultiply, kMaximum, kMinimum, kAnd, kOr, kXor };
std::string_view reducerName(Reducer r);
std::optional<Reducer> parseReducer(std::string_view name);
hlo::HloOpcode reducerOpcode(Reducer r);

// The identity of one HLO e-node.
struct OpDesc {
  hlo::HloOpcode opcode = hlo::HloOpcode::kUnknown;
  hlo::Shape shape;                  // result type, no layout
  hlo::HloAttributes attrs;          // typed fields only; called computations are never set
  Reducer reducer = Reducer::kNone;  // reduce
  std::shared_ptr<const hlo::Literal> literal;  // constant
};

// One output of a partially instantiated instruction: unit (an instruction or macro of the ISA,
// see isel/units.h) with its α fixed and β unknown.
struct PiiDesc {
  int unit = -1;
  int case_index = 0;  // which case of the unit's semantics α selects
  std::vector<int64_t> alpha;
  int output = 0;   // which output of the unit this node stands for
  int buffer = -1;  // the buffer that output lives in
  hlo::Shape shape;
};

// A kernel input: the bytes of entry parameter `parameter` in HBM, u8[bytes]; or, resident in
// on-chip buffer `buffer` (not 0), the parameter's value of type `shape` (kernel.h Residence).
struct InputDesc {
  int parameter = -1;
  int64_t bytes = 0;
  int buffer = 0;
  hlo::Shape shape;  // resident only
};

// One part of an overlay: the bytes of the operand at the positions `block` (a strided view of the
// operand's bytes) are the result's bytes at `at` + those positions.
struct OverlayPart {
  int64_t at = 0;
  StridedView block;
  friend bool operator==(const OverlayPart&, const OverlayPart&) = default;
};

// An HBM region assembled by instructions that each write one block of it and leave the rest of
// the region they rewrite as it was (read-modify-write moves such as a pitched store): the
// blocks partition the result's bytes (region_write.h states and checks the conditions).
struct OverlayDesc {
  int64_t bytes = 0;
  std::vector<OverlayPart> parts;  // one per operand
};

// The HLO opcodes isel models (the others are rejected when a kernel is imported).
bool iselSupports(hlo::HloOpcode op);

class IrLanguage {
 public:
  IrLanguage();

  const std::shared_ptr<egraph::Language>& language() const { return lang_; }
  egraph::Language& lang() { return *lang_; }

  OpId opFor(hlo::HloOpcode op) const;  // throws std::logic_error if not supported
  std::optional<hlo::HloOpcode> opcodeOf(OpId op) const;
  OpId inputOp() const { return input_op_; }
  OpId piiOp() const { return pii_op_; }
  // The synthetic root over every kernel result (extraction enumerates all results at once).
  OpId resultsOp() const { return results_op_; }
  // A value whose content does not matter (the old content of an HBM region an instruction
  // overwrites completely). Its attribute is the type (an OpDesc of opcode kUnknown).
  OpId undefOp() const { return undef_op_; }
  // The bytes around a result window that the kernel must leave as they were (kernel.h
  // ResultWindow): unlike `undef`, no buffer holds it and nothing computes it, so only block writes
  // that change exactly their own block (region_write.cc) produce a region around one. Its
  // attribute is the type, as undef's.
  OpId keptOp() const { return kept_op_; }
  // An HBM region written block by block (OverlayDesc); its operands are the writing piis.
  OpId overlayOp() const { return overlay_op_; }
  bool isHloOp(OpId op) const { return opcodeOf(op).has_value(); }

  AttrId encode(const OpDesc& desc);
  AttrId encode(const PiiDesc& desc);
  AttrId encode(const InputDesc& desc);
  AttrId encode(const OverlayDesc& desc);
  // The attribute of `desc` if it was encoded before (nothing is interned).
  std::optional<AttrId> findEncoded(const OpDesc& desc) const;
  std::optional<AttrId> findEncoded(const OverlayDesc& desc) const;
  // Decoded views; the reference stays valid for the language's lifetime.
  const OpDesc& opDesc(AttrId attr) const;
  const PiiDesc& piiDesc(AttrId attr) const;
  const InputDesc& inputDesc(AttrId attr) const;
  const OverlayDesc& overlayDesc(AttrId attr) const;

  // The result type of any e-node of this language.
  const hlo::Shape& shapeOf(OpId op, AttrId attr) const;

  std::string describe(OpId op, AttrId attr) const;  // for DOT export and diagnostics

 private:
  struct Decoded {
    enum Kind : uint8_t { kNone, kOp, kPii, kInput, kOverlay } kind = kNone;
    std::unique_ptr<OpDesc> op;
    std::unique_ptr<PiiDesc> pii;
    std::unique_ptr<InputDesc> input;
    std::unique_ptr<OverlayDesc> overlay;
    hlo::Shape shape;  // kOverlay: u8[bytes]; kInput: its type
  };
  void remember(AttrId id, Decoded d);
  const Decoded& decoded(AttrId id) const;

  std::shared_ptr<egraph::Language> lang_;
  std::vector<OpId> op_for_opcode_;                    // by HloOpcode
  std::vector<std::optional<hlo::HloOpcode>> opcode_;  // by OpId
  OpId input_op_, pii_op_, results_op_, undef_op_, kept_op_, overlay_op_;
  std::vector<Decoded> decoded_;  // by AttrId
};

// Shape analysis: every class has one result type; merging classes of different types is an
// internal error (docs/algorithm.md §3.1 — the reference implementation did not check).
class ShapeAnalysis : public egraph::TypedAnalysis<hlo::Shape> {
 public:
  explicit ShapeAnalysis(const IrLanguage& ir) : ir_(ir) {}
  hlo::Shape make(const egraph::EGraph& g, const egraph::ENode& node) override;
  egraph::DidMerge merge(hlo::Shape& into, hlo::Shape from) override;

 private:
  const IrLanguage& ir_;
};

// Constant-ness (docs/algorithm.md §3.6): a class is constant if any of its e-nodes is a constant
// or has only constant children; kernel inputs are never constant.
class ConstAnalysis
    : public egraph::TypedAnalysis<uint8_t> {  // 0 or 1 (vector<bool> has no references)
 public:
  explicit ConstAnalysis(const IrLanguage& ir) : ir_(ir) {}
  uint8_t make(const egraph::EGraph& g, const egraph::ENode& node) override;
  egraph::DidMerge merge(uint8_t& into, uint8_t from) override;

 private:
  const IrLanguage& ir_;
};

}  // namespace tacit::isel
