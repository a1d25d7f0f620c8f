// The conversion's state, shared by convert.cc and convert_ops.cc. Internal to the stablehlo
// module.
#pragma once

#include <initializer_list>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "hlo/builder.h"
#include "stablehlo/ops.h"
#include "stablehlo/syntax.h"
#include "support/source.h"

namespace tacit::stablehlo {

using hlo::HloBuilder;
using hlo::HloComputation;
using hlo::HloInstruction;
using hlo::HloOpcode;
using hlo::Shape;

// Converts one module (convert.h): convert.cc holds the functions, blocks, names and layouts,
// convert_ops.cc the conversion of each op.
class Converter {
 public:
  Converter(const SourceFile& file, const Module& m) : file_(file), m_(m) {}

  std::unique_ptr<hlo::HloModule> run();

 private:
  // The values of one block under construction.
  struct Scope {
    HloBuilder b;
    std::unordered_map<std::string, HloInstruction*> values;
    std::unordered_map<HloInstruction*, std::string> desired;  // names from the source
    // %r#i of an op with several results, not yet used: the tuple and the index.
    std::unordered_map<std::string, std::pair<HloInstruction*, int64_t>> elements;
    explicit Scope(std::string name) : b(std::move(name)) {}
  };

  [[noreturn]] void failAt(SourceLoc loc, std::string message, std::string hint = {}) const {
    fail(file_.name(), loc, std::move(message), std::move(hint));
  }

  HloComputation* function(const std::string& name, SourceLoc use);
  // Builds a block's computation; `results` names the single result (jax.result_info).
  // tuple_args: the block's arguments are the elements of one tuple parameter (a while loop's
  // condition and body over several values, as HLO's while carries one value).
  std::unique_ptr<HloComputation> block(const Region& region, const std::string& name,
                                        bool tuple_args, const std::vector<Type>* result_types,
                                        const std::string& result_name);
  void op(Scope& s, const Op& op);
  // An op's results: one instruction each, or the elements of one tuple-shaped instruction (an op
  // with several results, as HLO has them), taken apart only where used so that a function that
  // returns them all returns the tuple itself.
  struct Built {
    std::vector<HloInstruction*> values;
    HloInstruction* tuple = nullptr;
    Built(std::initializer_list<HloInstruction*> v) : values(v) {}
    static Built elementsOf(HloInstruction* t) {
      Built b{};
      b.tuple = t;
      return b;
    }
  };
  Built build(Scope& s, const Op& op, const OpInfo& info,
              const std::vector<HloInstruction*>& operands);
  // mhlo.layout_mode = "{1,0:T(16,4)}" on the entry's arguments and results: the parameters',
  // the root's and the module's entry layouts.
  void applyLayouts(const Func& f, HloComputation& c);
  std::optional<hlo::Layout> layoutOf(const NamedAttrs& attrs, const Shape& shape) const;
  HloComputation* reducer(const Op& op, const std::vector<HloInstruction*>& operands);
  HloComputation* addShared(std::unique_ptr<HloComputation> c);

  HloInstruction* lookup(Scope& s, const ValueRef& ref) const;
  const Attr& attr(const Op& op, std::string_view name, Attr::Kind kind) const;
  // A list of integers: [1, 2], array<i64: 1, 2>, or the older dense<[1, 2]> : tensor<2xi64>.
  std::vector<int64_t> intsAttr(const Op& op, std::string_view name) const;
  int64_t intAttr(const Op& op, std::string_view name) const {
    return attr(op, name, Attr::Kind::kInt).i;
  }

  const SourceFile& file_;
  const Module& m_;
  std::unique_ptr<hlo::HloModule> out_;
  std::map<std::string, const Func*> funcs_;
  std::map<std::string, HloComputation*> converted_;
  std::set<std::string> in_progress_;
  std::map<std::string, HloComputation*> shared_;  // reducer text -> computation
  int regions_ = 0;
};

}  // namespace tacit::stablehlo
