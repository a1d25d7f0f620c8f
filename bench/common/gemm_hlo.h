// The int8 GEMM the benches compile: C = sat8(A·B) of s8[m, k] · s8[k, n] through int32 sums
// (`wide`: the int32 result clamped, as Exo's 512³ schedule writes it).
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

// AMX's u8 x s8 GEMM in oneDNN's form: A u8[m, k] row-major, B s8[n, k] in the VNNI layout
// T(16,4), C = A·B^T as a row-major s32[m, n].
inline std::string amxGemmHlo(int64_t m, int64_t k, int64_t n) {
  auto t = [](int64_t a, int64_t b) {
    return "[" + std::to_string(a) + "," + std::to_string(b) + "]";
  };
  std::ostringstream s;
  s << "HloModule amx_gemm, entry_computation_layout={(u8" << t(m, k) << "{1,0}, s8" << t(n, k)
    << "{1,0:T(16,4)})->s32" << t(m, n) << "{1,0}}\nENTRY main {\n  a = u8" << t(m, k)
    << "{1,0} parameter(0)\n  b = s8" << t(n, k) << "{1,0:T(16,4)} parameter(1)\n  wa = s32"
    << t(m, k) << " convert(a)\n  wb = s32" << t(n, k) << " convert(b)\n  ROOT c = s32" << t(m, n)
    << " dot(wa, wb), lhs_contracting_dims={1}, rhs_contracting_dims={1}\n}\n";
  return s.str();
}

// A quantised layer on Gemmini: the int8 GEMM, a per-column int32 bias, saturated to int8 (no
// ReLU: the spec's moves out of the accumulator have no activation, docs/backend.md).
inline std::string gemminiLayerHlo(int64_t m, int64_t k, int64_t n) {
  auto t = [](int64_t a, int64_t b) {
    return "[" + std::to_string(a) + "," + std::to_string(b) + "]";
  };
  std::ostringstream s;
  s << "HloModule layer\nENTRY main {\n  a = s8" << t(m, k) << " parameter(0)\n  b = s8" << t(k, n)
    << " parameter(1)\n  bias = s32[" << n << "] parameter(2)\n  wa = s32" << t(m, k)
    << " convert(a)\n  wb = s32" << t(k, n) << " convert(b)\n  p = s32" << t(m, n)
    << " dot(wa, wb), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n  bb = s32" << t(m, n)
    << " broadcast(bias), dimensions={1}\n  sum = s32" << t(m, n) << " add(p, bb)\n"
    << "  lo = s32[] constant(-128)\n  hi = s32[] constant(127)\n  c = s32" << t(m, n)
    << " clamp(lo, sum, hi)\n  ROOT r = s8" << t(m, n) << " convert(c)\n}\n";
  return s.str();
}

// oneDNN's quantised layer on AMX: the u8 x s8 GEMM (VNNI weights), its s32 sums to f32, scaled,
// a per-column f32 bias, ReLU, clamped to [0, 255], rounded to nearest even, u8.
inline std::string amxLayerHlo(int64_t m, int64_t k, int64_t n) {
  auto t = [](int64_t a, int64_t b) {
    return "[" + std::to_string(a) + "," + std::to_string(b) + "]";
  };
  const std::string mn = "f32" + t(m, n);
  std::ostringstream s;
  s << "HloModule amx_layer, entry_computation_layout={(u8" << t(m, k) << "{1,0}, s8" << t(n, k)
    << "{1,0:T(16,4)}, f32[" << n << "]{0})->u8" << t(m, n) << "{1,0}}\nENTRY main {\n  a = u8"
    << t(m, k) << "{1,0} parameter(0)\n  b = s8" << t(n, k)
    << "{1,0:T(16,4)} parameter(1)\n  bias = f32[" << n << "]{0} parameter(2)\n  wa = s32"
    << t(m, k) << " convert(a)\n  wb = s32" << t(n, k) << " convert(b)\n  acc = s32" << t(m, n)
    << " dot(wa, wb), lhs_contracting_dims={1}, rhs_contracting_dims={1}\n  accf = " << mn
    << " convert(acc)\n  scale = f32[] constant(0.125)\n  scales = " << mn
    << " broadcast(scale), dimensions={}\n  scaled = " << mn << " multiply(accf, scales)\n"
    << "  biases = " << mn << " broadcast(bias), dimensions={1}\n  biased = " << mn
    << " add(scaled, biases)\n  zero = f32[] constant(0)\n  zeros = " << mn
    << " broadcast(zero), dimensions={}\n  relu = " << mn << " maximum(biased, zeros)\n"
    << "  top = f32[] constant(255)\n  clamped = " << mn << " clamp(zero, relu, top)\n"
    << "  rounded = " << mn << " round-nearest-even(clamped)\n  ROOT q = u8" << t(m, n)
    << " convert(rounded)\n}\n";
  return s.str();
}

}  // namespace tacit::bench
