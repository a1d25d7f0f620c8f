// Windowed ops' attributes both ways. Convolution: StableHLO's dimension numbers (`[b, 0, 1, f]x
// [0, 1, i, o]->[b, 0, 1, f]`, or #stablehlo.conv<raw ...>) and window (strides, padding,
// dilations, reversal) to HLO's dim_labels and window, and back to the pretty form's text.
// reduce_window: window_dimensions, window_strides, base_dilations, window_dilations and padding to
// HLO's window, and back to the generic form's properties.
#pragma once

#include <string>
#include <vector>

#include "hlo/instruction.h"
#include "stablehlo/syntax.h"
#include "support/source.h"

namespace tacit::stablehlo {

// The HLO attributes of a `stablehlo.convolution` op whose kernel has shape `kernel` (the window's
// sizes are the kernel's spatial sizes); a DiagnosticError at the offending attribute.
hlo::HloAttributes convolutionAttributes(const SourceFile& file, const Op& op,
                                         const hlo::Shape& kernel);

// `[b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f]`.
std::string convDimensionsText(const hlo::ConvDims& dims);
// `{stride = [2, 2], pad = [[0, 1], [0, 1]]}`: the fields that differ from their defaults.
std::string convWindowText(const std::vector<hlo::WindowDim>& window);

// The window of a `stablehlo.reduce_window` over operands of rank `rank`.
std::vector<hlo::WindowDim> reduceWindowWindow(const SourceFile& file, const Op& op, int64_t rank);
// `<{window_dimensions = array<i64: ...>, ...}>`: the properties that differ from their defaults.
std::string reduceWindowProperties(const std::vector<hlo::WindowDim>& window);

}  // namespace tacit::stablehlo
