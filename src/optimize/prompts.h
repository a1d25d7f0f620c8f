// The prompts of `tacit optimize` (docs/optimize.md): the files of share/optimize/, embedded in
// the executable at build time (src/optimize/CMakeLists.txt), with `{{name}}` placeholders.
#pragma once

#include <map>
#include <string>
#include <string_view>

namespace tacit::optimize {

// The embedded file share/optimize/NAME.md (system, planning, implementation, format).
std::string_view promptFile(std::string_view name);

// `text` with every `{{key}}` replaced by its value; an unknown placeholder stays as it is.
std::string fill(std::string_view text, const std::map<std::string, std::string>& values);

}  // namespace tacit::optimize
