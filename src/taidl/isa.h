// A loaded ISA: the checked .taidl spec (docs/taidl.md).
//
//   tacit::taidl::Isa isa = tacit::taidl::loadIsa(text, "gemmini.taidl", {{"DIM", 64}}, &sink);
//
// loadIsa parses, resolves every name, folds parameters and constants (every buffer size is then
// a number), type-checks every instruction, proves that slices fit their buffers, infers the
// range of each computational attribute, computes the symbolic semantics of every instruction
// and macro, and reports warnings to `warnings`. The first error is a DiagnosticError with the
// spec's file:line:col.
//
// An Isa is immutable after loading and safe to share between threads. It is movable but not
// copyable (the resolved fields point into its statement lists).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "support/diagnostic.h"
#include "support/source.h"
#include "taidl/ast.h"
#include "taidl/poly.h"
#include "taidl/semantics.h"

namespace tacit::taidl {

// Size of d0's access dimension: HBM is sized per program.
inline constexpr int64_t kUnknownSize = -1;

// Limits that keep hostile specs from exhausting time or memory (docs/taidl.md section 8).
inline constexpr int kMaxNesting = 64;                      // parentheses, blocks, literals
inline constexpr int64_t kMaxStatementsExecuted = 1 << 16;  // per instruction execution
inline constexpr int64_t kMaxBufferBytes = int64_t{1} << 36;
inline constexpr int64_t kMaxRank = 16;
inline constexpr int kMaxCases = 64;                     // alpha case splits per unit
inline constexpr int64_t kMaxSymbolicStatements = 1024;  // unrolled per selectable unit
inline constexpr int64_t kExhaustivePoints = 4096;       // alpha instantiations (section 8.3)
inline constexpr int kRandomPoints = 64;
inline constexpr int64_t kTypeCheckBudget = int64_t{1} << 22;  // statements typed per instruction
inline constexpr int64_t kMaxMacroCalls = 4096;        // instruction calls of one expanded macro
inline constexpr size_t kMaxSymbolicExprNodes = 4096;  // one expression of a symbolic semantics

// Inferred bounds of one computational attribute (from the alpha-only requires).
struct AlphaRange {
  Interval range;  // may be unbounded on either side
  bool bounded() const { return range.hasLo() && range.hasHi(); }
};

class Isa {
 public:
  Isa() = default;
  Isa(Isa&&) noexcept = default;
  Isa& operator=(Isa&&) noexcept = default;
  Isa(const Isa&) = delete;
  Isa& operator=(const Isa&) = delete;

  std::string name;
  uint32_t name_offset = 0;
  std::shared_ptr<const SourceFile> source;

  std::vector<Item> items;  // declarations in source order (printing)
  std::vector<Param> params;
  std::vector<Param> consts;
  std::vector<Buffer> buffers;  // buffers[0] is the implicit HBM d0
  std::vector<Register> registers;
  std::vector<Instruction> instructions;
  std::vector<Macro> macros;
  std::vector<Engine> engines;       // the timing model's engines (none: one implicit engine)
  std::optional<MemoryPort> memory;  // the timing model's memory interface, if declared

  // ---- filled by the checker ----
  std::vector<std::vector<AlphaRange>> instruction_ranges;  // per instruction, per alpha slot
  std::vector<std::vector<AlphaRange>> macro_ranges;
  std::vector<Semantics> instruction_semantics;
  std::vector<Semantics> macro_semantics;

  // Lookups by name (nullptr / -1 if absent).
  int32_t findBuffer(std::string_view name) const;
  int32_t findRegister(std::string_view name) const;  // without $
  int32_t findInstruction(std::string_view name) const;
  int32_t findMacro(std::string_view name) const;
  int32_t findEngine(std::string_view name) const;
  int32_t findParam(std::string_view name) const;

  const std::string& fileName() const;
  SourceLoc loc(uint32_t offset) const;
  std::string locText(uint32_t offset) const;  // "file:line:col"
  [[noreturn]] void fail(uint32_t offset, std::string message, std::string hint = {}) const;
  Diagnostic warning(uint32_t offset, std::string message, std::string hint = {}) const;

  // The register file at program start (the initial values).
  std::vector<int64_t> initialRegisters() const;
  // `name(a, b; c)` with the instruction's attribute values, for diagnostics.
  std::string callText(const Instruction& inst, std::span<const int64_t> attrs) const;
};

// --param K=V overrides, applied in order; an unknown K is an error.
using ParamOverrides = std::vector<std::pair<std::string, int64_t>>;

// Parses without checking (for printing and round-trip tests): references stay unresolved.
Isa parseIsa(std::string_view text, const std::string& filename);

// Parses and checks. Warnings go to `warnings` if given (they are dropped otherwise).
Isa loadIsa(std::string_view text, const std::string& filename,
            const ParamOverrides& overrides = {}, DiagnosticSink* warnings = nullptr);
Isa loadIsaFile(const std::string& path, const ParamOverrides& overrides = {},
                DiagnosticSink* warnings = nullptr);

// Canonical text (docs/taidl.md section 9).
std::string printIsa(const Isa& isa);

}  // namespace tacit::taidl
