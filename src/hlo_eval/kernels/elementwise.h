// Elementwise loops over whole buffers, one function per (operation, element type), selected once
// when a plan is compiled. Each loop applies the element semantics of scalar.h to n contiguous
// elements (vectorised by the compiler where the semantics allow).
#pragma once

#include <cstdint>

#include "hlo/dtype.h"
#include "hlo/instruction.h"
#include "hlo/opcode.h"

namespace tacit::hlo::kernels {

using UnaryFn = void (*)(const void* x, void* y, int64_t n);
using BinaryFn = void (*)(const void* a, const void* b, void* y, int64_t n);
// select(pred, on_true, on_false); a scalar pred (pred_stride 0) selects whole operands.
using SelectFn = void (*)(const uint8_t* pred, int64_t pred_stride, const void* t, const void* f,
                          void* y, int64_t n);
// clamp(lo, x, hi); lo/hi may be scalars (stride 0).
using ClampFn = void (*)(const void* lo, int64_t lo_stride, const void* x, const void* hi,
                         int64_t hi_stride, void* y, int64_t n);

// The loop for an elementwise unary opcode on type t (is-finite writes pred), or nullptr if the
// operation is not defined on t.
UnaryFn unaryKernel(HloOpcode op, PrimitiveType t);
BinaryFn binaryKernel(HloOpcode op, PrimitiveType t);
// compare(a, b) writing pred; total_order selects TOTALORDER for floats.
BinaryFn compareKernel(ComparisonDirection direction, bool total_order, PrimitiveType t);
UnaryFn convertKernel(PrimitiveType from, PrimitiveType to);
SelectFn selectKernel(PrimitiveType t);
ClampFn clampKernel(PrimitiveType t);

// The elementwise unary (binary) opcodes of the opcode table that these kernels implement on
// some evaluable type. Not copy, which the evaluator runs as a movement.
bool isUnaryElementwise(HloOpcode op);
bool isBinaryElementwise(HloOpcode op);

}  // namespace tacit::hlo::kernels
