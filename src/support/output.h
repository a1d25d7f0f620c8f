// All-or-nothing output: files are staged next to their destination and renamed into place only
// when every file of a command has been written, so a failing command leaves no partial output.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace tacit {

class OutputTransaction {
 public:
  OutputTransaction() = default;
  OutputTransaction(const OutputTransaction&) = delete;
  OutputTransaction& operator=(const OutputTransaction&) = delete;
  ~OutputTransaction();  // rolls back (removes staged files) unless commit() succeeded

  // Stages `data` for `path`; throws DiagnosticError if the temporary file cannot be written.
  void write(const std::string& path, std::string_view data);
  // Renames every staged file into place. Creates no directories: callers create them first.
  void commit();

 private:
  struct Staged {
    std::string temp;
    std::string final;
  };
  std::vector<Staged> staged_;
  bool committed_ = false;
};

// Convenience for a single file.
void writeFileAtomic(const std::string& path, std::string_view data);
// Creates a directory (and parents) if missing; throws DiagnosticError on failure.
void makeDirectories(const std::string& path);

}  // namespace tacit
