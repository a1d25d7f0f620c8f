// `tacit import-python`: converts an ISA spec written against a published TAIDL Python API into
// a .taidl spec.
//
// Both generations are understood: TAIDL v1 (the MICRO'25 artifact: `Accelerator(name)`,
// `add_data_model(name, count, shape)`, `add_initial_state`, `add_instruction(name, attrs)`,
// semantics text with `<-`, `->`, IF/ELSE/REPEAT) and TAIDL v2 (ACT: `add_data_model(name, S0, S1,
// dtype)`, `add_instruction(name, alpha, beta, ...)`, `set_inputs`/`set_outputs`, `ENTRY` HLO
// text). The spec runs unmodified under the system Python with a recording shim first on
// sys.path (see docs/import-python.md); the shim's record is then converted here.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace tacit::importer {

struct ImportOptions {
  std::string python = "/usr/bin/python3";  // the interpreter that runs the spec
  int timeout_seconds = 60;                 // a spec running longer is stopped and reported
};

struct ImportResult {
  std::string text;                   // the .taidl spec
  std::vector<std::string> warnings;  // "SPEC.py:LINE: warning: ..." lines
};

// Runs `spec_path` under the shim and converts what it recorded. Every problem (a Python syntax
// error, an exception raised by the spec, an unsupported construct) is a DiagnosticError naming
// the spec and line: "SPEC.py:LINE: error: ...".
ImportResult importPythonSpec(const std::string& spec_path, const ImportOptions& options = {});

// Converts a shim record (JSON) of a run of `spec_path`; the part of importPythonSpec after the
// run.
ImportResult convertShimRecord(std::string_view record_json, const std::string& spec_path);

// The shim's files: (relative path, Python source) pairs, written into a temporary directory.
const std::vector<std::pair<std::string, std::string_view>>& shimFiles();

}  // namespace tacit::importer
