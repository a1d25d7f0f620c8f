#include "support/diagnostic.h"

namespace tacit {

std::string_view severityName(Severity s) {
  switch (s) {
    case Severity::kError:
      return "error";
    case Severity::kWarning:
      return "warning";
    case Severity::kNote:
      return "note";
  }
  return "error";
}

static void appendOne(std::string& out, const Diagnostic& d, std::string_view indent) {
  out += indent;
  if (!d.file.empty()) {
    out += d.file;
    if (d.loc.known()) {
      out += ':' + std::to_string(d.loc.line) + ':' + std::to_string(d.loc.col);
    }
    out += ": ";
  }
  out += severityName(d.severity);
  out += ": ";
  out += d.message;
  if (!d.hint.empty()) {
    out += '\n';
    out += indent;
    out += "  hint: ";
    out += d.hint;
  }
}

std::string Diagnostic::str() const {
  std::string out;
  appendOne(out, *this, "");
  for (const Diagnostic& n : notes) {
    out += '\n';
    appendOne(out, n, "  ");
  }
  return out;
}

Diagnostic makeError(std::string file, SourceLoc loc, std::string message, std::string hint) {
  return Diagnostic{Severity::kError,   std::move(file), loc,
                    std::move(message), std::move(hint), {}};
}

Diagnostic makeWarning(std::string file, SourceLoc loc, std::string message, std::string hint) {
  return Diagnostic{Severity::kWarning, std::move(file), loc,
                    std::move(message), std::move(hint), {}};
}

DiagnosticError::DiagnosticError(Diagnostic diag) : diag_(std::move(diag)), text_(diag_.str()) {}

void fail(std::string file, SourceLoc loc, std::string message, std::string hint) {
  throw DiagnosticError(makeError(std::move(file), loc, std::move(message), std::move(hint)));
}

void fail(std::string message, std::string hint) {
  throw DiagnosticError(makeError({}, {}, std::move(message), std::move(hint)));
}

bool DiagnosticSink::hasErrors() const {
  return count(Severity::kError) != 0;
}

size_t DiagnosticSink::count(Severity s) const {
  size_t n = 0;
  for (const Diagnostic& d : diags_)
    n += d.severity == s;
  return n;
}

}  // namespace tacit
