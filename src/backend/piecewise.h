// Piecewise compilation (docs/backend.md, "Piecewise compilation").
//
// A kernel result computed elementwise from kernel inputs and other results (oneDNN K5's
// requantisation epilogue) is, piece by piece, one small kernel: each contiguous run of c elements
// of its last dimension depends only on the matching runs of its operands. When the ISA computes
// the result's operators one row at a time (every elementwise unit of those operators has one
// row), phase 1 would split it into such runs anyway; saturating one piece kernel instead of the
// whole e-graph of every run is where the time goes. The piece kernel and the rest of the kernel
// (its other results) are compiled on their own, their instruction graphs joined — each piece's
// inputs are views of the kernel's HBM regions — and the join is allocated and costed as a whole,
// so equal calls of different pieces (a constant's load) become one.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "backend/compiler.h"

namespace tacit::backend {

// Where a piece kernel's parameter lies in the whole kernel's HBM: a byte range of an entry
// parameter or of another kernel result.
struct PieceSource {
  bool from_result = false;
  size_t index = 0;    // parameter number, or result index
  int64_t offset = 0;  // byte offset in that tensor's bytes
};

struct Piece {
  std::vector<PieceSource> sources;  // one per parameter of the piece kernel
  int64_t offset = 0;                // byte offset of the piece in the split result's bytes
};

struct SplitResult {
  size_t result = 0;                       // the kernel result
  std::unique_ptr<hlo::HloModule> kernel;  // the piece kernel every piece runs
  int64_t elements = 0;                    // per piece
  std::vector<Piece> pieces;
};

struct PiecewisePlan {
  std::unique_ptr<hlo::HloModule> rest;  // the other results; null when every result is split
  std::vector<size_t> rest_results;      // the kernel result of each result of `rest`
  std::vector<SplitResult> splits;
  // "result 1 (u8[32,32]) in 64 pieces of 16 elements"
  std::string summary() const;
};

// The plan, or nullopt when no result can be split profitably: every result must be computed by
// elementwise operators (same shape) from entry parameters, other results, scalar constants and
// broadcasts of those, used by nothing else; the ISA's elementwise units of those operators must
// all compute one row; every piece of every operand and of the result must be contiguous in HBM;
// at least kMinPieces pieces. `needs` are the ISA's (isel::Target::needs).
std::optional<PiecewisePlan> planPiecewise(const hlo::HloModule& kernel,
                                           const isel::IsaNeeds& needs);
inline constexpr size_t kMinPieces = 4;

// The instruction graph of the whole kernel from those of `rest` (if any) and of each split's
// piece kernel, in kernel result order: piece inputs become slice views of the kernel's inputs
// and results, each split result an overlay of its pieces' results; equal constants, equal views
// and equal calls that no call overwrites in place and that write no HBM become one.
isel::PiiGraph joinPieces(const PiecewisePlan& plan, const isel::UnitSet& units,
                          const isel::ImportedKernel& layout, const isel::PiiGraph* rest,
                          const std::vector<const isel::PiiGraph*>& pieces);

// Compiles `kernel` piecewise if planPiecewise finds a plan, every part compiles (compileKernel,
// within `deadline`), the join has at most the selector's e-node limit of nodes
// (options.selector.max_nodes) and can be allocated; nullopt otherwise (the driver then compiles
// the kernel whole).
std::optional<CompileResult> compilePiecewise(const isel::Target& target,
                                              const hlo::HloModule& kernel,
                                              const CompileOptions& options, Deadline deadline);

}  // namespace tacit::backend
