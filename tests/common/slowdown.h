// How much slower phase 1 runs in this build: unoptimised builds (sanitizers, Debug; CMake defines
// TACIT_UNOPTIMISED_BUILD for the suites that compile large kernels) run it ~15x slower. Compile
// time limits in tests are safety nets, not what the tests check, and scale by it.
#pragma once

namespace tacit::testing {

#ifdef TACIT_UNOPTIMISED_BUILD
inline constexpr int kSlowdown = 15;
#else
inline constexpr int kSlowdown = 1;
#endif

}  // namespace tacit::testing
