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

}  // namespace tacit::bench
