// A whole module that is part accelerator, part host for Gemmini, shared by the coverage,
// run-module and CLI tests.
#pragma once

namespace tacit::testing {

// An int8 GEMM saturated to int8 (Gemmini's, compiled only as a whole: none of its dot, clamp
// and converts alone) whose result goes on into float work Gemmini has no instruction for.
inline constexpr const char* kGemmThenExp = R"(HloModule mixed
ENTRY main {
  a = s8[16,16] parameter(0)
  b = s8[16,16] parameter(1)
  lo = s32[] constant(-128)
  hi = s32[] constant(127)
  wa = s32[16,16] convert(a)
  wb = s32[16,16] convert(b)
  p = s32[16,16] dot(wa, wb), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  c = s32[16,16] clamp(lo, p, hi)
  q = s8[16,16] convert(c)
  f = f32[16,16] convert(q)
  ROOT e = f32[16,16] exponential(f)
}
)";

}  // namespace tacit::testing
