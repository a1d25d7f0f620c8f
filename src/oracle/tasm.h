// The `.tasm` text format (docs/tasm.md): parser and canonical printer.
//
//   Program p = parseProgram(isa, text, "attention.tasm");        // throws DiagnosticError
//   std::string canonical = printProgram(isa, p);                 // parse(print(p)) == p
//
// The parser reports the first mistake as a DiagnosticError at file:line:col (what was expected,
// and a hint where one helps), then checks the whole program with checkProgram(). Constraint
// violations and out-of-range slices depend on the run and are reported by the Machine.
#pragma once

#include <string>
#include <string_view>

#include "oracle/program.h"

namespace tacit::oracle {

struct ParseOptions {
  // Folder that `file "x.npy"` paths are relative to (default: the program file's folder).
  std::string base_dir;
  // If false, `const ... = file "..."` is an error (the fuzzer reads no files).
  bool allow_files = true;
};

Program parseProgram(const taidl::Isa& isa, std::string_view text, const std::string& filename,
                     const ParseOptions& options = {});
Program parseProgramFile(const taidl::Isa& isa, const std::string& path,
                         const ParseOptions& options = {});

// Canonical text: the header, tensors in declaration order, statements with two-space
// indentation, calls with named attributes in declaration order, affine values as
// `c1*v1 + c2*v2 + c` (outer loop first), constants inline unless they came from a file.
std::string printProgram(const taidl::Isa& isa, const Program& program);
// One attribute value or bound as printed (`vars` names the loop variables by depth).
std::string affineText(const Affine& a, const std::vector<std::string>& vars);

}  // namespace tacit::oracle
