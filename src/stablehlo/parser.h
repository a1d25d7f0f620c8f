// The StableHLO text parser: MLIR's textual form, as JAX prints it, into a syntax tree (syntax.h).
//
//   stablehlo::Module m = stablehlo::parseSyntax(file);
//
// Reads the pretty form of every op of the subset (docs/stablehlo.md) and the generic form of any
// op (`"dialect.op"(%a) <{props}> ({regions}) {attrs} : (types) -> types`), module and function
// headers in both forms, attribute and type syntax, and skips locations (`loc(...)`, `#loc`
// aliases) keeping only name locations, which name parameters. Meaning (which ops exist, what
// their attributes say) is the conversion's (convert.h). The first mistake throws a
// tacit::DiagnosticError with file:line:col.
#pragma once

#include <cstdint>

#include "stablehlo/syntax.h"
#include "support/source.h"

namespace tacit::stablehlo {

// Limits that keep hostile input from exhausting memory or the stack (docs/stablehlo.md).
inline constexpr int kMaxNestingDepth = 100;             // brackets, regions, nested types
inline constexpr int64_t kMaxValues = int64_t{1} << 20;  // ops and block arguments in a module
inline constexpr int64_t kMaxResults = 1024;             // results of one op (`%0:N`)

Module parseSyntax(const SourceFile& file);

}  // namespace tacit::stablehlo
