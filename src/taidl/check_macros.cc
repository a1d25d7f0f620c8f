// Macro calls (docs/taidl.md sections 5 and 8.6): callees exist and are declared earlier,
// arguments bind every callee attribute exactly once (positional first, then named), and
// arguments of computational attributes use only the macro's computational attributes.
#include "support/strings.h"
#include "taidl/check.h"

namespace tacit::taidl {
namespace {

std::string attrList(const std::vector<Attribute>& attrs, int32_t num_alpha) {
  std::string alpha, beta;
  for (size_t i = 0; i < attrs.size(); ++i) {
    std::string& out = static_cast<int32_t>(i) < num_alpha ? alpha : beta;
    out += (out.empty() ? "" : ", ") + attrs[i].name.text;
  }
  return "(" + alpha + (beta.empty() ? "" : "; " + beta) + ")";
}

}  // namespace

void checkMacroCalls(Checker& c, int32_t index) {
  Isa& isa = c.isa();
  Macro& m = isa.macros[static_cast<size_t>(index)];
  std::vector<bool> used(m.attrs.size(), false);
  Scope scope{&m.attrs, nullptr, nullptr, &used, "macro " + m.name.text};
  for (Call& call : m.calls) {
    const std::string& name = call.callee.text;
    std::string kind = c.globalKind(name);
    if (kind == "an instruction") {
      call.callee_index = isa.findInstruction(name);
    } else if (kind == "a macro") {
      call.callee_is_macro = true;
      call.callee_index = isa.findMacro(name);
    } else {
      std::string hint;
      if (name == m.name.text)
        hint = "a macro cannot call itself";
      else if (isa.findInstruction(name) >= 0 || isa.findMacro(name) >= 0)
        hint = "'" + name + "' is declared later; declare it before the macro";
      else if (!kind.empty())
        hint = "'" + name + "' is " + kind;
      isa.fail(call.callee.offset, "unknown instruction '" + name + "'", hint);
    }
    const std::vector<Attribute>& attrs =
        call.callee_is_macro ? isa.macros[static_cast<size_t>(call.callee_index)].attrs
                             : isa.instructions[static_cast<size_t>(call.callee_index)].attrs;
    int32_t num_alpha = call.callee_is_macro
                            ? isa.macros[static_cast<size_t>(call.callee_index)].num_alpha
                            : isa.instructions[static_cast<size_t>(call.callee_index)].num_alpha;
    std::string signature = name + attrList(attrs, num_alpha);
    call.bound.assign(attrs.size(), Expr());
    bool named = false;
    size_t position = 0;
    for (CallArg& arg : call.args) {
      size_t slot = 0;
      if (arg.name.text.empty()) {
        if (named)
          isa.fail(arg.offset, "positional argument after a named one",
                   "give positional arguments first, in declaration order");
        if (position >= attrs.size())
          isa.fail(arg.offset, "too many arguments: " + signature + " takes " +
                                   plural(static_cast<int64_t>(attrs.size()), "attribute"));
        slot = position++;
      } else {
        named = true;
        auto it = std::find_if(attrs.begin(), attrs.end(),
                               [&](const Attribute& a) { return a.name.text == arg.name.text; });
        if (it == attrs.end())
          isa.fail(arg.name.offset, name + " has no attribute '" + arg.name.text + "'",
                   "its attributes are " + signature);
        slot = static_cast<size_t>(it - attrs.begin());
      }
      if (!call.bound[slot].empty())
        isa.fail(arg.offset,
                 "attribute " + attrs[slot].name.text + " of " + name + " is given twice");
      c.resolve(arg.value, scope, attrs[slot].alpha ? Site::kAlphaArg : Site::kBetaArg);
      call.bound[slot] = arg.value;
    }
    for (size_t i = 0; i < attrs.size(); ++i) {
      if (call.bound[i].empty())
        isa.fail(call.offset,
                 "missing argument for attribute " + attrs[i].name.text + " of " + signature);
    }
  }
  for (size_t i = 0; i < m.attrs.size(); ++i) {
    if (!used[i])
      c.warn(m.attrs[i].name.offset,
             "attribute " + m.attrs[i].name.text + " of macro " + m.name.text + " is never used");
  }
}

}  // namespace tacit::taidl
