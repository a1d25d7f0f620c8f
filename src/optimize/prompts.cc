#include "optimize/prompts.h"

#include <stdexcept>

#include "optimize/prompt_files.h"  // generated: kPromptFiles

namespace tacit::optimize {

std::string_view promptFile(std::string_view name) {
  for (const auto& [file, text] : kPromptFiles) {
    if (file == name) return text;
  }
  throw std::logic_error("no prompt file share/optimize/" + std::string(name) + ".md");
}

std::string fill(std::string_view text, const std::map<std::string, std::string>& values) {
  std::string out;
  size_t at = 0;
  while (at < text.size()) {
    const size_t open = text.find("{{", at);
    if (open == std::string_view::npos) break;
    const size_t close = text.find("}}", open + 2);
    if (close == std::string_view::npos) break;
    out.append(text.substr(at, open - at));
    auto it = values.find(std::string(text.substr(open + 2, close - open - 2)));
    if (it != values.end()) {
      out += it->second;
    } else {
      out.append(text.substr(open, close + 2 - open));
    }
    at = close + 2;
  }
  out.append(text.substr(at));
  return out;
}

}  // namespace tacit::optimize
