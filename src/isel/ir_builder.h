// Adds HLO operators to the e-graph with their result types inferred by hlo shape inference, so
// that the kernel importer and every rewrite build well-typed nodes the same way.
#pragma once

#include <optional>
#include <span>
#include <string>
#include <vector>

#include "isel/ir.h"
#include "isel/value_range.h"

namespace tacit::isel {

// What a checked construction built, or why it could not be built: an expected outcome (a chain
// that a solved α makes ill-typed over the matched classes), returned rather than thrown.
template <typename T>
struct Built {
  std::optional<T> value;
  std::string error;  // why, when there is no value
};

class IrBuilder {
 public:
  IrBuilder(egraph::EGraph& g, IrLanguage& ir, const ShapeAnalysis& shapes)
      : g_(g), ir_(ir), shapes_(shapes) {}

  // Valid until the next node is added (the analysis data may move): copy it to keep it.
  const hlo::Shape& shape(ClassId c) const { return shapes_.data(c); }
  const ShapeAnalysis& shapes() const { return shapes_; }

  // Adds `desc` over `children`. If desc.shape is an invalid (default) shape it is inferred;
  // otherwise it is checked. Throws std::logic_error on an ill-typed node (a bug in a rule).
  ClassId add(OpDesc desc, std::span<const ClassId> children);
  // As add(), but an ill-typed node is not added: its error (add()'s message) is returned. For the
  // matcher, whose constructed chains are typed by the spec's expressions at a solved α.
  Built<ClassId> tryAdd(OpDesc desc, std::span<const ClassId> children);

  ClassId constant(hlo::Literal literal);
  ClassId undef(const hlo::Shape& type);
  ClassId kept(const hlo::Shape& type);  // IrLanguage::keptOp
  ClassId overlay(const OverlayDesc& desc, std::span<const ClassId> writers);
  ClassId unary(hlo::HloOpcode op, ClassId x);
  ClassId binary(hlo::HloOpcode op, ClassId a, ClassId b);
  ClassId convert(ClassId x, hlo::PrimitiveType type);
  ClassId bitcastConvert(ClassId x, const hlo::Shape& result);
  ClassId reshape(ClassId x, std::vector<int64_t> dims);
  ClassId transpose(ClassId x, std::vector<int64_t> perm);
  ClassId broadcast(ClassId x, std::vector<int64_t> result_dims, std::vector<int64_t> dimensions);
  ClassId slice(ClassId x, std::vector<hlo::SliceDim> slice);
  ClassId concatenate(std::span<const ClassId> parts, int64_t dimension);
  ClassId pad(ClassId x, ClassId value, std::vector<hlo::PadDim> padding);
  ClassId dot(ClassId lhs, ClassId rhs, hlo::DotDims dims, hlo::PrimitiveType result_type);
  ClassId reduce(ClassId x, ClassId init, std::vector<int64_t> dimensions, Reducer reducer);
  // The nodes reshape(), bitcastConvert() and transpose() add, for tryAdd().
  OpDesc reshapeDesc(ClassId x, std::vector<int64_t> dims) const;
  static OpDesc bitcastConvertDesc(const hlo::Shape& result);
  static OpDesc transposeDesc(std::vector<int64_t> perm);

  // HBM byte flattening (ACT's bflat): E[S] -> u8[bytes], C order, little-endian, and its inverse.
  // The bytes of an undefined value are an undefined byte vector.
  ClassId flatten(ClassId x);
  ClassId unflatten(ClassId bytes, const hlo::Shape& type);

  egraph::EGraph& egraph() { return g_; }
  IrLanguage& ir() { return ir_; }

  // valueRange() of c, remembered for the rest of the e-graph's index generation (RangeMemo): the
  // rules' preconditions ask about the same operands again and again within one application phase.
  ValueRange valueRange(ClassId c) { return ranges_.of(g_, ir_, shapes_, c); }

  // Runs `build` (which adds nodes through this builder) without changing the e-graph: every add
  // only looks its node up (no attribute is interned, no node added). Returns build's class if
  // every node it builds exists already, else nullopt (at the first missing node). A rule whose
  // right side exists already in the matched class changes nothing, whatever its precondition
  // says: probing first skips an expensive precondition on the matches of earlier iterations.
  template <typename Fn>
  std::optional<ClassId> probe(Fn&& build) {
    probing_ = true;
    try {
      ClassId c = build();
      probing_ = false;
      return c;
    } catch (const ProbeMiss&) {
      probing_ = false;
      return std::nullopt;
    } catch (...) {
      probing_ = false;
      throw;
    }
  }

 private:
  struct ProbeMiss {};
  // The existing class of (op, attr, children) while probing; throws ProbeMiss if there is none.
  ClassId existing(egraph::OpId op, std::optional<egraph::AttrId> attr,
                   std::span<const ClassId> children) const;

  bool holdsUndef(ClassId x) const;

  egraph::EGraph& g_;
  IrLanguage& ir_;
  const ShapeAnalysis& shapes_;
  bool probing_ = false;
  RangeMemo ranges_;
};

}  // namespace tacit::isel
