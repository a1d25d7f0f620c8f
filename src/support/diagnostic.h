// Diagnostics: the one way tacit reports a user's mistake.
//
// Every user-facing error is a Diagnostic with a location (file:line:col), a message saying what
// was expected, and optionally a hint and notes. Parsers and checkers throw DiagnosticError at the
// first mistake; the CLI prints it and exits non-zero. Warnings go to a DiagnosticSink.
#pragma once

#include <cstdint>
#include <exception>
#include <string>
#include <string_view>
#include <vector>

namespace tacit {

// 1-based line and column; line 0 means "no position" (the whole file or no file at all).
struct SourceLoc {
  uint32_t line = 0;
  uint32_t col = 0;
  bool known() const { return line != 0; }
  friend bool operator==(const SourceLoc&, const SourceLoc&) = default;
};

enum class Severity { kError, kWarning, kNote };

struct Diagnostic {
  Severity severity = Severity::kError;
  std::string file;  // may be empty (e.g. a command-line flag)
  SourceLoc loc;
  std::string message;  // what is wrong and what was expected
  std::string hint;     // optional: how to fix it
  std::vector<Diagnostic> notes;

  // "file:line:col: error: message" followed by "  hint: ..." and note lines.
  std::string str() const;
};

Diagnostic makeError(std::string file, SourceLoc loc, std::string message, std::string hint = {});
Diagnostic makeWarning(std::string file, SourceLoc loc, std::string message, std::string hint = {});

// Thrown at the first user-facing error. what() is the formatted diagnostic.
class DiagnosticError : public std::exception {
 public:
  explicit DiagnosticError(Diagnostic diag);
  const Diagnostic& diagnostic() const { return diag_; }
  Diagnostic& diagnostic() { return diag_; }
  const char* what() const noexcept override { return text_.c_str(); }

 private:
  Diagnostic diag_;
  std::string text_;
};

[[noreturn]] void fail(std::string file, SourceLoc loc, std::string message, std::string hint = {});
// An error without a source position (flags, missing files, internal limits).
[[noreturn]] void fail(std::string message, std::string hint = {});

// Collects warnings (and, for tools that want all errors, errors) without throwing.
class DiagnosticSink {
 public:
  void report(Diagnostic d) { diags_.push_back(std::move(d)); }
  const std::vector<Diagnostic>& all() const { return diags_; }
  bool hasErrors() const;
  size_t count(Severity s) const;
  void clear() { diags_.clear(); }

 private:
  std::vector<Diagnostic> diags_;
};

std::string_view severityName(Severity s);

}  // namespace tacit
