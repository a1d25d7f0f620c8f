// GCC 12 at -O2 vectorizes only loops its "very cheap" cost model accepts; these loops are the
// evaluator's hot paths. Vectorizing never changes results here: floating-point loops keep their
// order (no -ffast-math, no contraction) and integer sums are modular.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC optimize("vect-cost-model=dynamic")
#endif
#include "hlo_eval/kernels/gemm.h"

#include <algorithm>
#include <bit>
#include <cstring>
#include <iterator>
#include <limits>
#include <stdexcept>
#include <type_traits>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

#include "hlo_eval/kernels/scalar.h"
#include "support/simd.h"

namespace tacit::hlo::kernels {
namespace {

// Register tile MR x (NV vectors of 64 bytes) and cache blocks per accumulation type. The B
// micro-panel (KC x NR) stays in L1 across the MR-row panels of an A block (MC x KC, in L2).
template <P kAcc>
struct Blocking;
template <>
struct Blocking<P::kF32> {
  static constexpr int kMR = 4, kNV = 4;  // measured best on Zen 4 (bench/hlo_eval)
  static constexpr int64_t kKC = 256, kMC = 128, kNC = 2048;
};
template <>
struct Blocking<P::kU32> {
  static constexpr int kMR = 8, kNV = 2;
  static constexpr int64_t kKC = 256, kMC = 128, kNC = 2048;
};
template <>
struct Blocking<P::kF64> {
  static constexpr int kMR = 8, kNV = 2;
  static constexpr int64_t kKC = 256, kMC = 64, kNC = 1024;
};
template <>
struct Blocking<P::kU64> {
  static constexpr int kMR = 8, kNV = 2;
  static constexpr int64_t kKC = 256, kMC = 64, kNC = 1024;
};

// A vector of kBytes bytes of T (GCC/clang vector extensions: plain + and * per lane, the scalar
// loop's operations in its order).
template <typename T, int kBytes>
struct VecOf {
  typedef T type __attribute__((vector_size(kBytes)));
};

template <P kAcc>
constexpr int kLanes = static_cast<int>(64 / sizeof(Native<kAcc>));
template <P kAcc>
constexpr int kNR = Blocking<kAcc>::kNV* kLanes<kAcc>;

int64_t roundUp(int64_t x, int64_t m) {
  return (x + m - 1) / m * m;
}

// Float NaN semantics (docs/numerics.md): the product is lhs * rhs and the sum acc + product, each
// with x86's NaN rule for its operand order: a NaN operand propagates quieted, the first one if
// both are NaN; inf*0 and inf-inf give the default NaN. The compiler may swap the operands of a
// commutative vector multiply or add, which changes the result only when both are NaN. Without
// NaN operands in the packed panels (and no NaN payload resumed from an earlier k block) that
// cannot happen: finite or infinite operands make at most default NaNs, whichever operand comes
// first. Otherwise kExact selects the NaN that propagates explicitly (masked, so the same
// instructions up to a compare per operation). kRhsFirst: the broadcast operand is the dot's rhs
// (the transposed problem C^T = B^T A^T), so the packed-B lanes are the lhs.
enum class NanMode { kFast, kExact, kExactRhsFirst };

// kPass vectors of each of the tile's MR rows (see microKernel): bp and c point at the pass's
// first column.
template <P kAcc, NanMode kMode, int kBytes, int kPass>
inline void microPass(int64_t kc, const Native<kAcc>* ap, const Native<kAcc>* bp, Native<kAcc>* c,
                      int64_t ldc, bool first) {
  using A = Native<kAcc>;
  using V = typename VecOf<A, kBytes>::type;
  constexpr int kMR = Blocking<kAcc>::kMR, kNV = kPass, kL = kBytes / static_cast<int>(sizeof(A));
  constexpr int kN = kNR<kAcc>;
  V acc[kMR][kNV];
#pragma GCC unroll 16
  for (int r = 0; r < kMR; ++r) {
#pragma GCC unroll 8
    for (int v = 0; v < kNV; ++v) {
      if (first) {
        acc[r][v] = V{};
      } else {
        std::memcpy(&acc[r][v], c + r * ldc + v * kL, sizeof(V));
      }
    }
  }
  for (int64_t k = 0; k < kc; ++k) {
    V b[kNV];
#pragma GCC unroll 8
    for (int v = 0; v < kNV; ++v)
      std::memcpy(&b[v], bp + k * kN + v * kL, sizeof(V));
#pragma GCC unroll 16
    for (int r = 0; r < kMR; ++r) {
      V a = ap[k * kMR + r] - V{};  // broadcast; x - (+0) == x exactly, including -0
#pragma GCC unroll 8
      for (int v = 0; v < kNV; ++v) {
        if constexpr (kMode == NanMode::kFast) {
          acc[r][v] = acc[r][v] + a * b[v];
        } else {
          // The first operand's NaN (x + x quiets it), else the product: NaN only through the
          // second operand or inf*0, the same in either operand order. Likewise for the sum,
          // whose accumulator is already quiet.
          V p;
          if constexpr (kMode == NanMode::kExact) {
            p = a == a ? a * b[v] : a + a;
          } else {
            p = b[v] == b[v] ? b[v] * a : b[v] + b[v];
          }
          acc[r][v] = acc[r][v] == acc[r][v] ? acc[r][v] + p : acc[r][v];
        }
      }
    }
  }
#pragma GCC unroll 16
  for (int r = 0; r < kMR; ++r) {
#pragma GCC unroll 8
    for (int v = 0; v < kNV; ++v)
      std::memcpy(c + r * ldc + v * kL, &acc[r][v], sizeof(V));
  }
}

// The register-tiled inner kernel: an MR x NR tile of C accumulates kc products per element.
// `first` starts the sums from +0; otherwise they resume from C. kBytes is the vector width the
// code is compiled for: 64 (AVX-512: the whole tile row in registers at once), 32 (AVX2's 16
// registers: the row in passes of kPass vectors, each pass over all of k). Each element's sum is
// the same sequence of operations either way.
template <P kAcc, int kBytes>
constexpr int kPassVectors = kBytes == 64 ? kNR<kAcc>* static_cast<int>(sizeof(Native<kAcc>)) / 64
                                          : std::max(1, 8 / Blocking<kAcc>::kMR);

template <P kAcc, NanMode kMode, int kBytes>
void microKernel(int64_t kc, const Native<kAcc>* ap, const Native<kAcc>* bp, Native<kAcc>* c,
                 int64_t ldc, bool first) {
  constexpr int kL = kBytes / static_cast<int>(sizeof(Native<kAcc>));
  constexpr int kRow = kNR<kAcc> / kL, kPass = kPassVectors<kAcc, kBytes>;
  static_assert(kRow % kPass == 0);
  for (int p = 0; p < kRow; p += kPass)
    microPass<kAcc, kMode, kBytes, kPass>(kc, ap, bp + p * kL, c + p * kL, ldc, first);
}

// A partial tile (mr < MR or nr < NR) runs the same kernel on a local copy of C.
template <P kAcc, NanMode kMode, int kBytes>
void edgeKernel(int64_t kc, const Native<kAcc>* ap, const Native<kAcc>* bp, Native<kAcc>* c,
                int64_t ldc, bool first, int64_t mr, int64_t nr) {
  constexpr int kMR = Blocking<kAcc>::kMR, kN = kNR<kAcc>;
  alignas(64) Native<kAcc> tile[kMR * kN];  // filled only when read (see gemmPairsWith)
  if (!first) {
    std::fill(std::begin(tile), std::end(tile), Native<kAcc>{});
    for (int64_t r = 0; r < mr; ++r)
      std::memcpy(tile + r * kN, c + r * ldc, sizeof(tile[0]) * nr);
  }
  microKernel<kAcc, kMode, kBytes>(kc, ap, bp, tile, kN, first);
  for (int64_t r = 0; r < mr; ++r)
    std::memcpy(c + r * ldc, tile + r * kN, sizeof(tile[0]) * nr);
}

// Runs the MR x NR tiles of an mc x nc block of C over one packed k block.
template <P kAcc, NanMode kMode, int kBytes>
void blockKernels(const Native<kAcc>* pa, const Native<kAcc>* pb, Native<kAcc>* c, int64_t ldc,
                  int64_t mc, int64_t nc, int64_t kc, bool first) {
  constexpr int kMR = Blocking<kAcc>::kMR, kN = kNR<kAcc>;
  for (int64_t jr = 0; jr < nc; jr += kN) {
    int64_t nr = std::min<int64_t>(kN, nc - jr);
    const Native<kAcc>* bp = pb + (jr / kN) * kN * kc;
    for (int64_t ir = 0; ir < mc; ir += kMR) {
      int64_t mr = std::min<int64_t>(kMR, mc - ir);
      const Native<kAcc>* ap = pa + (ir / kMR) * kMR * kc;
      Native<kAcc>* ct = c + ir * ldc + jr;
      if (mr == kMR && nr == kN) {
        microKernel<kAcc, kMode, kBytes>(kc, ap, bp, ct, ldc, first);
      } else {
        edgeKernel<kAcc, kMode, kBytes>(kc, ap, bp, ct, ldc, first, mr, nr);
      }
    }
  }
}

using BlockKernelsFn = void (*)(const void* pa, const void* pb, void* c, int64_t ldc, int64_t mc,
                                int64_t nc, int64_t kc, bool first);

template <P kAcc, NanMode kMode>
void blockKernelsBaseline(const void* pa, const void* pb, void* c, int64_t ldc, int64_t mc,
                          int64_t nc, int64_t kc, bool first) {
  blockKernels<kAcc, kMode, 32>(static_cast<const Native<kAcc>*>(pa),
                                static_cast<const Native<kAcc>*>(pb), static_cast<Native<kAcc>*>(c),
                                ldc, mc, nc, kc, first);
}

#if defined(__x86_64__)
// The same template compiled for AVX-512 (flatten: every kernel it calls is inlined, hence
// compiled for AVX-512 too).
template <P kAcc, NanMode kMode>
__attribute__((target("avx512f,avx512bw,avx512dq,avx512vl"), flatten)) void blockKernelsAvx512(
    const void* pa, const void* pb, void* c, int64_t ldc, int64_t mc, int64_t nc, int64_t kc,
    bool first) {
  blockKernels<kAcc, kMode, 64>(static_cast<const Native<kAcc>*>(pa),
                                static_cast<const Native<kAcc>*>(pb), static_cast<Native<kAcc>*>(c),
                                ldc, mc, nc, kc, first);
}
#endif

// The block kernels for the SIMD level (support/simd.h): 64-byte vectors at avx512, 32-byte ones
// (the x86-64-v3 baseline's AVX2) below it.
template <P kAcc, NanMode kMode>
BlockKernelsFn blockKernelsFor() {
#if defined(__x86_64__)
  if (simd::level() >= simd::Level::kAvx512) return &blockKernelsAvx512<kAcc, kMode>;
#endif
  return &blockKernelsBaseline<kAcc, kMode>;
}

// Whether any of n packed values is a NaN (integers: never): the largest magnitude's bits exceed
// infinity's (an integer max reduction, which vectorizes).
template <P kAcc>
bool anyNan(const Native<kAcc>* x, int64_t n) {
  if constexpr (kAcc == P::kF32 || kAcc == P::kF64) {
    using U = std::conditional_t<kAcc == P::kF32, uint32_t, uint64_t>;
    constexpr U kAbs = ~U{0} >> 1;
    const U kInf = std::bit_cast<U>(std::numeric_limits<Native<kAcc>>::infinity());
    U top = 0;
    for (int64_t i = 0; i < n; ++i)
      top = std::max(top, static_cast<U>(std::bit_cast<U>(x[i]) & kAbs));
    return top > kInf;
  } else {
    return false;
  }
}

// Packs rows [i0, i0+mc) x columns [p0, p0+kc) of A into MR-row micro-panels, k-major,
// zero-padding the last panel.
template <P kSrc, P kAcc>
void packA(const MatrixView& a, int64_t i0, int64_t mc, int64_t p0, int64_t kc, Native<kAcc>* dst) {
  constexpr int kMR = Blocking<kAcc>::kMR;
  const auto* src = static_cast<const Native<kSrc>*>(a.data);
  for (int64_t ip = 0; ip < mc; ip += kMR) {
    int64_t mr = std::min<int64_t>(kMR, mc - ip);
    for (int64_t r = 0; r < kMR; ++r) {
      Native<kAcc>* d = dst + r;
      if (r >= mr) {
        for (int64_t k = 0; k < kc; ++k)
          d[k * kMR] = Native<kAcc>{};
        continue;
      }
      const Native<kSrc>* s = src + (i0 + ip + r) * a.row_stride + p0 * a.col_stride;
      for (int64_t k = 0; k < kc; ++k)
        d[k * kMR] = convert<kSrc, kAcc>(s[k * a.col_stride]);
    }
    dst += kMR * kc;
  }
}

// Packs rows [p0, p0+kc) x columns [j0, j0+nc) of B into NR-column micro-panels, k-major.
template <P kSrc, P kAcc>
void packB(const MatrixView& b, int64_t p0, int64_t kc, int64_t j0, int64_t nc, Native<kAcc>* dst) {
  constexpr int kN = kNR<kAcc>;
  const auto* src = static_cast<const Native<kSrc>*>(b.data);
  for (int64_t jp = 0; jp < nc; jp += kN) {
    int64_t nr = std::min<int64_t>(kN, nc - jp);
    for (int64_t k = 0; k < kc; ++k) {
      const Native<kSrc>* s = src + (p0 + k) * b.row_stride + (j0 + jp) * b.col_stride;
      Native<kAcc>* d = dst + k * kN;
      int64_t j = 0;
      for (; j < nr; ++j)
        d[j] = convert<kSrc, kAcc>(s[j * b.col_stride]);
      for (; j < kN; ++j)
        d[j] = Native<kAcc>{};
    }
    dst += kN * kc;
  }
}

template <P kAcc>
using PackFn = void (*)(const MatrixView&, int64_t, int64_t, int64_t, int64_t, Native<kAcc>*);

template <P kAcc>
PackFn<kAcc> packAFor(P src) {
  return dispatchEvaluable(src, [&]<P kSrc>() -> PackFn<kAcc> { return &packA<kSrc, kAcc>; });
}
template <P kAcc>
PackFn<kAcc> packBFor(P src) {
  return dispatchEvaluable(src, [&]<P kSrc>() -> PackFn<kAcc> { return &packB<kSrc, kAcc>; });
}

// ---- int8/int16 GEMM on pairs of k ----------------------------------------------------------
// Operands that fit s16 (s8, u8, s16) are packed as pairs of consecutive k, one 32-bit word per
// pair, and each 32-bit lane adds the two s16 x s16 products modulo 2^32: AVX-512 VNNI's vpdpwssd
// does it in one instruction, AVX2's vpmaddwd + vpaddd in two (vpmaddwd's pair sum wraps only for
// two products of -32768 x -32768, and then to exactly the modular sum), the generic kernel in
// C++. The wrap-around sums are exactly the unpaired kernel's: integer sums modulo 2^32 do not
// depend on the order. The pair path is chosen when the workspace is made (GemmWorkspace), the
// micro-kernel at each call by the SIMD level (support/simd.h), so a level change between the two
// still computes the same sums.

bool pairOperand(P t) {
  return t == P::kS8 || t == P::kU8 || t == P::kS16;
}

// Whether a workspace for these operands should use the pair path: with a SIMD pair kernel only
// (the generic pair kernel is no faster than the unpaired one; it exists for level changes).
bool usePairs(P acc, P a_type, P b_type) {
  return acc == P::kU32 && pairOperand(a_type) && pairOperand(b_type) &&
         simd::level() >= simd::Level::kAvx2;
}

template <P kSrc>
inline uint32_t pairOf(const Native<kSrc>* s, int64_t stride, int64_t k, int64_t kc) {
  auto lo = static_cast<uint16_t>(static_cast<int16_t>(s[0]));
  auto hi = k + 1 < kc ? static_cast<uint16_t>(static_cast<int16_t>(s[stride])) : uint16_t{0};
  return static_cast<uint32_t>(lo) | (static_cast<uint32_t>(hi) << 16);
}

// Two s16 values as one 32-bit lane pair (the first in the low half).
template <P kSrc>
inline uint32_t pack2(Native<kSrc> lo, Native<kSrc> hi) {
  return static_cast<uint32_t>(static_cast<uint16_t>(static_cast<int16_t>(lo))) |
         (static_cast<uint32_t>(static_cast<uint16_t>(static_cast<int16_t>(hi))) << 16);
}

template <P kSrc>
void packAPairs(const MatrixView& a, int64_t i0, int64_t mc, int64_t p0, int64_t kc,
                uint32_t* dst) {
  constexpr int kMR = Blocking<P::kU32>::kMR;
  const auto* src = static_cast<const Native<kSrc>*>(a.data);
  int64_t kp = (kc + 1) / 2;
  for (int64_t ip = 0; ip < mc; ip += kMR) {
    int64_t mr = std::min<int64_t>(kMR, mc - ip);
    for (int64_t r = 0; r < kMR; ++r) {
      const Native<kSrc>* s = src + (i0 + ip + r) * a.row_stride + p0 * a.col_stride;
      if (r < mr && a.col_stride == 1) {
        // Rows of contiguous elements: whole pairs without per-element tests.
        for (int64_t q = 0; q < kc / 2; ++q)
          dst[q * kMR + r] = pack2<kSrc>(s[2 * q], s[2 * q + 1]);
        if (kc % 2) dst[(kp - 1) * kMR + r] = pairOf<kSrc>(s + kc - 1, 1, kc - 1, kc);
        continue;
      }
      for (int64_t q = 0; q < kp; ++q) {
        dst[q * kMR + r] =
            r < mr ? pairOf<kSrc>(s + 2 * q * a.col_stride, a.col_stride, 2 * q, kc) : 0;
      }
    }
    dst += kMR * kp;
  }
}

template <P kSrc>
void packBPairs(const MatrixView& b, int64_t p0, int64_t kc, int64_t j0, int64_t nc,
                uint32_t* dst) {
  constexpr int kN = kNR<P::kU32>;
  const auto* src = static_cast<const Native<kSrc>*>(b.data);
  int64_t kp = (kc + 1) / 2;
  for (int64_t jp = 0; jp < nc; jp += kN) {
    int64_t nr = std::min<int64_t>(kN, nc - jp);
    for (int64_t q = 0; q < kp; ++q) {
      const Native<kSrc>* s = src + (p0 + 2 * q) * b.row_stride + (j0 + jp) * b.col_stride;
      if (b.col_stride == 1 && 2 * q + 1 < kc) {
        // A panel row pair of contiguous elements: vectorizes.
        const Native<kSrc>* s1 = s + b.row_stride;
        for (int64_t j = 0; j < nr; ++j)
          dst[q * kN + j] = pack2<kSrc>(s[j], s1[j]);
        for (int64_t j = nr; j < kN; ++j)
          dst[q * kN + j] = 0;
        continue;
      }
      for (int64_t j = 0; j < kN; ++j) {
        dst[q * kN + j] = j < nr ? pairOf<kSrc>(s + j * b.col_stride, b.row_stride, 2 * q, kc) : 0;
      }
    }
    dst += kN * kp;
  }
}

using PairPackAFn = void (*)(const MatrixView&, int64_t, int64_t, int64_t, int64_t, uint32_t*);

PairPackAFn pairPackA(P t) {
  if (t == P::kS8) return &packAPairs<P::kS8>;
  if (t == P::kU8) return &packAPairs<P::kU8>;
  return &packAPairs<P::kS16>;
}
PairPackAFn pairPackB(P t) {
  if (t == P::kS8) return &packBPairs<P::kS8>;
  if (t == P::kU8) return &packBPairs<P::kU8>;
  return &packBPairs<P::kS16>;
}

using PairKernelFn = void (*)(int64_t kp, const uint32_t* ap, const uint32_t* bp, uint32_t* c,
                              int64_t ldc, bool first);

// C (MR x NR) = (first ? 0 : C) + the kp packed pairs of A's panel times B's.
void pairKernelGeneric(int64_t kp, const uint32_t* ap, const uint32_t* bp, uint32_t* c, int64_t ldc,
                       bool first) {
  constexpr int kMR = Blocking<P::kU32>::kMR, kN = kNR<P::kU32>;
  auto product = [](uint32_t a, uint32_t b, int half) {
    auto lane = [half](uint32_t w) { return static_cast<int16_t>(w >> (16 * half)); };
    return static_cast<uint32_t>(int32_t{lane(a)} * int32_t{lane(b)});
  };
  for (int r = 0; r < kMR; ++r) {
    for (int j = 0; j < kN; ++j) {
      uint32_t sum = first ? 0 : c[r * ldc + j];
      for (int64_t q = 0; q < kp; ++q) {
        uint32_t a = ap[q * kMR + r], b = bp[q * kN + j];
        sum += product(a, b, 0) + product(a, b, 1);
      }
      c[r * ldc + j] = sum;
    }
  }
}

#if defined(__x86_64__)
// Four rows by 16 columns of the MR x NR tile per pass (11 of AVX2's 16 registers).
template <int kRow, int kCol>
__attribute__((target("avx2"), always_inline)) inline void pairQuarterAvx2(
    int64_t kp, const uint32_t* ap, const uint32_t* bp, uint32_t* c, int64_t ldc, bool first) {
  constexpr int kMR = Blocking<P::kU32>::kMR, kN = kNR<P::kU32>;
  __m256i acc[4][2];
#pragma GCC unroll 4
  for (int r = 0; r < 4; ++r) {
#pragma GCC unroll 2
    for (int v = 0; v < 2; ++v) {
      auto* at = reinterpret_cast<__m256i*>(c + (kRow + r) * ldc + kCol + v * 8);
      acc[r][v] = first ? _mm256_setzero_si256() : _mm256_loadu_si256(at);
    }
  }
  for (int64_t q = 0; q < kp; ++q) {
    const auto* b = reinterpret_cast<const __m256i*>(bp + q * kN + kCol);
    __m256i b0 = _mm256_loadu_si256(b), b1 = _mm256_loadu_si256(b + 1);
#pragma GCC unroll 4
    for (int r = 0; r < 4; ++r) {
      __m256i a = _mm256_set1_epi32(static_cast<int>(ap[q * kMR + kRow + r]));
      acc[r][0] = _mm256_add_epi32(acc[r][0], _mm256_madd_epi16(a, b0));
      acc[r][1] = _mm256_add_epi32(acc[r][1], _mm256_madd_epi16(a, b1));
    }
  }
#pragma GCC unroll 4
  for (int r = 0; r < 4; ++r) {
#pragma GCC unroll 2
    for (int v = 0; v < 2; ++v) {
      auto* at = reinterpret_cast<__m256i*>(c + (kRow + r) * ldc + kCol + v * 8);
      _mm256_storeu_si256(at, acc[r][v]);
    }
  }
}

__attribute__((target("avx2"))) void pairKernelAvx2(int64_t kp, const uint32_t* ap,
                                                    const uint32_t* bp, uint32_t* c, int64_t ldc,
                                                    bool first) {
  static_assert(Blocking<P::kU32>::kMR == 8 && kNR<P::kU32> == 32);
  pairQuarterAvx2<0, 0>(kp, ap, bp, c, ldc, first);
  pairQuarterAvx2<0, 16>(kp, ap, bp, c, ldc, first);
  pairQuarterAvx2<4, 0>(kp, ap, bp, c, ldc, first);
  pairQuarterAvx2<4, 16>(kp, ap, bp, c, ldc, first);
}

__attribute__((target("avx512f,avx512bw,avx512vnni"))) void pairKernelAvx512(
    int64_t kp, const uint32_t* ap, const uint32_t* bp, uint32_t* c, int64_t ldc, bool first) {
  constexpr int kMR = Blocking<P::kU32>::kMR, kNV = Blocking<P::kU32>::kNV, kN = kNR<P::kU32>;
  __m512i acc[kMR][kNV];
#pragma GCC unroll 16
  for (int r = 0; r < kMR; ++r) {
#pragma GCC unroll 8
    for (int v = 0; v < kNV; ++v) {
      acc[r][v] = first ? _mm512_setzero_si512() : _mm512_loadu_si512(c + r * ldc + v * 16);
    }
  }
  for (int64_t q = 0; q < kp; ++q) {
    __m512i b[kNV];
#pragma GCC unroll 8
    for (int v = 0; v < kNV; ++v)
      b[v] = _mm512_loadu_si512(bp + q * kN + v * 16);
#pragma GCC unroll 16
    for (int r = 0; r < kMR; ++r) {
      __m512i a = _mm512_set1_epi32(static_cast<int>(ap[q * kMR + r]));
#pragma GCC unroll 8
      for (int v = 0; v < kNV; ++v)
        acc[r][v] = _mm512_dpwssd_epi32(acc[r][v], a, b[v]);
    }
  }
#pragma GCC unroll 16
  for (int r = 0; r < kMR; ++r) {
#pragma GCC unroll 8
    for (int v = 0; v < kNV; ++v)
      _mm512_storeu_si512(c + r * ldc + v * 16, acc[r][v]);
  }
}

#endif

// The blocked loops around one pair micro-kernel (a template argument, so that each level's
// instantiation below inlines its kernel).
template <PairKernelFn kKernel>
inline void gemmPairsWith(const MatrixView& a, const MatrixView& b, int64_t m, int64_t n, int64_t k,
                          uint32_t* c, int64_t ldc, GemmWorkspace& ws) {
  using B = Blocking<P::kU32>;
  constexpr int kMR = B::kMR, kN = kNR<P::kU32>;
  PairPackAFn pack_a = pairPackA(a.type), pack_b = pairPackB(b.type);
  auto* pa = reinterpret_cast<uint32_t*>(ws.packedA());
  auto* pb = reinterpret_cast<uint32_t*>(ws.packedB());
  for (int64_t jc = 0; jc < n; jc += B::kNC) {
    int64_t nc = std::min(B::kNC, n - jc);
    for (int64_t pc = 0; pc < k; pc += B::kKC) {
      int64_t kc = std::min(B::kKC, k - pc), kp = (kc + 1) / 2;
      pack_b(b, pc, kc, jc, nc, pb);
      for (int64_t ic = 0; ic < m; ic += B::kMC) {
        int64_t mc = std::min(B::kMC, m - ic);
        pack_a(a, ic, mc, pc, kc, pa);
        for (int64_t jr = 0; jr < nc; jr += kN) {
          int64_t nr = std::min<int64_t>(kN, nc - jr);
          const uint32_t* bp = pb + (jr / kN) * kN * kp;
          for (int64_t ir = 0; ir < mc; ir += kMR) {
            int64_t mr = std::min<int64_t>(kMR, mc - ir);
            const uint32_t* ap = pa + (ir / kMR) * kMR * kp;
            uint32_t* ct = c + (ic + ir) * ldc + jc + jr;
            if (mr == kMR && nr == kN) {
              kKernel(kp, ap, bp, ct, ldc, pc == 0);
              continue;
            }
            // Filled only when the kernel reads it (it writes every lane; a first k block reads
            // none): zeroing 1 KiB per edge tile was an eighth of a 16x16 Gemmini matmul.
            alignas(64) uint32_t tile[kMR * kN];
            if (pc != 0) {
              std::fill(std::begin(tile), std::end(tile), 0u);
              for (int64_t r = 0; r < mr; ++r)
                std::memcpy(tile + r * kN, ct + r * ldc, sizeof(uint32_t) * nr);
            }
            kKernel(kp, ap, bp, tile, kN, pc == 0);
            for (int64_t r = 0; r < mr; ++r)
              std::memcpy(ct + r * ldc, tile + r * kN, sizeof(uint32_t) * nr);
          }
        }
      }
    }
  }
}

using GemmPairsFn = void (*)(const MatrixView&, const MatrixView&, int64_t, int64_t, int64_t,
                             uint32_t*, int64_t, GemmWorkspace&);

#if defined(__x86_64__)
// The loops compiled for each level with its kernel inlined (flatten): small problems (Gemmini's
// 16x16 tiles) spend as much in the packing and edge tiles as in the kernel.
__attribute__((target("avx512f,avx512bw,avx512vnni"), flatten)) void gemmPairsAvx512(
    const MatrixView& a, const MatrixView& b, int64_t m, int64_t n, int64_t k, uint32_t* c,
    int64_t ldc, GemmWorkspace& ws) {
  gemmPairsWith<&pairKernelAvx512>(a, b, m, n, k, c, ldc, ws);
}
__attribute__((target("avx2"), flatten)) void gemmPairsAvx2(const MatrixView& a,
                                                            const MatrixView& b, int64_t m,
                                                            int64_t n, int64_t k, uint32_t* c,
                                                            int64_t ldc, GemmWorkspace& ws) {
  gemmPairsWith<&pairKernelAvx2>(a, b, m, n, k, c, ldc, ws);
}
#endif

void gemmPairs(const MatrixView& a, const MatrixView& b, int64_t m, int64_t n, int64_t k,
               uint32_t* c, int64_t ldc, GemmWorkspace& ws) {
#if defined(__x86_64__)
  switch (simd::level()) {
    case simd::Level::kAvx512:
      return gemmPairsAvx512(a, b, m, n, k, c, ldc, ws);
    case simd::Level::kAvx2:
      return gemmPairsAvx2(a, b, m, n, k, c, ldc, ws);
    case simd::Level::kGeneric:
      break;
  }
#endif
  gemmPairsWith<&pairKernelGeneric>(a, b, m, n, k, c, ldc, ws);
}

// kRhsFirst: a and b are the dot's rhs and lhs transposed (see NanMode).
template <P kAcc, bool kRhsFirst>
void gemmTyped(const MatrixView& a, const MatrixView& b, int64_t m, int64_t n, int64_t k,
               Native<kAcc>* c, int64_t ldc, GemmWorkspace& ws) {
  using B = Blocking<kAcc>;
  constexpr int kMR = B::kMR, kN = kNR<kAcc>;
  if (m == 0 || n == 0) return;
  if (k == 0) {
    for (int64_t i = 0; i < m; ++i)
      std::fill(c + i * ldc, c + i * ldc + n, Native<kAcc>{});
    return;
  }
  if constexpr (kAcc == P::kU32) {
    if (ws.pairsOnly()) {
      if (!pairOperand(a.type) || !pairOperand(b.type))
        throw std::logic_error("gemm: workspace made for int8/int16 operands");
      gemmPairs(a, b, m, n, k, c, ldc, ws);
      return;
    }
  }
  if (ws.pairsOnly()) throw std::logic_error("gemm: workspace made for int8/int16 operands");
  PackFn<kAcc> pack_a = packAFor<kAcc>(a.type), pack_b = packBFor<kAcc>(b.type);
  constexpr NanMode kExactMode = kRhsFirst ? NanMode::kExactRhsFirst : NanMode::kExact;
  const BlockKernelsFn fast = blockKernelsFor<kAcc, NanMode::kFast>();
  const BlockKernelsFn exact = blockKernelsFor<kAcc, kExactMode>();
  auto* pa = reinterpret_cast<Native<kAcc>*>(ws.packedA());
  auto* pb = reinterpret_cast<Native<kAcc>*>(ws.packedB());
  for (int64_t jc = 0; jc < n; jc += B::kNC) {
    int64_t nc = std::min(B::kNC, n - jc);
    // Whether a NaN operand was packed for these columns, so C may hold NaN payloads.
    bool nan_seen = false;
    for (int64_t pc = 0; pc < k; pc += B::kKC) {
      int64_t kc = std::min(B::kKC, k - pc);
      bool first = pc == 0;
      pack_b(b, pc, kc, jc, nc, pb);
      nan_seen |= anyNan<kAcc>(pb, roundUp(nc, kN) * kc);
      for (int64_t ic = 0; ic < m; ic += B::kMC) {
        int64_t mc = std::min(B::kMC, m - ic);
        pack_a(a, ic, mc, pc, kc, pa);
        nan_seen |= anyNan<kAcc>(pa, roundUp(mc, kMR) * kc);
        Native<kAcc>* cb = c + ic * ldc + jc;
        if constexpr (kAcc == P::kF32 || kAcc == P::kF64) {
          if (nan_seen) {
            exact(pa, pb, cb, ldc, mc, nc, kc, first);
            continue;
          }
        }
        fast(pa, pb, cb, ldc, mc, nc, kc, first);
      }
    }
  }
}

template <P kAcc>
void workspaceSizes(int64_t m, int64_t n, int64_t k, size_t& a_bytes, size_t& b_bytes) {
  using B = Blocking<kAcc>;
  int64_t kc = std::min(B::kKC, std::max<int64_t>(k, 1));
  int64_t mc = roundUp(std::min(B::kMC, std::max<int64_t>(m, 1)), B::kMR);
  int64_t nc = roundUp(std::min(B::kNC, std::max<int64_t>(n, 1)), kNR<kAcc>);
  a_bytes = static_cast<size_t>(mc * kc) * sizeof(Native<kAcc>);
  b_bytes = static_cast<size_t>(nc * kc) * sizeof(Native<kAcc>);
}

// Whether computing C^T = B^T A^T wastes clearly less of the MR x NR register tiles.
template <P kAcc>
bool preferTransposed(int64_t m, int64_t n) {
  auto fill = [](int64_t x, int64_t tile) {
    return static_cast<double>(x) / static_cast<double>(roundUp(std::max<int64_t>(x, 1), tile));
  };
  constexpr int64_t kMR = Blocking<kAcc>::kMR, kN = kNR<kAcc>;
  return fill(n, kMR) * fill(m, kN) > 1.5 * fill(m, kMR) * fill(n, kN);
}

template <P kAcc>
void gemmOriented(const MatrixView& a, const MatrixView& b, int64_t m, int64_t n, int64_t k,
                  Native<kAcc>* c, int64_t ldc, GemmWorkspace& ws) {
  if (!ws.transposed()) {
    gemmTyped<kAcc, false>(a, b, m, n, k, c, ldc, ws);
    return;
  }
  // Products are commutative, so B^T A^T sums exactly the same products in the same order.
  MatrixView at{a.data, a.type, a.col_stride, a.row_stride};
  MatrixView bt{b.data, b.type, b.col_stride, b.row_stride};
  auto* ct = reinterpret_cast<Native<kAcc>*>(ws.transposedC());
  gemmTyped<kAcc, true>(bt, at, n, m, k, ct, m, ws);
  for (int64_t j = 0; j < n; ++j) {
    for (int64_t i = 0; i < m; ++i)
      c[i * ldc + j] = ct[j * m + i];
  }
}

template <typename Fn>
decltype(auto) dispatchAcc(P acc, Fn&& fn) {
  switch (acc) {
    case P::kF32:
      return fn.template operator()<P::kF32>();
    case P::kF64:
      return fn.template operator()<P::kF64>();
    case P::kU32:
      return fn.template operator()<P::kU32>();
    case P::kU64:
      return fn.template operator()<P::kU64>();
    default:
      throw std::invalid_argument("gemm: unsupported accumulation type");
  }
}

}  // namespace

GemmWorkspace::GemmWorkspace(P acc, int64_t m, int64_t n, int64_t k, P a_type, P b_type)
    : GemmWorkspace(acc, m, n, usePairs(acc, a_type, b_type) ? (k + 1) / 2 : k) {
  // a pair of k per 32-bit word
  pairs_only_ = usePairs(acc, a_type, b_type);
}

GemmWorkspace::GemmWorkspace(P acc, int64_t m, int64_t n, int64_t k) {
  size_t a_bytes = 0, b_bytes = 0;
  dispatchAcc(acc, [&]<P kAcc>() {
    transposed_ = preferTransposed<kAcc>(m, n);
    if (transposed_) {
      workspaceSizes<kAcc>(n, m, k, a_bytes, b_bytes);
      ct_ = AlignedBytes(static_cast<size_t>(m * n) * sizeof(Native<kAcc>));
    } else {
      workspaceSizes<kAcc>(m, n, k, a_bytes, b_bytes);
    }
  });
  a_ = AlignedBytes(a_bytes);
  b_ = AlignedBytes(b_bytes);
}

bool gemmOperandSupported(P t, P acc) {
  if (!isEvaluable(t) || t == P::kPred) return false;
  if (acc == P::kU32 || acc == P::kU64) return isInteger(t);
  return acc == P::kF32 || acc == P::kF64;
}

void gemm(P acc, const MatrixView& a, const MatrixView& b, int64_t m, int64_t n, int64_t k, void* c,
          int64_t ldc, GemmWorkspace& ws) {
  dispatchAcc(acc, [&]<P kAcc>() {
    gemmOriented<kAcc>(a, b, m, n, k, static_cast<Native<kAcc>*>(c), ldc, ws);
  });
}

}  // namespace tacit::hlo::kernels
