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

}  // namespace tacit::bench
