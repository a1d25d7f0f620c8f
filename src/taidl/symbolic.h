// Symbolic semantics of instructions and composed macros (docs/taidl.md section 5; the types are
// in semantics.h; docs/taidl-api.md shows how the instruction selector uses them).
//
// The checker computes these once per loaded Isa (Isa::instruction_semantics and
// Isa::macro_semantics); the functions are public for tools and tests.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "hlo/instruction.h"
#include "taidl/isa.h"

namespace tacit::taidl {

// The register-free form of one instruction (its registers start unknown).
Semantics instructionSemantics(const Isa& isa, int32_t instruction);

// The composition of a macro's calls. `constraints` (if given) receives the constraints of the
// composition that involve only the macro's attributes (the source of its alpha ranges), also
// when the macro is not selectable. Throws DiagnosticError if a call can never execute in the
// macro (one of its constraints is always false there).
Semantics macroSemantics(const Isa& isa, int32_t macro, std::vector<Expr>* constraints = nullptr);

// The composition of a macro entered with concrete register values (`entry`, one per register),
// for macros that follow a register protocol (a FIFO's pointers): `exits` receives, per case, the
// registers' values at its end. A register left with a non-constant value makes the result not
// selectable. Writes to the buffers flagged in `dropped_buffers` are not outputs.
Semantics macroSemanticsAt(const Isa& isa, int32_t macro, std::span<const int64_t> entry,
                           std::vector<std::vector<int64_t>>* exits,
                           const std::vector<bool>* dropped_buffers = nullptr);

// Makes selectable the macros whose composition depends on registers set outside them but is the
// same in every register state the machine can reach (from the registers' initial values, through
// such macros). Writes to the protocol's internal buffers (accessed by no selectable unit: a
// FIFO's slots) are dropped from their outputs. Run by the checker once every unit is checked;
// docs/taidl.md section 5.
void selectRegisterProtocolMacros(Isa& isa);

// The HLO computation of one case for concrete computational attribute values (`alpha`, indexed
// by attribute slot; beta slots, if present, are ignored): parameter i is input i, the root is a
// tuple of the outputs in order. Throws DiagnosticError (located in the spec) if the values make
// a type invalid.
std::unique_ptr<hlo::HloModule> instantiate(const Isa& isa, const SymCase& c,
                                            std::span<const int64_t> alpha,
                                            const std::string& name = "semantics");

// Readable listing of a semantics, for tests and `tacit isa check --semantics`:
//   case [n == 64]:
//     in0 = d0[addr_in] : u8[n * 128]
//     %1 = u8[n, 64, 2] reshape(in0)
//     ...
//     d1[addr_out] <- %2
//     cost n
std::string semanticsText(const Isa& isa, const Semantics& s);

}  // namespace tacit::taidl
