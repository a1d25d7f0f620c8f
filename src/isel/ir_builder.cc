#include "isel/ir_builder.h"

#include <algorithm>
#include <numeric>
#include <stdexcept>

#include "hlo/shape_inference.h"

namespace tacit::isel {

using hlo::HloOpcode;
using hlo::PrimitiveType;

ClassId IrBuilder::add(OpDesc desc, std::span<const ClassId> children) {
  Built<ClassId> built = tryAdd(std::move(desc), children);
  if (!built.value) throw std::logic_error(built.error);
  return *built.value;
}

Built<ClassId> IrBuilder::tryAdd(OpDesc desc, std::span<const ClassId> children) {
  std::vector<const hlo::Shape*> operand_shapes;
  for (ClassId c : children)
    operand_shapes.push_back(&shapes_.data(c));
  bool declared = desc.shape.elementType() != PrimitiveType::kInvalid;
  // Only a reduce needs attributes of its own (copying them for every node the rules build again
  // showed in profiles).
  hlo::HloAttributes reduce_attrs;
  std::unique_ptr<hlo::HloComputation> reducer_comp;
  if (desc.opcode == HloOpcode::kReduce) {
    reduce_attrs = desc.attrs;
    // Shape inference checks the reducer's signature: give it a scalar computation of the kind.
    PrimitiveType t = shapes_.data(children[1]).elementType();
    reducer_comp = std::make_unique<hlo::HloComputation>("reducer");
    auto param = [&](int64_t i) {
      auto p = std::make_unique<hlo::HloInstruction>(HloOpcode::kParameter, i == 0 ? "x" : "y",
                                                     hlo::Shape(t, {}));
      p->setParameterNumber(i);
      return reducer_comp->addInstruction(std::move(p));
    };
    hlo::HloInstruction* p0 = param(0);
    hlo::HloInstruction* p1 = param(1);
    auto* r = reducer_comp->addInstruction(
        std::make_unique<hlo::HloInstruction>(reducerOpcode(desc.reducer), "r", hlo::Shape(t, {})));
    r->addOperand(p0);
    r->addOperand(p1);
    reducer_comp->setRoot(r);
    reduce_attrs.called.push_back({"to_apply", {reducer_comp.get()}, false});
  }
  const hlo::HloAttributes& attrs = reducer_comp ? reduce_attrs : desc.attrs;
  hlo::ShapeResult result =
      hlo::inferShape(desc.opcode, operand_shapes, attrs, declared ? &desc.shape : nullptr);
  if (!result.ok())
    return {std::nullopt,
            "isel: ill-typed " + std::string(hlo::opcodeName(desc.opcode)) + ": " + result.error};
  desc.shape = *result.shape;
  desc.shape.clearLayouts();
  if (probing_) return {existing(ir_.opFor(desc.opcode), ir_.findEncoded(desc), children), {}};
  return {g_.add(ir_.opFor(desc.opcode), ir_.encode(desc), children), {}};
}

ClassId IrBuilder::existing(egraph::OpId op, std::optional<egraph::AttrId> attr,
                            std::span<const ClassId> children) const {
  if (!attr) throw ProbeMiss{};
  std::optional<ClassId> c = g_.lookup(op, *attr, children);
  if (!c) throw ProbeMiss{};
  return *c;
}

ClassId IrBuilder::constant(hlo::Literal literal) {
  OpDesc d;
  d.opcode = HloOpcode::kConstant;
  d.shape = literal.shape();
  d.shape.clearLayouts();
  d.literal = std::make_shared<hlo::Literal>(std::move(literal));
  return add(std::move(d), {});
}

ClassId IrBuilder::undef(const hlo::Shape& type) {
  OpDesc d;
  d.opcode = HloOpcode::kUnknown;
  d.shape = type;
  d.shape.clearLayouts();
  if (probing_) return existing(ir_.undefOp(), ir_.findEncoded(d), {});
  return g_.add(ir_.undefOp(), ir_.encode(d));
}

ClassId IrBuilder::kept(const hlo::Shape& type) {
  OpDesc d;
  d.opcode = HloOpcode::kUnknown;
  d.shape = type;
  d.shape.clearLayouts();
  if (probing_) return existing(ir_.keptOp(), ir_.findEncoded(d), {});
  return g_.add(ir_.keptOp(), ir_.encode(d));
}

ClassId IrBuilder::overlay(const OverlayDesc& desc, std::span<const ClassId> writers) {
  if (writers.size() != desc.parts.size())
    throw std::logic_error("isel: an overlay needs one writer per part");
  if (probing_) return existing(ir_.overlayOp(), ir_.findEncoded(desc), writers);
  return g_.add(ir_.overlayOp(), ir_.encode(desc), writers);
}

ClassId IrBuilder::unary(HloOpcode op, ClassId x) {
  OpDesc d;
  d.opcode = op;
  ClassId kids[] = {x};
  return add(std::move(d), kids);
}

ClassId IrBuilder::binary(HloOpcode op, ClassId a, ClassId b) {
  OpDesc d;
  d.opcode = op;
  ClassId kids[] = {a, b};
  return add(std::move(d), kids);
}

ClassId IrBuilder::convert(ClassId x, PrimitiveType type) {
  OpDesc d;
  d.opcode = HloOpcode::kConvert;
  d.shape = hlo::Shape(type, shape(x).dims());
  ClassId kids[] = {x};
  return add(std::move(d), kids);
}

OpDesc IrBuilder::bitcastConvertDesc(const hlo::Shape& result) {
  OpDesc d;
  d.opcode = HloOpcode::kBitcastConvert;
  d.shape = result;
  return d;
}

ClassId IrBuilder::bitcastConvert(ClassId x, const hlo::Shape& result) {
  ClassId kids[] = {x};
  return add(bitcastConvertDesc(result), kids);
}

OpDesc IrBuilder::reshapeDesc(ClassId x, std::vector<int64_t> dims) const {
  OpDesc d;
  d.opcode = HloOpcode::kReshape;
  d.shape = hlo::Shape(shape(x).elementType(), std::move(dims));
  return d;
}

ClassId IrBuilder::reshape(ClassId x, std::vector<int64_t> dims) {
  ClassId kids[] = {x};
  return add(reshapeDesc(x, std::move(dims)), kids);
}

OpDesc IrBuilder::transposeDesc(std::vector<int64_t> perm) {
  OpDesc d;
  d.opcode = HloOpcode::kTranspose;
  d.attrs.dimensions = std::move(perm);
  return d;
}

ClassId IrBuilder::transpose(ClassId x, std::vector<int64_t> perm) {
  ClassId kids[] = {x};
  return add(transposeDesc(std::move(perm)), kids);
}

ClassId IrBuilder::broadcast(ClassId x, std::vector<int64_t> result_dims,
                             std::vector<int64_t> dimensions) {
  OpDesc d;
  d.opcode = HloOpcode::kBroadcast;
  d.shape = hlo::Shape(shape(x).elementType(), std::move(result_dims));
  d.attrs.dimensions = std::move(dimensions);
  ClassId kids[] = {x};
  return add(std::move(d), kids);
}

ClassId IrBuilder::slice(ClassId x, std::vector<hlo::SliceDim> s) {
  OpDesc d;
  d.opcode = HloOpcode::kSlice;
  d.attrs.slice = std::move(s);
  ClassId kids[] = {x};
  return add(std::move(d), kids);
}

ClassId IrBuilder::concatenate(std::span<const ClassId> parts, int64_t dimension) {
  OpDesc d;
  d.opcode = HloOpcode::kConcatenate;
  d.attrs.dimensions = std::vector<int64_t>{dimension};
  return add(std::move(d), parts);
}

ClassId IrBuilder::pad(ClassId x, ClassId value, std::vector<hlo::PadDim> padding) {
  OpDesc d;
  d.opcode = HloOpcode::kPad;
  d.attrs.padding = std::move(padding);
  ClassId kids[] = {x, value};
  return add(std::move(d), kids);
}

ClassId IrBuilder::dot(ClassId lhs, ClassId rhs, hlo::DotDims dims, PrimitiveType result_type) {
  // The result dims: batch, lhs free, rhs free (XLA's order); inference checks them.
  const hlo::Shape& l = shape(lhs);
  const hlo::Shape& r = shape(rhs);
  std::vector<int64_t> out;
  for (int64_t b : dims.lhs_batch)
    out.push_back(l.dim(b));
  auto is_in = [](const std::vector<int64_t>& v, int64_t x) {
    return std::find(v.begin(), v.end(), x) != v.end();
  };
  for (int64_t i = 0; i < l.rank(); ++i) {
    if (!is_in(dims.lhs_batch, i) && !is_in(dims.lhs_contracting, i)) out.push_back(l.dim(i));
  }
  for (int64_t i = 0; i < r.rank(); ++i) {
    if (!is_in(dims.rhs_batch, i) && !is_in(dims.rhs_contracting, i)) out.push_back(r.dim(i));
  }
  OpDesc d;
  d.opcode = HloOpcode::kDot;
  d.shape = hlo::Shape(result_type, std::move(out));
  d.attrs.dot_dims = std::move(dims);
  ClassId kids[] = {lhs, rhs};
  return add(std::move(d), kids);
}

ClassId IrBuilder::reduce(ClassId x, ClassId init, std::vector<int64_t> dimensions,
                          Reducer reducer) {
  OpDesc d;
  d.opcode = HloOpcode::kReduce;
  d.attrs.dimensions = std::move(dimensions);
  d.reducer = reducer;
  ClassId kids[] = {x, init};
  return add(std::move(d), kids);
}

bool IrBuilder::holdsUndef(ClassId x) const {
  bool yes = false;
  g_.forEachNode(x, [&](NodeId n) { yes |= g_.node(n).op() == ir_.undefOp(); });
  return yes;
}

ClassId IrBuilder::flatten(ClassId x) {
  const hlo::Shape s = shape(x);  // a copy: adding nodes may move the analysis data
  int bytes = hlo::byteSize(s.elementType());
  int64_t total = s.elementCount() * bytes;
  // The bytes of whatever a region holds are whatever its bytes are: a region of any buffer,
  // HBM included (a padded operand's padding may lie on anything there).
  if (holdsUndef(x)) return undef(hlo::Shape(PrimitiveType::kU8, {total}));
  ClassId as_bytes = x;
  if (s.elementType() != PrimitiveType::kU8) {
    std::vector<int64_t> dims = s.dims();
    if (bytes > 1) dims.push_back(bytes);
    as_bytes = bitcastConvert(x, hlo::Shape(PrimitiveType::kU8, dims));
  }
  if (shape(as_bytes).rank() == 1) return as_bytes;
  return reshape(as_bytes, {total});
}

ClassId IrBuilder::unflatten(ClassId bytes, const hlo::Shape& type) {
  int width = hlo::byteSize(type.elementType());
  if (type.elementType() == PrimitiveType::kU8) {
    return type.rank() == 1 ? bytes : reshape(bytes, type.dims());
  }
  std::vector<int64_t> dims = type.dims();
  if (width > 1) dims.push_back(width);
  ClassId shaped = (dims.size() == 1) ? bytes : reshape(bytes, dims);
  return bitcastConvert(shaped, hlo::Shape(type.elementType(), type.dims()));
}

}  // namespace tacit::isel
