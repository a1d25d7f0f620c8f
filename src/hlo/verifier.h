// The HLO verifier: structural validity of a module as XLA defines it, independent of whether
// tacit can evaluate it (that is the evaluator's supported-op check).
//
// Checks, each reported as one `file:line:col: error:` diagnostic at the offending instruction
// (or computation) and thrown as tacit::DiagnosticError:
//  * the module has an entry computation; computation names are unique; called computations
//    belong to the module and are defined before their callers (no recursion);
//  * every computation is non-empty, its root is one of its instructions, instruction names are
//    unique and well-formed, operands and control predecessors are earlier instructions of the
//    same computation, parameter numbers are unique and cover 0..n-1;
//  * opcodes are known (unknown spellings and async `<op>-start` sugar are rejected), operand
//    counts and required attributes match the opcode, typed attributes appear only on opcodes
//    that take them;
//  * the declared result shape agrees with shape inference (layouts ignored), layouts are valid
//    permutations, constants hold a literal of the instruction's shape;
//  * called computations have the signature the caller needs (reduce/reduce-window/scatter/
//    all-reduce reducers take 2N scalars of the right types, sort comparators return pred[],
//    while/conditional/call/fusion/map parameters match their operands, ...);
//  * the entry_computation_layout, if present, is compatible with the entry's signature.
// Policy: dynamic shapes (`<=N`, `?`) are rejected (tacit gives them no meaning); elided constants
// (`{...}`) are structurally valid and accepted: evaluating or compiling them is rejected later.
#pragma once

#include "hlo/instruction.h"

namespace tacit::hlo {

void verifyModule(const HloModule& module);

}  // namespace tacit::hlo
