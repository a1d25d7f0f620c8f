// The TAIDL operator catalogue (v1 artifact spellings and v2 ACT spellings) -> .taidl operations.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "import/importer_internal.h"

namespace tacit::importer {

// Splits at `sep` outside (), [], {}, backquotes and parameter markers.
std::vector<std::string> splitTopLevel(std::string_view s, char sep, int line);
// Index just past the bracket matching the one at `open`, skipping backquotes and parameter
// markers; unbalanced brackets are an ImportError naming `line`.
size_t matchBracket(std::string_view s, size_t open, int line);

using AttrList = std::vector<std::pair<std::string, std::string>>;

// Emits operations into a Body, keeping SSA names unique per path and recording which
// attributes are used in computational positions (types, operation attributes, constants).
class OpConverter {
 public:
  OpConverter(const IsaContext& isa, Body& body) : isa_(isa), body_(body) {}

  void useAlpha(const Expr& e) {
    body_.use(e, true);
    deriveExactDivisions(body_, e, isa_.naming);
  }
  void useAlphaType(const TensorType& t);

  // A new definition of the source value `name` (without '%'): its SSA name on this path.
  std::string define(const std::string& name, const TensorType& type);
  // A fresh helper value derived from `base` (an SSA name).
  std::string helper(const std::string& base, const std::string& tag, const TensorType& type);
  // The SSA name of a source reference "%x".
  std::string value(const std::string& ref, int line) const;

  // v1: `opname(args)[,attr=value...]` defining %name of type `type`.
  void operation(const std::string& name, const TensorType& type, const std::string& rhs, int line);
  // Both: an already split operation.
  void operation(const std::string& name, const TensorType& type, const std::string& opname,
                 const std::vector<std::string>& args, const AttrList& attrs, int line);

 private:
  std::string typeText(const TensorType& t) const { return printType(t, isa_.naming); }
  const TensorType& typeOf(const std::string& ssa) const { return body_.types.at(ssa); }
  std::vector<std::string> operands(const std::vector<std::string>& args, size_t count,
                                    const std::string& op, int line) const;
  std::string exprList(const std::string& text, int line);  // "{1,0}" -> "{1, 0}"
  std::string sliceList(const std::string& text, int line);
  std::string literal(const std::string& text, int line);
  std::string typedConstant(const std::string& base, const std::string& tag,
                            const std::string& dtype, const std::string& text, int line);

  void broadcast(const std::string& ssa, const TensorType& type, const std::string& operand,
                 const std::string& dims_attr, bool v1_plain, int line);
  void dot(const std::string& ssa, const TensorType& type, const std::vector<std::string>& ops,
           const AttrList& attrs, int line);
  void reduce(const std::string& ssa, const TensorType& type, const std::vector<std::string>& args,
              const AttrList& attrs, bool add_sugar, int line);
  void dynamicUpdateSlice(const std::string& ssa, const TensorType& type,
                          const std::vector<std::string>& args, int line);
  void clamp(const std::string& ssa, const TensorType& type, const std::vector<std::string>& args,
             int line);
  void selectLt(const std::string& ssa, const TensorType& type,
                const std::vector<std::string>& args, int line);
  std::string attrText(const std::string& key, const std::string& value, int line);

  const IsaContext& isa_;
  Body& body_;
};

}  // namespace tacit::importer
