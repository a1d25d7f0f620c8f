// Kernel import (docs/algorithm.md §3.2): an HLO module's entry computation becomes e-graph nodes.
//
// HBM layout: the entry parameters' bytes in parameter order from byte 0, then the result (a
// tuple's elements consecutively, in tuple order). Each parameter enters as an `input` leaf holding
// its bytes (u8) followed by the inverse byte-flattening; each result leaves through
// byte-flattening. Non-default layouts are modelled in byte order: a minor_to_major permutation is
// a transpose to major-to-minor order, and a tiling T(t_1..t_k) splits each of the k most-minor
// physical dims into (outer, tile) and moves the tile parts minor (reshape + transpose), as XLA's
// tiled layouts do.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "isel/ir_builder.h"

namespace tacit::isel {

// A kernel result that is one window of a larger tensor in HBM (a tile of tiled compilation,
// backend/tiling.h): the kernel computes the window and leaves every other byte of the tensor as it
// was. The entry's result is the window; the result's HBM region is the whole tensor, in the
// window's layout (the default, row-major one: a window of a permuted or tiled layout is not a
// box of bytes rows).
struct ResultWindow {
  std::vector<int64_t> region;  // the whole tensor's dimensions
  std::vector<int64_t> starts;  // the window's first element in each dimension
};

// A parameter or result that lives in an on-chip buffer at a fixed place instead of HBM: the
// accumulator a contraction loop carries from one tile kernel to the next (backend/tiling.h). Its
// type must be the buffer's row form (the buffer's element type, access extents then unit dims),
// or, with `held`, its bytes are one unit of the buffer in the buffer's element type.
struct Residence {
  int32_t buffer = 0;
  std::vector<int64_t> start;  // per access dimension of the buffer
  // The buffer's type of the value when the buffer holds it as raw bytes ([1...] access extents,
  // then the unit dims, in the buffer's element type): AMX's tile registers hold an s32[16,16]
  // accumulator as s8[1,16,64], each element's bytes in order along the rows, as tdpbusd reads
  // and writes it. nullopt: the value's own element type.
  std::optional<hlo::Shape> held;
};

// How a kernel is imported besides its HLO text.
struct ImportOptions {
  std::vector<std::optional<ResultWindow>> windows;  // per result; missing: the whole result
  std::vector<std::optional<Residence>> resident_parameters;  // per parameter
  std::vector<std::optional<Residence>> resident_results;     // per result
  // HBM below this byte belongs to the caller (scratch goes above it): a tile kernel without an
  // HBM result keeps the kernel's result region free.
  int64_t reserved_hbm = 0;
  // Each tensor's HBM offset is a multiple of this (IsaNeeds::hbm_alignment).
  int64_t hbm_alignment = 1;
};

// `o` with the HBM alignment set (IsaNeeds::hbm_alignment: where the ISA's addresses reach).
inline ImportOptions alignedImport(ImportOptions o, int64_t hbm_alignment) {
  o.hbm_alignment = hbm_alignment;
  return o;
}

struct KernelParameter {
  std::string name;
  hlo::Shape shape;  // with its layout
  int64_t hbm_offset = 0;
  int64_t bytes = 0;  // 0 when resident
  std::optional<Residence> resident;
  ClassId bytes_class;  // the input leaf (u8 in HBM)
  ClassId value_class;  // the logical tensor
};

struct KernelResult {
  hlo::Shape shape;  // with its layout; a window's: the whole tensor's
  int64_t hbm_offset = 0;
  int64_t bytes = 0;
  ClassId value_class;   // the logical tensor (a window's: the whole tensor, kept around it)
  ClassId bytes_class;   // its byte-flattening: must be produced in HBM
  ClassId window_class;  // a window: the entry's result; invalid otherwise
  bool windowed = false;
  std::optional<Residence> resident;  // then bytes_class is the value, produced in that buffer
};

// Where a class came from, for diagnostics ("no instruction computes `dot.3` at k.hlo:12:3").
struct Origin {
  ClassId eclass;
  const hlo::HloInstruction* instruction;
};

struct ImportedKernel {
  std::string file;
  std::vector<KernelParameter> parameters;
  std::vector<KernelResult> results;
  int64_t io_bytes = 0;  // inputs + results (at least ImportOptions::reserved_hbm)
  std::vector<Origin> origins;
};

// Imports the entry computation. Opcodes isel does not model, variadic reduces, reducers that are
// not one commutative binary operator, dynamic shapes, unknown constants and layouts with partial
// tiles are DiagnosticErrors at the offending instruction. call/fusion are inlined.
// A window result's region surrounds the window with kept blocks (nested concatenations),
// which the block writes of region_write.cc leave untouched.
ImportedKernel importKernel(const hlo::HloModule& module, IrBuilder& b,
                            const ImportOptions& options = {});

// The entry's parameter and result types with their layouts (entry_computation_layout if given),
// one per array result (a tuple's elements).
std::vector<hlo::Shape> entryParameterShapes(const hlo::HloModule& module);
std::vector<hlo::Shape> entryResultShapes(const hlo::HloModule& module);
// The HBM layout importKernel gives the kernel (names, types and offsets; no e-graph classes) for
// a kernel whose entry is known to be importable.
ImportedKernel hbmLayout(const hlo::HloModule& module, const ImportOptions& options = {});

// The byte-flattening of a value laid out with `layout` (transpose to physical order, tiling).
ClassId flattenWithLayout(IrBuilder& b, ClassId value, const hlo::Shape& with_layout,
                          const std::string& file, SourceLoc loc);
// The tensor whose row-major bytes are the HBM bytes of a value laid out as `with_layout`: the
// logical shape itself for the default layout, else the dims in physical (tiled) order.
hlo::Shape physicalShape(const hlo::Shape& with_layout);
// The byte offset in HBM of the element at logical `index` of a value laid out as `with_layout`.
int64_t physicalOffset(const hlo::Shape& with_layout, const std::vector<int64_t>& index);
// Rearranges a logical value into that physical tensor, and back (exact: pure data movement).
hlo::Literal toPhysical(const hlo::Literal& logical, const hlo::Shape& with_layout);
hlo::Literal fromPhysical(const hlo::Literal& physical, const hlo::Shape& with_layout);

// Its inverse: the logical tensor stored as `with_layout` in `bytes`.
ClassId unflattenWithLayout(IrBuilder& b, ClassId bytes, const hlo::Shape& with_layout,
                            const std::string& file, SourceLoc loc);

}  // namespace tacit::isel
