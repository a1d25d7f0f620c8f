// The HLO text printer: canonical text that the parser reads back to an identical module.
//
// Canonical form (docs/hlo.md section 5.1): `HloModule name` with header attributes in XLA's
// order; computations in definition order (callees first), each with a signature derived from its
// parameters and root (`%c (p: f32[4]) -> f32[] {`); instructions as `[ROOT ]%name = shape
// opcode(%a, %b), attributes` with `%` sigils, operands without shapes, typed attributes in XLA's
// printer order, then raw opcode attributes in source order, called computations, and sharding,
// frontend_attributes, control-predecessors, statistics, result_accuracy, origin, metadata,
// backend_config. Literals print every element (floats as the shortest text that reads back
// bit-exactly); unknown (elided) literals print as `{...}`.
#pragma once

#include <string>

#include "hlo/instruction.h"

namespace tacit::hlo {

std::string printModule(const HloModule& module);
std::string printComputation(const HloComputation& computation);
// One instruction line without indentation or trailing newline.
std::string printInstruction(const HloInstruction& instruction);
// The literal as constant(...) writes it: "{1, 2}", "(1, {2, 3})", "-inf", "{...}".
std::string literalText(const Literal& literal);
// One element of an array literal (row-major index) as text.
std::string literalElementText(const Literal& literal, int64_t index);
// `name` with a `%` sigil.
std::string sigilName(const std::string& name);
// The window / padding / dim_labels / slice attribute values as printed.
std::string windowText(const std::vector<WindowDim>& window);
std::string paddingText(const std::vector<PadDim>& padding);
std::string dimLabelsText(const ConvDims& dims);
std::string sliceText(const std::vector<SliceDim>& slice);

}  // namespace tacit::hlo
