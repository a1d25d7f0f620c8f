// Deterministic random literals for tests, `tacit hlo eval --random-inputs` and `--verify`.
//
// The same (shape, seed) gives the same bytes on every platform (a SplitMix64 stream, one draw per
// element, in row-major order; tuple element i uses seed mixSeed(seed, i)). Distributions are
// chosen so that random kernels compute meaningful values (docs/formats.md):
//   pred              0 or 1, equally likely
//   s8, u8            every value of the type, uniformly (exercises wrap-around in integer dots)
//   s16, s32, s64     uniform integers in [-100, 100]
//   u16, u32, u64     uniform integers in [0, 100]
//   f16, bf16, f32, f64   uniform in [-1, 1) on a grid of 2^-24, rounded to the type (nearest even)
#pragma once

#include <cstdint>

#include "hlo/literal.h"
#include "hlo/shape.h"

namespace tacit::hlo {

Literal randomLiteral(const Shape& shape, uint64_t seed);

// A seed derived from `seed` and an index (for the i-th parameter, tuple element, ...).
uint64_t mixSeed(uint64_t seed, uint64_t index);

}  // namespace tacit::hlo
