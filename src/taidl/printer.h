// Canonical text of .taidl fragments, shared by printIsa (isa.h), diagnostics and the CLI.
#pragma once

#include <string>

#include "taidl/ast.h"

namespace tacit::taidl {

std::string typeText(const TypeExpr& t);         // "s8[DIM, 4 * n]"
std::string literalText(const LiteralValue& v);  // "0.5", "{1, 2}", "n + 1"
std::string opAttrText(const OpAttr& a);         // "slice={[0:n], [0:64:2]}"
std::string floatText(double v);                 // always reads back as a float token
// One statement on one line (if/repeat bodies are elided as "{ ... }").
std::string stmtText(const Stmt& s);

}  // namespace tacit::taidl
