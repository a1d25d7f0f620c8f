#include "support/source.h"

#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

namespace tacit {

SourceFile::SourceFile(std::string name, std::string text)
    : name_(std::move(name)), text_(std::move(text)) {
  line_starts_.push_back(0);
  for (size_t i = 0; i < text_.size(); ++i) {
    if (text_[i] == '\n') line_starts_.push_back(i + 1);
  }
}

SourceLoc SourceFile::locate(size_t offset) const {
  offset = std::min(offset, text_.size());
  auto it = std::upper_bound(line_starts_.begin(), line_starts_.end(), offset);
  size_t line_index = static_cast<size_t>(it - line_starts_.begin()) - 1;
  size_t start = line_starts_[line_index];
  uint32_t col = 1;
  for (size_t i = start; i < offset; ++i) {
    // Count code points: UTF-8 continuation bytes do not start a column.
    if ((static_cast<unsigned char>(text_[i]) & 0xC0) != 0x80) ++col;
  }
  return SourceLoc{static_cast<uint32_t>(line_index + 1), col};
}

std::string_view SourceFile::line(uint32_t line) const {
  if (line == 0 || line > line_starts_.size()) return {};
  size_t start = line_starts_[line - 1];
  size_t end = line < line_starts_.size() ? line_starts_[line] - 1 : text_.size();
  return std::string_view(text_).substr(start, end - start);
}

Diagnostic SourceFile::error(size_t offset, std::string message, std::string hint) const {
  return makeError(name_, locate(offset), std::move(message), std::move(hint));
}

void SourceFile::fail(size_t offset, std::string message, std::string hint) const {
  throw DiagnosticError(error(offset, std::move(message), std::move(hint)));
}

std::string readFile(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) {
    tacit::fail(path, {}, std::string("cannot open file: ") + std::strerror(errno));
  }
  if (S_ISDIR(st.st_mode)) tacit::fail(path, {}, "expected a file, found a directory");
  std::ifstream in(path, std::ios::binary);
  if (!in) tacit::fail(path, {}, std::string("cannot open file: ") + std::strerror(errno));
  std::ostringstream ss;
  ss << in.rdbuf();
  if (in.bad()) tacit::fail(path, {}, "read error");
  return ss.str();
}

bool fileExists(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

}  // namespace tacit
