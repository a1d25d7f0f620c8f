// The conversion of each op of the subset (ops.h's forms) to HLO instructions, through the
// builder so that shape inference checks it. Part of the Converter (convert_impl.h).
#include "stablehlo/convert_impl.h"
#include "stablehlo/dense.h"
#include "stablehlo/window.h"
#include "support/strings.h"

namespace tacit::stablehlo {

Converter::Built Converter::build(Scope& s, const Op& op, const OpInfo& info,
                                  const std::vector<HloInstruction*>& x) {
  HloBuilder& b = s.b;
  auto arity = [&](size_t lo, size_t hi) {
    if (x.size() < lo || x.size() > hi) {
      failAt(op.loc, "'" + op.name + "' takes " +
                         (lo == hi ? std::to_string(lo) : std::to_string(lo) + " or more") +
                         " operands, got " + std::to_string(x.size()));
    }
  };
  auto declared = [&]() -> std::optional<Shape> {
    if (op.result_types.size() != 1) return std::nullopt;
    return op.result_types[0].shape;
  };
  switch (info.form) {
    case OpForm::kElementwise: {
      std::optional<Shape> shape = declared();
      if (!shape) failAt(op.loc, "'" + op.name + "' has one result");
      return {b.add(info.opcode, x, {}, shape)};
    }
    case OpForm::kConstant: {
      arity(0, 0);
      return {b.constant(denseLiteral(file_, attr(op, "value", Attr::Kind::kDense)))};
    }
    case OpForm::kIota: {
      std::optional<Shape> shape = declared();
      if (!shape || !shape->isArray())
        failAt(op.loc, "'stablehlo.iota' needs a tensor result type");
      return {b.iota(*shape, intAttr(op, "iota_dimension"))};
    }
    case OpForm::kCompare: {
      arity(2, 2);
      const Attr& dir = attr(op, "comparison_direction", Attr::Kind::kEnum);
      static const std::pair<std::string_view, hlo::ComparisonDirection> dirs[] = {
          {"EQ", hlo::ComparisonDirection::kEq}, {"NE", hlo::ComparisonDirection::kNe},
          {"GE", hlo::ComparisonDirection::kGe}, {"GT", hlo::ComparisonDirection::kGt},
          {"LE", hlo::ComparisonDirection::kLe}, {"LT", hlo::ComparisonDirection::kLt}};
      std::optional<hlo::ComparisonDirection> d;
      for (const auto& [word, value] : dirs)
        if (dir.text == word) d = value;
      if (!d)
        failAt(dir.loc, "unknown comparison direction '" + dir.text + "'",
               "EQ, NE, GE, GT, LE or LT");
      std::optional<hlo::ComparisonType> type;
      if (const Attr* t = op.attrs.find("compare_type")) {
        static const std::pair<std::string_view, hlo::ComparisonType> types[] = {
            {"FLOAT", hlo::ComparisonType::kFloat},
            {"TOTALORDER", hlo::ComparisonType::kTotalOrder},
            {"SIGNED", hlo::ComparisonType::kSigned},
            {"UNSIGNED", hlo::ComparisonType::kUnsigned}};
        for (const auto& [word, value] : types)
          if (t->text == word) type = value;
        if (!type)
          failAt(t->loc, "unknown comparison type '" + t->text + "'",
                 "FLOAT, TOTALORDER, SIGNED or UNSIGNED");
      }
      return {b.compare(x[0], x[1], *d, type)};
    }
    case OpForm::kBroadcastInDim: {
      arity(1, 1);
      std::optional<Shape> shape = declared();
      if (!shape || !shape->isArray())
        failAt(op.loc, "'" + op.name + "' needs a tensor result type");
      std::vector<int64_t> dims = intsAttr(op, "broadcast_dimensions");
      HloInstruction* operand = x[0];
      // StableHLO also expands an operand dimension of size 1 to any size; HLO's broadcast maps
      // sizes one to one, so such dimensions are reshaped away first (as XLA's import does).
      const Shape& in = operand->shape();
      if (in.isArray() && static_cast<int64_t>(dims.size()) == in.rank()) {
        std::vector<int64_t> kept_dims, kept_sizes;
        for (int64_t i = 0; i < in.rank(); ++i) {
          const int64_t d = dims[static_cast<size_t>(i)];
          const bool expands = in.dim(i) == 1 && d >= 0 && d < shape->rank() && shape->dim(d) != 1;
          if (!expands) {
            kept_dims.push_back(d);
            kept_sizes.push_back(in.dim(i));
          }
        }
        if (kept_dims.size() != dims.size()) {
          operand = b.reshape(operand, kept_sizes);
          dims = kept_dims;
        }
      }
      return {b.broadcast(operand, shape->dims(), dims)};
    }
    case OpForm::kTranspose:
      arity(1, 1);
      return {b.transpose(x[0], intsAttr(op, "permutation"))};
    case OpForm::kReverse:
      arity(1, 1);
      return {b.reverse(x[0], intsAttr(op, "dimensions"))};
    case OpForm::kConcatenate:
      arity(1, SIZE_MAX);
      return {b.concatenate(x, intAttr(op, "dimension"))};
    case OpForm::kSlice: {
      arity(1, 1);
      std::vector<int64_t> strides;
      if (op.attrs.find("strides")) strides = intsAttr(op, "strides");
      return {b.slice(x[0], intsAttr(op, "start_indices"), intsAttr(op, "limit_indices"), strides)};
    }
    case OpForm::kDynamicSlice:
      arity(1, SIZE_MAX);
      return {b.dynamicSlice(x[0], {x.begin() + 1, x.end()}, intsAttr(op, "slice_sizes"))};
    case OpForm::kDynamicUpdateSlice:
      arity(2, SIZE_MAX);
      return {b.dynamicUpdateSlice(x[0], x[1], {x.begin() + 2, x.end()})};
    case OpForm::kPad: {
      arity(2, 2);
      const std::vector<int64_t> lo = intsAttr(op, "edge_padding_low");
      const std::vector<int64_t> hi = intsAttr(op, "edge_padding_high");
      const std::vector<int64_t> interior = intsAttr(op, "interior_padding");
      if (lo.size() != hi.size() || lo.size() != interior.size())
        failAt(op.loc, "the padding lists of 'stablehlo.pad' differ in length");
      std::vector<hlo::PadDim> padding;
      for (size_t i = 0; i < lo.size(); ++i)
        padding.push_back({lo[i], hi[i], interior[i]});
      return {b.pad(x[0], x[1], padding)};
    }
    case OpForm::kDotGeneral:
    case OpForm::kDot: {
      arity(2, 2);
      hlo::DotDims dims;
      if (info.form == OpForm::kDotGeneral) {
        const Attr& d = attr(op, "dot_dimension_numbers", Attr::Kind::kDict);
        for (const auto& [key, value] : d.dict) {
          std::vector<int64_t>* field =
              key == "lhs_batching_dimensions"      ? &dims.lhs_batch
              : key == "rhs_batching_dimensions"    ? &dims.rhs_batch
              : key == "lhs_contracting_dimensions" ? &dims.lhs_contracting
              : key == "rhs_contracting_dimensions" ? &dims.rhs_contracting
                                                    : nullptr;
          if (!field || value.kind != Attr::Kind::kIntArray)
            failAt(value.loc, "unknown dot dimension field '" + key + "'");
          *field = value.ints;
        }
      } else {
        // The legacy dot contracts the lhs's last dimension with the rhs's first.
        if (x[0]->shape().rank() < 1 || x[0]->shape().rank() > 2 || x[1]->shape().rank() < 1 ||
            x[1]->shape().rank() > 2)
          failAt(op.loc, "'stablehlo.dot' takes vectors and matrices");
        dims.lhs_contracting = {x[0]->shape().rank() - 1};
        dims.rhs_contracting = {0};
      }
      std::optional<Shape> shape = declared();
      if (!shape || !shape->isArray())
        failAt(op.loc, "'" + op.name + "' needs a tensor result type");
      return {b.dot(x[0], x[1], dims, shape->elementType())};
    }
    case OpForm::kConvolution: {
      arity(2, 2);
      std::optional<Shape> shape = declared();
      if (!shape || !shape->isArray())
        failAt(op.loc, "'" + op.name + "' needs a tensor result type");
      return {b.add(HloOpcode::kConvolution, x, convolutionAttributes(file_, op, x[1]->shape()),
                    shape)};
    }
    case OpForm::kReduce: {
      if (x.size() < 2 || x.size() % 2 != 0)
        failAt(op.loc, "'stablehlo.reduce' takes inputs and as many initial values");
      const size_t n = x.size() / 2;
      HloComputation* r = reducer(op, x);
      HloInstruction* reduce =
          b.reduce({x.begin(), x.begin() + static_cast<long>(n)},
                   {x.begin() + static_cast<long>(n), x.end()}, intsAttr(op, "dimensions"), r);
      if (n == 1) return {reduce};
      return Built::elementsOf(reduce);
    }
    case OpForm::kReduceWindow: {
      if (x.size() < 2 || x.size() % 2 != 0)
        failAt(op.loc, "'stablehlo.reduce_window' takes inputs and as many initial values");
      const size_t n = x.size() / 2;
      hlo::HloAttributes attrs;
      attrs.window =
          reduceWindowWindow(file_, op, x[0]->shape().isArray() ? x[0]->shape().rank() : 0);
      attrs.called.push_back({"to_apply", {reducer(op, x)}, false});
      HloInstruction* rw = b.add(HloOpcode::kReduceWindow, x, attrs);
      if (n == 1) return {rw};
      return Built::elementsOf(rw);
    }
    case OpForm::kSort: {
      // The comparator takes each operand's pair of elements: lhs_0, rhs_0, lhs_1, rhs_1, ...
      if (x.empty()) failAt(op.loc, "'stablehlo.sort' needs at least one operand");
      if (op.regions.size() != 1)
        failAt(op.loc, "'stablehlo.sort' needs one region, its comparator");
      hlo::HloAttributes attrs;
      // StableHLO's dimension defaults to -1 and counts from the end when negative.
      int64_t dimension = op.attrs.find("dimension") ? intAttr(op, "dimension") : -1;
      if (dimension < 0 && x[0]->shape().isArray()) dimension += x[0]->shape().rank();
      attrs.dimensions = std::vector<int64_t>{dimension};
      if (const Attr* stable = op.attrs.find("is_stable");
          stable && stable->kind == Attr::Kind::kBool && stable->b)
        attrs.is_stable = true;
      attrs.called.push_back(
          {"to_apply",
           {addShared(
               block(op.regions[0], "region_" + std::to_string(regions_++), false, nullptr, ""))},
           false});
      HloInstruction* sort = b.add(HloOpcode::kSort, x, attrs);
      if (x.size() == 1) return {sort};
      return Built::elementsOf(sort);
    }
    case OpForm::kOptimizationBarrier: {
      // HLO's opt-barrier takes one value: several travel as a tuple.
      if (x.empty()) failAt(op.loc, "'stablehlo.optimization_barrier' needs at least one operand");
      if (x.size() == 1) return {b.add(HloOpcode::kOptBarrier, x)};
      HloInstruction* barrier = b.add(HloOpcode::kOptBarrier, {b.tuple(x)});
      return Built::elementsOf(barrier);
    }
    case OpForm::kWhile: {
      // HLO's while carries one value: several operands travel as a tuple, the condition and the
      // body take it apart, and the results are its elements.
      if (x.empty()) failAt(op.loc, "'stablehlo.while' needs at least one operand");
      if (op.regions.size() != 2)
        failAt(op.loc, "'stablehlo.while' needs two regions, cond and do");
      const bool tupled = x.size() > 1;
      for (const Region& r : op.regions) {
        if (r.args.size() != x.size())
          failAt(r.loc, "the region takes " + std::to_string(r.args.size()) +
                            " arguments; the loop carries " + std::to_string(x.size()) + " values");
      }
      hlo::HloAttributes attrs;
      attrs.called.push_back(
          {"condition",
           {addShared(
               block(op.regions[0], "region_" + std::to_string(regions_++), tupled, nullptr, ""))},
           false});
      attrs.called.push_back(
          {"body",
           {addShared(
               block(op.regions[1], "region_" + std::to_string(regions_++), tupled, nullptr, ""))},
           false});
      HloInstruction* loop = b.add(HloOpcode::kWhile, {tupled ? b.tuple(x) : x[0]}, attrs);
      if (!tupled) return {loop};
      return Built::elementsOf(loop);
    }
    case OpForm::kReducePrecision: {
      arity(1, 1);
      hlo::HloAttributes attrs;
      attrs.exponent_bits = intAttr(op, "exponent_bits");
      attrs.mantissa_bits = intAttr(op, "mantissa_bits");
      return {b.add(HloOpcode::kReducePrecision, x, attrs)};
    }
    case OpForm::kTuple:
      return {b.tuple(x)};
    case OpForm::kGetTupleElement:
      arity(1, 1);
      return {b.getTupleElement(x[0], intAttr(op, "index"))};
    case OpForm::kCustomCall: {
      hlo::HloAttributes attrs;
      const Attr& target = attr(op, "call_target_name", Attr::Kind::kString);
      attrs.raw.push_back({"custom_call_target", quote(target.text), target.loc});
      if (const Attr* effect = op.attrs.find("has_side_effect");
          effect && effect->kind == Attr::Kind::kBool && effect->b)
        attrs.raw.push_back({"custom_call_has_side_effect", "true", effect->loc});
      if (const Attr* config = op.attrs.find("backend_config");
          config && config->kind == Attr::Kind::kString && !config->text.empty())
        attrs.raw.push_back({"backend_config", quote(config->text), config->loc});
      if (const Attr* version = op.attrs.find("api_version");
          version && version->kind == Attr::Kind::kInt) {
        static const char* versions[] = {
            "API_VERSION_UNSPECIFIED", "API_VERSION_ORIGINAL", "API_VERSION_STATUS_RETURNING",
            "API_VERSION_STATUS_RETURNING_UNIFIED", "API_VERSION_TYPED_FFI"};
        if (version->i < 0 || version->i > 4)
          failAt(version->loc, "unknown custom_call api_version");
        if (version->i != 1)
          attrs.raw.push_back({"api_version", versions[version->i], version->loc});
      }
      Shape shape;
      if (op.result_types.size() == 1) {
        shape = op.result_types[0].shape;
      } else {
        std::vector<Shape> shapes;
        for (const Type& t : op.result_types)
          shapes.push_back(t.shape);
        shape = Shape::tuple(std::move(shapes));
      }
      HloInstruction* call = b.add(HloOpcode::kCustomCall, x, attrs, shape);
      if (op.result_types.size() == 1) return {call};
      return Built::elementsOf(call);
    }
    case OpForm::kCall: {
      const Attr& callee = attr(op, "callee", Attr::Kind::kSymbol);
      hlo::HloAttributes attrs;
      attrs.called.push_back({"to_apply", {function(callee.text, callee.loc)}, false});
      HloInstruction* call = b.add(HloOpcode::kCall, x, attrs);
      if (op.result_types.size() <= 1) return {call};
      return Built::elementsOf(call);
    }
    case OpForm::kReturn:
      break;
  }
  failAt(op.loc, "'" + op.name + "' cannot appear here");
}

}  // namespace tacit::stablehlo
