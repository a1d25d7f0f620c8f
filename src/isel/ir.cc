#include "isel/ir.h"

#include <stdexcept>

#include "hlo/attributes.h"
#include "hlo/printer.h"
#include "support/strings.h"

namespace tacit::isel {
namespace {

using hlo::HloOpcode;
using hlo::PrimitiveType;

enum Tag : uint8_t { kTagOp = 1, kTagPii = 2, kTagInput = 3, kTagOverlay = 4 };

void writeShape(egraph::AttrWriter& w, const hlo::Shape& s) {
  w.u8(static_cast<uint8_t>(s.elementType())).ints(s.dims());
}

hlo::Shape readShape(egraph::AttrReader& r) {
  auto type = static_cast<PrimitiveType>(r.u8());
  return hlo::Shape(type, r.ints());
}

template <typename T, typename Fn>
void writeOptional(egraph::AttrWriter& w, const std::optional<T>& v, Fn fn) {
  w.u8(v.has_value() ? 1 : 0);
  if (v) fn(*v);
}

// One field of every slice dimension as an int list (written in place: no vector per field).
void writeSliceField(egraph::AttrWriter& w, const std::vector<hlo::SliceDim>& s, int which) {
  w.intsOf(s.size(), [&](size_t i) {
    const hlo::SliceDim& d = s[i];
    return which == 0 ? d.start : which == 1 ? d.limit : d.stride;
  });
}

void writePadField(egraph::AttrWriter& w, const std::vector<hlo::PadDim>& p, int which) {
  w.intsOf(p.size(), [&](size_t i) {
    const hlo::PadDim& d = p[i];
    return which == 0 ? d.lo : which == 1 ? d.hi : d.interior;
  });
}

// The bytes of `d`, in a writer reused by every call (valid until the next call): IrBuilder
// encodes the attribute of every node the rules build, and allocating two strings per node
// showed in profiles.
std::string_view encodeOpBytes(const OpDesc& d) {
  static thread_local egraph::AttrWriter w;
  w.clear();
  w.u8(kTagOp).i64(static_cast<int64_t>(d.opcode));
  writeShape(w, d.shape);
  const hlo::HloAttributes& a = d.attrs;
  writeOptional(w, a.dimensions, [&](const auto& v) { w.ints(v); });
  writeOptional(w, a.iota_dimension, [&](int64_t v) { w.i64(v); });
  writeOptional(w, a.slice, [&](const auto& v) {
    for (int field = 0; field < 3; ++field)
      writeSliceField(w, v, field);
  });
  writeOptional(w, a.dynamic_slice_sizes, [&](const auto& v) { w.ints(v); });
  writeOptional(w, a.padding, [&](const auto& v) {
    for (int field = 0; field < 3; ++field)
      writePadField(w, v, field);
  });
  writeOptional(w, a.dot_dims, [&](const hlo::DotDims& v) {
    w.ints(v.lhs_batch).ints(v.lhs_contracting).ints(v.rhs_batch).ints(v.rhs_contracting);
  });
  writeOptional(w, a.direction, [&](hlo::ComparisonDirection v) { w.u8(static_cast<uint8_t>(v)); });
  writeOptional(w, a.comparison_type,
                [&](hlo::ComparisonType v) { w.u8(static_cast<uint8_t>(v)); });
  w.u8(static_cast<uint8_t>(d.reducer));
  w.u8(d.literal ? 1 : 0);
  if (d.literal) {
    w.str(std::string_view(reinterpret_cast<const char*>(d.literal->bytes()),
                           d.literal->byteCount()));
  }
  return w.bytes();
}

OpDesc decodeOp(egraph::AttrReader& r) {
  OpDesc d;
  d.opcode = static_cast<HloOpcode>(r.i64());
  d.shape = readShape(r);
  hlo::HloAttributes& a = d.attrs;
  if (r.u8()) a.dimensions = r.ints();
  if (r.u8()) a.iota_dimension = r.i64();
  if (r.u8()) {
    auto starts = r.ints(), limits = r.ints(), strides = r.ints();
    std::vector<hlo::SliceDim> s;
    for (size_t i = 0; i < starts.size(); ++i)
      s.push_back({starts[i], limits[i], strides[i]});
    a.slice = std::move(s);
  }
  if (r.u8()) a.dynamic_slice_sizes = r.ints();
  if (r.u8()) {
    auto lo = r.ints(), hi = r.ints(), in = r.ints();
    std::vector<hlo::PadDim> p;
    for (size_t i = 0; i < lo.size(); ++i)
      p.push_back({lo[i], hi[i], in[i]});
    a.padding = std::move(p);
  }
  if (r.u8()) {
    hlo::DotDims dd;
    dd.lhs_batch = r.ints();
    dd.lhs_contracting = r.ints();
    dd.rhs_batch = r.ints();
    dd.rhs_contracting = r.ints();
    a.dot_dims = std::move(dd);
  }
  if (r.u8()) a.direction = static_cast<hlo::ComparisonDirection>(r.u8());
  if (r.u8()) a.comparison_type = static_cast<hlo::ComparisonType>(r.u8());
  d.reducer = static_cast<Reducer>(r.u8());
  if (r.u8()) {
    std::string_view bytes = r.str();
    auto lit = std::make_shared<hlo::Literal>(d.shape);
    if (bytes.size() != lit->byteCount())
      throw std::logic_error("isel: corrupt constant attribute");
    std::memcpy(lit->bytes(), bytes.data(), bytes.size());
    d.literal = std::move(lit);
  }
  r.done();
  return d;
}

std::string encodePiiBytes(const PiiDesc& d) {
  egraph::AttrWriter w;
  w.u8(kTagPii).i64(d.unit).i64(d.case_index).ints(d.alpha).i64(d.output).i64(d.buffer);
  writeShape(w, d.shape);
  return std::string(w.bytes());
}

std::string encodeInputBytes(const InputDesc& d) {
  egraph::AttrWriter w;
  w.u8(kTagInput).i64(d.parameter).i64(d.bytes).i64(d.buffer);
  if (d.buffer != 0) writeShape(w, d.shape);
  return std::string(w.bytes());
}

std::string encodeOverlayBytes(const OverlayDesc& d) {
  egraph::AttrWriter w;
  w.u8(kTagOverlay).i64(d.bytes).i64(static_cast<int64_t>(d.parts.size()));
  for (const OverlayPart& p : d.parts) {
    w.i64(p.at).i64(p.block.offset).i64(static_cast<int64_t>(p.block.dims.size()));
    for (const ViewDim& v : p.block.dims)
      w.i64(v.extent).i64(v.stride);
  }
  return std::string(w.bytes());
}

int arityOf(HloOpcode op) {
  switch (op) {
    case HloOpcode::kConstant:
    case HloOpcode::kIota:
      return 0;
    case HloOpcode::kSelect:
    case HloOpcode::kClamp:
      return 3;
    case HloOpcode::kConcatenate:
      return egraph::kVariadic;
    case HloOpcode::kDot:
    case HloOpcode::kPad:
    case HloOpcode::kReduce:
    case HloOpcode::kCompare:
      return 2;
    default:
      return hlo::isElementwiseBinary(op) ? 2 : 1;
  }
}

}  // namespace

std::string_view reducerName(Reducer r) {
  switch (r) {
    case Reducer::kNone:
      return "none";
    case Reducer::kAdd:
      return "add";
    case Reducer::kMultiply:
      return "multiply";
    case Reducer::kMaximum:
      return "maximum";
    case Reducer::kMinimum:
      return "minimum";
    case Reducer::kAnd:
      return "and";
    case Reducer::kOr:
      return "or";
    case Reducer::kXor:
      return "xor";
  }
  return "none";
}

std::optional<Reducer> parseReducer(std::string_view name) {
  for (Reducer r : {Reducer::kAdd, Reducer::kMultiply, Reducer::kMaximum, Reducer::kMinimum,
                    Reducer::kAnd, Reducer::kOr, Reducer::kXor}) {
    if (reducerName(r) == name) return r;
  }
  return std::nullopt;
}

HloOpcode reducerOpcode(Reducer r) {
  switch (r) {
    case Reducer::kAdd:
      return HloOpcode::kAdd;
    case Reducer::kMultiply:
      return HloOpcode::kMultiply;
    case Reducer::kMaximum:
      return HloOpcode::kMaximum;
    case Reducer::kMinimum:
      return HloOpcode::kMinimum;
    case Reducer::kAnd:
      return HloOpcode::kAnd;
    case Reducer::kOr:
      return HloOpcode::kOr;
    case Reducer::kXor:
      return HloOpcode::kXor;
    case Reducer::kNone:
      break;
  }
  return HloOpcode::kUnknown;
}

bool iselSupports(HloOpcode op) {
  switch (op) {
    case HloOpcode::kConstant:
    case HloOpcode::kIota:
    case HloOpcode::kConvert:
    case HloOpcode::kBitcastConvert:
    case HloOpcode::kReshape:
    case HloOpcode::kBroadcast:
    case HloOpcode::kTranspose:
    case HloOpcode::kReverse:
    case HloOpcode::kSlice:
    case HloOpcode::kConcatenate:
    case HloOpcode::kPad:
    case HloOpcode::kDot:
    case HloOpcode::kReduce:
    case HloOpcode::kCompare:
    case HloOpcode::kSelect:
    case HloOpcode::kClamp:
    case HloOpcode::kCopy:
      return true;
    default:
      return (hlo::isElementwiseUnary(op) || hlo::isElementwiseBinary(op)) &&
             op != HloOpcode::kBitcast && op != HloOpcode::kOptBarrier &&
             op != HloOpcode::kComplex && op != HloOpcode::kReal && op != HloOpcode::kImag &&
             op != HloOpcode::kReducePrecision && op != HloOpcode::kStochasticConvert;
  }
}

IrLanguage::IrLanguage() : lang_(std::make_shared<egraph::Language>()) {
  size_t count = static_cast<size_t>(HloOpcode::kUnknown) + 1;
  op_for_opcode_.assign(count, OpId());
  for (size_t i = 0; i < count; ++i) {
    auto op = static_cast<HloOpcode>(i);
    if (op == HloOpcode::kUnknown || !iselSupports(op)) continue;
    OpId id = lang_->addOp(std::string(hlo::opcodeName(op)), arityOf(op));
    op_for_opcode_[i] = id;
    if (opcode_.size() <= id.value) opcode_.resize(id.value + 1);
    opcode_[id.value] = op;
  }
  input_op_ = lang_->addOp("input", 0);
  pii_op_ = lang_->addOp("pii", egraph::kVariadic);
  results_op_ = lang_->addOp("results", egraph::kVariadic);
  undef_op_ = lang_->addOp("undef", 0);
  kept_op_ = lang_->addOp("kept", 0);
  overlay_op_ = lang_->addOp("overlay", egraph::kVariadic);
  opcode_.resize(lang_->opCount());
  lang_->setAttrFormatter(
      [this](const egraph::Language&, OpId op, AttrId attr) { return describe(op, attr); });
}

OpId IrLanguage::opFor(HloOpcode op) const {
  OpId id = op_for_opcode_[static_cast<size_t>(op)];
  if (!id.valid())
    throw std::logic_error("isel does not model opcode " + std::string(hlo::opcodeName(op)));
  return id;
}

std::optional<HloOpcode> IrLanguage::opcodeOf(OpId op) const {
  return op.value < opcode_.size() ? opcode_[op.value] : std::nullopt;
}

void IrLanguage::remember(AttrId id, Decoded d) {
  if (decoded_.size() <= id.value) decoded_.resize(id.value + 1);
  if (decoded_[id.value].kind == Decoded::kNone) decoded_[id.value] = std::move(d);
}

const IrLanguage::Decoded& IrLanguage::decoded(AttrId id) const {
  if (id.value >= decoded_.size() || decoded_[id.value].kind == Decoded::kNone) {
    throw std::logic_error("isel: attribute was not encoded by this IrLanguage");
  }
  return decoded_[id.value];
}

AttrId IrLanguage::encode(const OpDesc& desc) {
  AttrId id = lang_->attrs().intern(encodeOpBytes(desc));
  if (id.value >= decoded_.size() || decoded_[id.value].kind == Decoded::kNone) {
    egraph::AttrReader r(lang_->attrs().bytes(id));
    r.u8();
    Decoded d;
    d.kind = Decoded::kOp;
    d.op = std::make_unique<OpDesc>(decodeOp(r));  // decoded from bytes: canonical by construction
    remember(id, std::move(d));
  }
  return id;
}

std::optional<AttrId> IrLanguage::findEncoded(const OpDesc& desc) const {
  return lang_->attrs().find(encodeOpBytes(desc));
}

std::optional<AttrId> IrLanguage::findEncoded(const OverlayDesc& desc) const {
  return lang_->attrs().find(encodeOverlayBytes(desc));
}

AttrId IrLanguage::encode(const PiiDesc& desc) {
  AttrId id = lang_->attrs().intern(encodePiiBytes(desc));
  Decoded d;
  d.kind = Decoded::kPii;
  d.pii = std::make_unique<PiiDesc>(desc);
  d.pii->shape.clearLayouts();
  remember(id, std::move(d));
  return id;
}

AttrId IrLanguage::encode(const InputDesc& desc) {
  AttrId id = lang_->attrs().intern(encodeInputBytes(desc));
  Decoded d;
  d.kind = Decoded::kInput;
  d.input = std::make_unique<InputDesc>(desc);
  d.input->shape.clearLayouts();
  d.shape = desc.buffer != 0 ? d.input->shape : hlo::Shape(PrimitiveType::kU8, {desc.bytes});
  remember(id, std::move(d));
  return id;
}

AttrId IrLanguage::encode(const OverlayDesc& desc) {
  AttrId id = lang_->attrs().intern(encodeOverlayBytes(desc));
  Decoded d;
  d.kind = Decoded::kOverlay;
  d.overlay = std::make_unique<OverlayDesc>(desc);
  d.shape = hlo::Shape(PrimitiveType::kU8, {desc.bytes});
  remember(id, std::move(d));
  return id;
}

const OverlayDesc& IrLanguage::overlayDesc(AttrId attr) const {
  const Decoded& d = decoded(attr);
  if (d.kind != Decoded::kOverlay) throw std::logic_error("isel: not an overlay attribute");
  return *d.overlay;
}

const OpDesc& IrLanguage::opDesc(AttrId attr) const {
  const Decoded& d = decoded(attr);
  if (d.kind != Decoded::kOp) throw std::logic_error("isel: not an operator attribute");
  return *d.op;
}

const PiiDesc& IrLanguage::piiDesc(AttrId attr) const {
  const Decoded& d = decoded(attr);
  if (d.kind != Decoded::kPii) throw std::logic_error("isel: not a pii attribute");
  return *d.pii;
}

const InputDesc& IrLanguage::inputDesc(AttrId attr) const {
  const Decoded& d = decoded(attr);
  if (d.kind != Decoded::kInput) throw std::logic_error("isel: not an input attribute");
  return *d.input;
}

const hlo::Shape& IrLanguage::shapeOf(OpId op, AttrId attr) const {
  if (op == pii_op_) return piiDesc(attr).shape;
  if (op == results_op_) {
    static const hlo::Shape kTuple = hlo::Shape::tuple({});
    return kTuple;
  }
  if (op == overlay_op_) return decoded(attr).shape;
  if (op == input_op_) return decoded(attr).shape;
  return opDesc(attr).shape;
}

std::string IrLanguage::describe(OpId op, AttrId attr) const {
  if (op == input_op_) {
    const InputDesc& in = inputDesc(attr);
    if (in.buffer != 0)
      return "param" + std::to_string(in.parameter) + " " + in.shape.str() + " in buffer " +
             std::to_string(in.buffer);
    return "param" + std::to_string(in.parameter) + " u8[" + std::to_string(in.bytes) + "]";
  }
  if (op == results_op_) return "results";
  if (op == undef_op_) return "undef " + opDesc(attr).shape.str();
  if (op == kept_op_) return "kept " + opDesc(attr).shape.str();
  if (op == overlay_op_) {
    const OverlayDesc& o = overlayDesc(attr);
    return "overlay u8[" + std::to_string(o.bytes) + "] at {" +
           joinWith(o.parts, ",", [](const OverlayPart& p) { return std::to_string(p.at); }) + "}";
  }
  if (op == pii_op_) {
    const PiiDesc& p = piiDesc(attr);
    return "unit" + std::to_string(p.unit) + "(" + join(p.alpha, ",") + ")#" +
           std::to_string(p.output) + "@b" + std::to_string(p.buffer) + " " + p.shape.str();
  }
  const OpDesc& d = opDesc(attr);
  std::string out = std::string(hlo::opcodeName(d.opcode)) + " " + d.shape.str();
  if (d.attrs.dimensions) out += " dims={" + join(*d.attrs.dimensions, ",") + "}";
  if (d.attrs.slice) {
    out += " slice={" +
           joinWith(*d.attrs.slice, ",",
                    [](const hlo::SliceDim& s) {
                      return "[" + std::to_string(s.start) + ":" + std::to_string(s.limit) +
                             (s.stride != 1 ? ":" + std::to_string(s.stride) : "") + "]";
                    }) +
           "}";
  }
  if (d.attrs.dot_dims) {
    const hlo::DotDims& dd = *d.attrs.dot_dims;
    out += " lb={" + join(dd.lhs_batch, ",") + "} lc={" + join(dd.lhs_contracting, ",") + "} rb={" +
           join(dd.rhs_batch, ",") + "} rc={" + join(dd.rhs_contracting, ",") + "}";
  }
  if (d.attrs.direction) out += " " + std::string(hlo::comparisonDirectionName(*d.attrs.direction));
  if (d.reducer != Reducer::kNone) out += " " + std::string(reducerName(d.reducer));
  if (d.literal) {
    std::string text = hlo::literalText(*d.literal);
    out += " " + (text.size() > 40 ? text.substr(0, 37) + "..." : text);
  }
  return out;
}

hlo::Shape ShapeAnalysis::make(const egraph::EGraph&, const egraph::ENode& node) {
  return ir_.shapeOf(node.op(), node.attr());
}

egraph::DidMerge ShapeAnalysis::merge(hlo::Shape& into, hlo::Shape from) {
  if (!into.compatible(from)) {
    throw std::logic_error("isel internal error: merging classes of types " + into.str() + " and " +
                           from.str());
  }
  return {false, false};
}

uint8_t ConstAnalysis::make(const egraph::EGraph& g, const egraph::ENode& node) {
  if (node.op() == ir_.inputOp() || node.op() == ir_.undefOp() || node.op() == ir_.keptOp() ||
      node.op() == ir_.overlayOp())
    return false;
  for (ClassId c : node.children()) {
    if (!data(g.find(c))) return false;
  }
  return true;  // constants, iota, and operators over constants
}

egraph::DidMerge ConstAnalysis::merge(uint8_t& into, uint8_t from) {
  uint8_t merged = (into || from) ? 1 : 0;
  egraph::DidMerge d{merged != into, merged != from};
  into = merged;
  return d;
}

}  // namespace tacit::isel
