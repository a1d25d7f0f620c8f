// Source text with positions: maps byte offsets to 1-based line:col for diagnostics.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "support/diagnostic.h"

namespace tacit {

class SourceFile {
 public:
  SourceFile(std::string name, std::string text);

  const std::string& name() const { return name_; }
  const std::string& text() const { return text_; }
  std::string_view view() const { return text_; }

  // Line and column (in UTF-8 code points, 1-based) of a byte offset; offsets past the end map to
  // the end of the text.
  SourceLoc locate(size_t offset) const;
  // The full text of a 1-based line, without its newline.
  std::string_view line(uint32_t line) const;

  [[noreturn]] void fail(size_t offset, std::string message, std::string hint = {}) const;
  Diagnostic error(size_t offset, std::string message, std::string hint = {}) const;

 private:
  std::string name_;
  std::string text_;
  std::vector<size_t> line_starts_;
};

// Reads a whole file; a missing or unreadable file is a DiagnosticError naming the path.
std::string readFile(const std::string& path);
// True if the file exists and is a regular file.
bool fileExists(const std::string& path);

}  // namespace tacit
