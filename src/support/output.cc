#include "support/output.h"

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "support/diagnostic.h"

namespace tacit {

OutputTransaction::~OutputTransaction() {
  if (committed_) return;
  for (const Staged& s : staged_)
    std::remove(s.temp.c_str());
}

void OutputTransaction::write(const std::string& path, std::string_view data) {
  std::string temp =
      path + ".tacit-tmp." + std::to_string(::getpid()) + "." + std::to_string(staged_.size());
  {
    std::ofstream out(temp, std::ios::binary | std::ios::trunc);
    if (!out) fail(path, {}, std::string("cannot write file: ") + std::strerror(errno));
    out.write(data.data(), static_cast<std::streamsize>(data.size()));
    out.flush();
    if (!out) {
      std::remove(temp.c_str());
      fail(path, {}, "write error (disk full?)");
    }
  }
  staged_.push_back({temp, path});
}

void OutputTransaction::commit() {
  for (size_t i = 0; i < staged_.size(); ++i) {
    if (std::rename(staged_[i].temp.c_str(), staged_[i].final.c_str()) != 0) {
      int err = errno;
      // Undo what was already moved so the command leaves nothing half-written.
      for (size_t j = 0; j < i; ++j)
        std::remove(staged_[j].final.c_str());
      for (size_t j = i; j < staged_.size(); ++j)
        std::remove(staged_[j].temp.c_str());
      committed_ = true;
      fail(staged_[i].final, {}, std::string("cannot write file: ") + std::strerror(err));
    }
  }
  committed_ = true;
}

void writeFileAtomic(const std::string& path, std::string_view data) {
  OutputTransaction tx;
  tx.write(path, data);
  tx.commit();
}

void makeDirectories(const std::string& path) {
  std::error_code ec;
  std::filesystem::create_directories(path, ec);
  if (ec) fail(path, {}, "cannot create directory: " + ec.message());
}

}  // namespace tacit
