// Constants: `dense<...>` literals to HLO literals and back.
//
// Elements are decimal numbers, `true`/`false`, or `0x...` bit patterns (MLIR prints a float NaN
// or infinity as its bits: 0x7FC00000); a whole literal may be one "0x..." string of raw
// little-endian bytes (MLIR prints large constants so). One element fills the whole tensor (a
// splat). Values out of the element type's range are diagnosed, not wrapped.
#pragma once

#include <string>

#include "hlo/literal.h"
#include "stablehlo/syntax.h"
#include "support/source.h"

namespace tacit::stablehlo {

// The literal of a kDense attribute; a DiagnosticError at the offending element.
hlo::Literal denseLiteral(const SourceFile& file, const Attr& dense);
// `dense<...>` of an array literal (without the `: type`), every element written out; a splat up to
// the splat limit prints as one element, and a literal above that limit as MLIR's raw hex bytes.
// Floats print as the shortest decimal that reads back bit-exactly, NaNs and infinities as bit
// patterns.
std::string denseText(const hlo::Literal& literal);

}  // namespace tacit::stablehlo
