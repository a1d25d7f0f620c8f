// MLIR's names of element types (i32, ui8, bf16, f8E4M3FN, complex<f32>) and tensor types
// (`tensor<4x8xf32>`), both ways.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "hlo/shape.h"

namespace tacit::stablehlo {

// The HLO element type of an MLIR element type name; nullopt for names outside HLO's types.
std::optional<hlo::PrimitiveType> elementTypeOf(std::string_view mlir_name);
// The MLIR spelling of an HLO element type ("i1" for pred, "ui8" for u8, "f8E4M3FN", ...).
std::string elementTypeName(hlo::PrimitiveType t);
// `tensor<4x8xf32>`, `tensor<f32>`, `tuple<tensor<f32>, tensor<2xi32>>`, `!stablehlo.token`.
std::string typeText(const hlo::Shape& shape);

}  // namespace tacit::stablehlo
