// The HLO text parser: XLA's text format (docs/hlo.md) into the tacit HLO IR.
//
//   auto module = tacit::hlo::parseModule(text, "kernel.hlo");
//
// Accepts both printing styles (`%` sigils or not, old long form with typed operands, `HloModule
// name:`), header-less modules, inline and nested anonymous instructions, every attribute form and
// literal form of the grammar. Attributes with a typed HloAttributes field are stored there; every
// other attribute is kept as a RawAttribute with canonical text so that printing round-trips.
// Omitted result shapes are inferred (shape_inference.h). The first mistake throws a
// tacit::DiagnosticError with file:line:col (and a hint where a common pitfall is likely).
//
// The parser checks syntax, name resolution (define-before-use), attribute names/forms per opcode,
// required attributes, literal shapes and ranges, layouts, and typed operand shapes. Semantic
// checks (operand shapes agree with the opcode, called computations' signatures, parameter
// numbering) are the verifier's (verifier.h).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "hlo/instruction.h"

namespace tacit::hlo {

// Limits that keep hostile input from exhausting memory or the stack (docs/hlo.md).
inline constexpr int kMaxNestingDepth = 100;  // brackets, tuple shapes, nested/inline bodies
inline constexpr int64_t kMaxRank = 64;
inline constexpr int64_t kMaxDimensionSize = int64_t{1} << 40;
inline constexpr int64_t kMaxShapeElements = int64_t{1} << 50;
inline constexpr int64_t kMaxLiteralElements = int64_t{1} << 27;
inline constexpr int64_t kMaxSplatElements = int64_t{1} << 20;  // `f32[N] constant(0.5)`

// Parses one module. `filename` is used in diagnostics and stored as the module's sourceFile().
// Warnings (e.g. api_version=API_VERSION_UNSPECIFIED, which current XLA rejects but PyTorch/XLA
// dumps contain) go to `warnings` if given.
std::unique_ptr<HloModule> parseModule(std::string_view text, const std::string& filename,
                                       DiagnosticSink* warnings = nullptr);

// One part of a lit-style file split at `// -----` lines. `text` is the part prefixed with one
// newline per line that precedes it in the file, so diagnostics keep the file's line numbers.
struct InputPart {
  std::string text;
  uint32_t first_line = 1;  // 1-based line of the part's first line in the file
};
// Splits at lines consisting of `// -----` (surrounding blanks allowed); a file without separators
// is one part.
std::vector<InputPart> splitInputFile(std::string_view text);
// Parses every part of a (possibly split) file.
std::vector<std::unique_ptr<HloModule>> parseModules(std::string_view text,
                                                     const std::string& filename,
                                                     DiagnosticSink* warnings = nullptr);

// Parses a shape ("f32[2,3]{1,0}", "(s32[], pred[4])") or a literal of a given shape
// ("{1, 2, 3}"); the whole text must be consumed. Useful in tests and tools.
Shape parseShape(std::string_view text, const std::string& filename = "<shape>");
Literal parseLiteral(std::string_view text, const Shape& shape,
                     const std::string& filename = "<literal>");

}  // namespace tacit::hlo
