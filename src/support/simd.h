// Runtime choice of the SIMD kernels (docs/design.md, "SIMD levels").
//
// The build targets a baseline instruction set (x86-64-v3 unless TACIT_NATIVE); kernels written
// for a wider unit (AVX-512's VNNI GEMM, its byte permute, the JIT'd elementwise runs) are compiled
// into the same binary with function-level target attributes and chosen at start-up by the level
// the CPU supports. Every level computes bit-identical results: integer sums are modular and
// float kernels keep one evaluation order (docs/numerics.md), so the level is a speed choice only.
//
// TACIT_SIMD=generic|avx2|avx512 in the environment caps the level (tests run every level on one
// machine; a level the CPU lacks is capped to what it has). setLevel() does the same in-process.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace tacit::simd {

enum class Level : unsigned char {
  kGeneric,  // portable code only (the compiler's own vectorisation for the build's baseline)
  kAvx2,     // AVX2 + FMA kernels
  kAvx512,   // AVX-512 F, BW, DQ, VL, VNNI and VBMI kernels (Ice Lake, Zen 4 and later)
};

std::string_view levelName(Level level);  // "generic", "avx2", "avx512"
std::optional<Level> parseLevel(std::string_view name);

// The widest level this CPU (and its operating system) supports.
Level cpuLevel();

// The level kernels use: cpuLevel(), capped by TACIT_SIMD if set, or by the last setLevel().
Level level();

// "avx2 (this CPU: avx512)": the level in use and the CPU's, for benchmark headers.
std::string describe();

// Caps the level at `wanted` (never above cpuLevel()); returns the level now in use. Kernels read
// the level when they are planned or called, so a test or benchmark sets it before running.
Level setLevel(Level wanted);

}  // namespace tacit::simd
