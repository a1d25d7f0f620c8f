// The kernels the benches compile: Gemmini's int8 GEMM C = sat8(A·B) of s8[m, k] · s8[k, n]
// through int32 sums (`wide`: the int32 result clamped, as Exo's 512³ schedule writes it), AMX's
// u8·s8 GEMM, and quantised layers on both.
#pragma once

#include <cstdint>
#include <sstream>
#include <string>

namespace tacit::bench {

inline std::string gemmHlo(int64_t m, int64_t k, int64_t n, bool wide = false) {
  std::ostringstream s;
  const char* out = wide ? "s32" : "s8";
  s << "HloModule gemm\nENTRY main {\n  a = s8[" << m << "," << k << "] parameter(0)\n  b = s8["
    << k << "," << n << "] parameter(1)\n  wa = s32[" << m << "," << k
    << "] convert(a)\n  wb = s32[" << k << "," << n << "] convert(b)\n  p = s32[" << m << "," << n
    << "] dot(wa, wb), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n"
    << "  lo = s32[] constant(-128)\n  hi = s32[] constant(127)\n  c = s32[" << m << "," << n
    << "] clamp(lo, p, hi)\n  ROOT r = " << out << "[" << m << "," << n << "] convert(c)\n}\n";
  return s.str();
}

inline std::string dims(int64_t a, int64_t b) {
  return "[" + std::to_string(a) + "," + std::to_string(b) + "]";
}

// TPUv1's int8 GEMM: int32 sums wrapped to int8 (Activate without ReLU), operands and result in
// the layout T(256,256) — whole weight tiles contiguous, as the Weight Memory holds them.
inline std::string tpuGemmHlo(int64_t m, int64_t k, int64_t n) {
  const std::string l = "{1,0:T(256,256)}";
  std::ostringstream s;
  s << "HloModule tpu, entry_computation_layout={(s8" << dims(m, k) << l << ", s8" << dims(k, n)
    << l << ")->s8" << dims(m, n) << l << "}\nENTRY main {\n  a = s8" << dims(m, k) << l
    << " parameter(0)\n  b = s8" << dims(k, n) << l << " parameter(1)\n  wa = s32" << dims(m, k)
    << " convert(a)\n  wb = s32" << dims(k, n) << " convert(b)\n  d = s32" << dims(m, n)
    << " dot(wa, wb), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n  ROOT r = s8"
    << dims(m, n) << " convert(d)\n}\n";
  return s.str();
}

// QKV's bf16 GEMM, B and the result in 64x64 layout tiles (its stores write whole 64-wide rows).
inline std::string qkvGemmHlo(int64_t m, int64_t k, int64_t n) {
  const std::string l = "{1,0:T(64,64)}";
  std::ostringstream s;
  s << "HloModule qkv, entry_computation_layout={(bf16" << dims(m, k) << "{1,0}, bf16" << dims(k, n)
    << l << ")->bf16" << dims(m, n) << l << "}\nENTRY main {\n  a = bf16" << dims(m, k)
    << " parameter(0)\n  b = bf16" << dims(k, n) << l << " parameter(1)\n  ROOT c = bf16"
    << dims(m, n) << l << " dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n}\n";
  return s.str();
}

// The start of oneDNN's u8 x s8 GEMM on AMX: the module with its entry layout (A u8[m, k]
// row-major, B s8[n, k] in the VNNI layout T(16,4), then `more` parameters' layouts; `result` the
// result's), its parameters (`more_params` after A and B), the widening converts wa and wb, and
// the line that starts the dot of wa and wb, `DOT`, which the caller names.
inline std::string amxGemmStart(int64_t m, int64_t k, int64_t n, const std::string& more,
                                const std::string& more_params, const std::string& result) {
  std::ostringstream s;
  s << "HloModule amx, entry_computation_layout={(u8" << dims(m, k) << "{1,0}, s8" << dims(n, k)
    << "{1,0:T(16,4)}" << more << ")->" << result << "}\nENTRY main {\n  a = u8" << dims(m, k)
    << "{1,0} parameter(0)\n  b = s8" << dims(n, k) << "{1,0:T(16,4)} parameter(1)\n"
    << more_params << "  wa = s32" << dims(m, k) << " convert(a)\n  wb = s32" << dims(n, k)
    << " convert(b)\n";
  return s.str();
}

inline const char* kAmxDot = " dot(wa, wb), lhs_contracting_dims={1}, rhs_contracting_dims={1}\n";

// AMX's u8 x s8 GEMM in oneDNN's form: C = A·B^T as a row-major s32[m, n].
inline std::string amxGemmHlo(int64_t m, int64_t k, int64_t n) {
  return amxGemmStart(m, k, n, "", "", "s32" + dims(m, n) + "{1,0}") + "  ROOT c = s32" +
         dims(m, n) + kAmxDot + "}\n";
}

// A quantised layer on Gemmini: the int8 GEMM, a per-column int32 bias, saturated to int8 (no
// ReLU: the spec's moves out of the accumulator have no activation, docs/backend.md).
inline std::string gemminiLayerHlo(int64_t m, int64_t k, int64_t n) {
  std::ostringstream s;
  s << "HloModule layer\nENTRY main {\n  a = s8" << dims(m, k) << " parameter(0)\n  b = s8"
    << dims(k, n) << " parameter(1)\n  bias = s32[" << n << "] parameter(2)\n  wa = s32"
    << dims(m, k) << " convert(a)\n  wb = s32" << dims(k, n) << " convert(b)\n  p = s32"
    << dims(m, n) << " dot(wa, wb), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n  bb = s32"
    << dims(m, n) << " broadcast(bias), dimensions={1}\n  sum = s32" << dims(m, n)
    << " add(p, bb)\n  lo = s32[] constant(-128)\n  hi = s32[] constant(127)\n  c = s32"
    << dims(m, n) << " clamp(lo, sum, hi)\n  ROOT r = s8" << dims(m, n) << " convert(c)\n}\n";
  return s.str();
}

// oneDNN's quantised layer on AMX: the u8 x s8 GEMM (VNNI weights), its s32 sums to f32, scaled,
// a per-column f32 bias, ReLU, clamped to [0, 255], rounded to nearest even, u8.
inline std::string amxLayerHlo(int64_t m, int64_t k, int64_t n) {
  const std::string mn = "f32" + dims(m, n);
  std::ostringstream s;
  s << amxGemmStart(m, k, n, ", f32[" + std::to_string(n) + "]{0}",
                    "  bias = f32[" + std::to_string(n) + "]{0} parameter(2)\n",
                    "u8" + dims(m, n) + "{1,0}")
    << "  acc = s32" << dims(m, n) << kAmxDot << "  accf = " << mn
    << " convert(acc)\n  scale = f32[] constant(0.125)\n  scales = " << mn
    << " broadcast(scale), dimensions={}\n  scaled = " << mn << " multiply(accf, scales)\n"
    << "  biases = " << mn << " broadcast(bias), dimensions={1}\n  biased = " << mn
    << " add(scaled, biases)\n  zero = f32[] constant(0)\n  zeros = " << mn
    << " broadcast(zero), dimensions={}\n  relu = " << mn << " maximum(biased, zeros)\n"
    << "  top = f32[] constant(255)\n  clamped = " << mn << " clamp(zero, relu, top)\n"
    << "  rounded = " << mn << " round-nearest-even(clamped)\n  ROOT q = u8" << dims(m, n)
    << " convert(rounded)\n}\n";
  return s.str();
}

}  // namespace tacit::bench
