// Shape inference: the result shape of an opcode from its operand shapes and attributes, with a
// precise message when they do not fit together. One entry point serves the parser (omitted result
// shapes), the verifier (declared vs inferred) and the builder.
//
// Covered: every elementwise unary/binary op, compare, select, clamp, convert, bitcast-convert,
// reduce-precision, broadcast, reshape, transpose, reverse, slice, dynamic-slice,
// dynamic-update-slice, concatenate, pad, iota, dot, convolution, reduce, reduce-window, map, call,
// fusion, while, conditional, sort, tuple, get-tuple-element, bitcast, copy, opt-barrier,
// after-all, add-dependency, partition-id, replica-id. Other opcodes are not inferred: their result
// shape must be written, and inferShape accepts the declared one unchecked (checked() == false).
// Layouts are ignored; inferred shapes carry no layout.
#pragma once

#include <optional>
#include <span>
#include <string>

#include "hlo/instruction.h"

namespace tacit::hlo {

struct ShapeResult {
  std::optional<Shape> shape;  // the result shape on success
  std::string error;           // why not, on failure (no position: callers add it)
  bool checked = true;         // false: the opcode is not covered and `shape` is the declared one

  bool ok() const { return shape.has_value(); }
};

// Infers the result shape of `opcode` over `operands` with `attrs` (typed fields and called
// computations are read). If `declared` is given (the shape written in the text or requested by a
// builder), it is checked against the inference and returned on success: opcodes whose result
// element type or dimensions are not determined by the operands (convert, reshape, bitcast, iota,
// constant, parameter, dot with a different element type, ...) require it and check consistency.
ShapeResult inferShape(HloOpcode opcode, std::span<const Shape* const> operands,
                       const HloAttributes& attrs, const Shape* declared = nullptr);

// True if the result shape may be omitted in the text (XLA infers it).
bool resultShapeOptional(HloOpcode opcode);

// The program shape of a computation: parameter shapes by number (missing ones are tuples of no
// elements) and the root's shape.
ProgramShape programShape(const HloComputation& computation);

}  // namespace tacit::hlo
