#include "stablehlo/input.h"

#include "hlo/parser.h"
#include "stablehlo/convert.h"
#include "stablehlo/parser.h"
#include "support/source.h"

namespace tacit::stablehlo {

std::unique_ptr<hlo::HloModule> parseStableHlo(std::string_view text, const std::string& filename) {
  SourceFile file(filename, std::string(text));
  Module syntax = parseSyntax(file);
  return convertModule(file, syntax);
}

bool isStableHlo(std::string_view text, const std::string& path) {
  if (std::string_view(path).ends_with(".mlir")) return true;
  size_t p = 0;
  while (p < text.size()) {
    char c = text[p];
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
      ++p;
    } else if (text.substr(p, 2) == "//") {
      while (p < text.size() && text[p] != '\n')
        ++p;
    } else {
      break;
    }
  }
  std::string_view rest = text.substr(p);
  // A keyword followed by a blank, a symbol (@name) or a body: not a prefix of a longer name.
  auto word = [&rest](std::string_view w) {
    return rest.starts_with(w) &&
           (rest.size() == w.size() ||
            std::string_view(" \t\n\r@{").find(rest[w.size()]) != std::string_view::npos);
  };
  return word("module") || word("func.func") || rest.starts_with("\"builtin.module\"") ||
         rest.starts_with("\"func.func\"") || rest.starts_with("#loc");
}

std::unique_ptr<hlo::HloModule> parseAnyModule(std::string_view text, const std::string& filename,
                                               DiagnosticSink* warnings) {
  if (isStableHlo(text, filename)) return parseStableHlo(text, filename);
  return hlo::parseModule(text, filename, warnings);
}

std::vector<std::unique_ptr<hlo::HloModule>> parseAnyModules(std::string_view text,
                                                             const std::string& filename,
                                                             DiagnosticSink* warnings) {
  std::vector<std::unique_ptr<hlo::HloModule>> out;
  for (const hlo::InputPart& part : hlo::splitInputFile(text))
    out.push_back(parseAnyModule(part.text, filename, warnings));
  return out;
}

}  // namespace tacit::stablehlo
