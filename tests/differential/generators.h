// Seeded random generators of small HLO kernels for the differential tests: one generator per
// shipped ISA, each drawing from a menu of operations and shapes read off the ISA's spec
// (tests/differential/README.md lists the menus).
//
// Every generated kernel carries a category. Categories come in three kinds:
//  * kExpressible  the spec has instructions that compute it as written today (library operations
//                  and their compositions on the ISA's native tiles);
//  * kProbe        plausible for the spec but needing more than direct selection (tiling a
//                  larger shape, a transpose through HBM, a row split): compiled if the compiler
//                  can, otherwise rejected with a diagnostic — rejections are findings for isel;
//  * kInexpressible no instruction computes it (wrong element type, an operation the ISA lacks):
//                  must be rejected with a diagnostic.
// Any kernel that compiles must verify, whatever its kind.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace tacit::differential {

enum class Kind { kExpressible, kProbe, kInexpressible };

struct GeneratedKernel {
  std::string name;      // unique within a generated set; also the HloModule name
  std::string category;  // e.g. "chain", "tile32", "movement"
  Kind kind = Kind::kExpressible;
  std::string hlo;  // HLO text
};

// The ISAs with a generator, by the spec file's stem: qkv, qkv_new, gemmini (DIM = 16), amx,
// tpuv1.
const std::vector<std::string>& generatorIsas();

// `count` distinct kernels for `isa` (by text), deterministic in (isa, seed, count).
std::vector<GeneratedKernel> generateKernels(const std::string& isa, uint64_t seed, int count);

// One kernel for `isa` whose every random choice is read from `bytes` in order (structure-aware
// fuzzing, fuzz/fuzz_compile.cc: a mutated byte changes one choice); choices past the end read 0.
GeneratedKernel kernelFromBytes(const std::string& isa, const uint8_t* bytes, size_t size);

// Hand-written kernels that the ISA cannot express (wrong element types, operations without an
// instruction): every one must be rejected with a diagnostic.
std::vector<GeneratedKernel> inexpressibleKernels(const std::string& isa);

}  // namespace tacit::differential
