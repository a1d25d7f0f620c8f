// Blocked matrix multiplication with an exactly specified accumulation order.
//
//   C[i][j] = (...((0 + A[i][0]*B[0][j]) + A[i][1]*B[1][j]) + ...) + A[i][k-1]*B[k-1][j]
//
// computed in the accumulation type with separately rounded multiply and add (no FMA; the build
// uses -ffp-contract=off): every output element sums its products sequentially in contracting
// index order starting from +0. The loops are blocked over i, j and k (BLIS-style packing into
// cache-sized panels, a register-tiled vector micro-kernel) without changing that order: a k block
// resumes from the partial sums the previous block left in C.
//
// NaNs (docs/numerics.md): each product is A[i][p] * B[p][j] and each sum acc + product with
// x86's rule for that operand order: a NaN operand propagates quieted, the first operand's when
// both are NaN; inf*0 and inf-inf give the default NaN (negative, zero payload). So every element
// is exactly the scalar loop's, whatever the blocking, tile edge or orientation.
//
// Accumulation types: f32 (f16/bf16/f32 operands), f64, and u32/u64 for integer dots, whose
// wrap-around sums are exact modulo 2^32 / 2^64 whatever the order (s8 x s8 -> s32 widens each
// operand first, then multiplies and adds modulo 2^32).
#pragma once

#include <cstdint>
#include <vector>

#include "hlo/dtype.h"
#include "hlo/literal.h"

namespace tacit::hlo::kernels {

// Element (i, j) of a matrix operand is at data + (i * row_stride + j * col_stride) elements.
struct MatrixView {
  const void* data = nullptr;
  PrimitiveType type = PrimitiveType::kF32;
  int64_t row_stride = 0;
  int64_t col_stride = 0;
};

// Packing buffers, sized once for a problem shape so that runs never allocate.
class GemmWorkspace {
 public:
  GemmWorkspace() = default;
  // acc is kF32, kF64, kU32 or kU64.
  GemmWorkspace(PrimitiveType acc, int64_t m, int64_t n, int64_t k);
  // For operands of these types only: int8/int16 operands packed in pairs need half the space.
  GemmWorkspace(PrimitiveType acc, int64_t m, int64_t n, int64_t k, PrimitiveType a_type,
                PrimitiveType b_type);
  uint8_t* packedA() { return a_.data(); }
  uint8_t* packedB() { return b_.data(); }
  // Narrow problems (n far below the register tile width) are computed transposed,
  // C^T = B^T A^T, into this buffer: the same products summed in the same order.
  bool transposed() const { return transposed_; }
  uint8_t* transposedC() { return ct_.data(); }
  size_t bytes() const { return a_.size() + b_.size() + ct_.size(); }
  // Sized for operands packed in pairs (the int8/int16 kernel) only.
  bool pairsOnly() const { return pairs_only_; }

 private:
  AlignedBytes a_, b_, ct_;
  bool transposed_ = false;
  bool pairs_only_ = false;
};

// Whether `t` may be a GEMM operand packed into accumulation type `acc` (see gemm()).
bool gemmOperandSupported(PrimitiveType t, PrimitiveType acc);

// C (m x n, row stride ldc, accumulation type `acc`) = A (m x k) * B (k x n), overwriting C.
// `ws` must have been made for this accumulation type and at least these m, n, k.
// Operands of any evaluable non-pred type are converted to `acc` as `convert` does while packing
// (exact for f16/bf16 -> f32 and for integer widening).
void gemm(PrimitiveType acc, const MatrixView& a, const MatrixView& b, int64_t m, int64_t n,
          int64_t k, void* c, int64_t ldc, GemmWorkspace& ws);

}  // namespace tacit::hlo::kernels
