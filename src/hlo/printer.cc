#include "hlo/printer.h"

#include <algorithm>
#include <bit>
#include <charconv>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "hlo/attributes.h"
#include "hlo/float8.h"
#include "hlo/lexer.h"
#include "support/strings.h"

namespace tacit::hlo {
namespace {

// Raw attributes printed after the called computations, in XLA's order (control-predecessors,
// typed, goes between frontend_attributes and statistics).
constexpr std::string_view kTrailingBeforeControl[] = {"sharding", "frontend_attributes"};
constexpr std::string_view kTrailingAfterControl[] = {"statistics", "result_accuracy", "origin",
                                                      "metadata", "backend_config"};

bool isTrailing(std::string_view name) {
  return std::find(std::begin(kTrailingBeforeControl), std::end(kTrailingBeforeControl), name) !=
             std::end(kTrailingBeforeControl) ||
         std::find(std::begin(kTrailingAfterControl), std::end(kTrailingAfterControl), name) !=
             std::end(kTrailingAfterControl);
}

std::string hexPayload(uint64_t payload) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "(0x%" PRIx64 ")", payload);
  return buf;
}

// NaN text with its payload when it is not the default quiet NaN.
std::string nanText(bool negative, uint64_t mantissa, int mantissa_bits) {
  uint64_t quiet = uint64_t{1} << (mantissa_bits - 1);
  std::string out = negative ? "-nan" : "nan";
  if (mantissa != quiet) out += hexPayload(mantissa);
  return out;
}

// `text` (the shortest form of `value`) made to read back as a float literal of the same value:
// the lexer reads a text of digits alone as a 64-bit integer, so negative zero, which such a text
// would turn into +0 (XLA reads `-0` as the integer 0), prints as "-0.0", and an integral value
// beyond the 64-bit range (f64 2^64 prints as 20 digits) in exponent form.
std::string floatLiteralText(double value, std::string text) {
  bool digits_only = std::all_of(text.begin() + (text[0] == '-' ? 1 : 0), text.end(),
                                 [](char c) { return c >= '0' && c <= '9'; });
  if (!digits_only) return text;
  if (value == 0) return std::signbit(value) ? "-0.0" : text;
  if (std::fabs(value) < 0x1p63) return text;
  char buf[64];
  auto res = std::to_chars(buf, buf + sizeof(buf), value, std::chars_format::scientific);
  return std::string(buf, res.ptr);
}

std::string doubleText(double value) {
  return floatLiteralText(value, formatDouble(value));
}

// The shortest "%.Ng" text that reads back (through `same`) to the value; narrow types print as
// few digits as they hold ("0.1" for bf16 0.1, not its f32 expansion 0.100097656).
template <typename Same>
std::string shortestText(double value, Same same) {
  if (std::isinf(value)) return value < 0 ? "-inf" : "inf";
  if (value == std::trunc(value) && std::fabs(value) < 16777216.0)
    return doubleText(value);  // 448, not 450
  char buf[64];
  for (int digits = 1; digits < 17; ++digits) {
    std::snprintf(buf, sizeof(buf), "%.*g", digits, value);
    double shortest = std::strtod(buf, nullptr);
    if (same(shortest)) return doubleText(shortest);  // "6e-08", "0.1"
  }
  return doubleText(value);
}

template <typename Bits>
std::string floatBitsText(Bits bits, int mantissa_bits, double value, bool is_double) {
  if (std::isnan(value)) {
    Bits mant = static_cast<Bits>(bits & ((Bits{1} << mantissa_bits) - 1));
    bool negative = (bits >> (sizeof(Bits) * 8 - 1)) & 1;
    return nanText(negative, mant, mantissa_bits);
  }
  return floatLiteralText(value,
                          is_double ? formatDouble(value) : formatFloat(static_cast<float>(value)));
}

std::string floatText(PrimitiveType t, const uint8_t* p) {
  switch (t) {
    case PrimitiveType::kF64: {
      uint64_t bits;
      std::memcpy(&bits, p, 8);
      return floatBitsText(bits, 52, std::bit_cast<double>(bits), true);
    }
    case PrimitiveType::kF32: {
      uint32_t bits;
      std::memcpy(&bits, p, 4);
      return floatBitsText(bits, 23, std::bit_cast<float>(bits), false);
    }
    case PrimitiveType::kBF16: {
      uint16_t bits;
      std::memcpy(&bits, p, 2);
      double v = bf16ToF32(bfloat16{bits});
      if (std::isnan(v)) return floatBitsText(bits, 7, v, false);
      return shortestText(v, [&](double d) { return f64ToBf16(d).bits == bits; });
    }
    case PrimitiveType::kF16: {
      uint16_t bits;
      std::memcpy(&bits, p, 2);
      double v = f16ToF32(half{bits});
      if (std::isnan(v)) return floatBitsText(bits, 10, v, false);
      return shortestText(v, [&](double d) { return f64ToF16(d).bits == bits; });
    }
    default: {
      std::optional<MinifloatFormat> f = minifloatFormat(t);
      if (!f) return "?";
      double v = decodeMinifloat(*f, *p);
      if (std::isnan(v)) {
        uint64_t payload = minifloatNanPayload(*f, *p);
        std::string out = std::signbit(v) ? "-nan" : "nan";
        return payload ? out + hexPayload(payload) : out;
      }
      return shortestText(v, [&](double d) {
        uint8_t back = 0;
        return encodeMinifloat(*f, d, 0, &back) == MinifloatStatus::kOk && back == *p;
      });
    }
  }
}

std::string elementText(PrimitiveType t, const uint8_t* p, bool scalar) {
  if (t == PrimitiveType::kPred) return scalar ? (*p ? "true" : "false") : (*p ? "1" : "0");
  if (isInteger(t)) {
    int bytes = byteSize(t);
    uint64_t u = 0;
    std::memcpy(&u, p, static_cast<size_t>(bytes));
    if (isUnsignedInteger(t)) return std::to_string(u);
    int shift = 64 - 8 * bytes;
    auto s = static_cast<int64_t>(u << shift) >> shift;  // sign-extend the stored bytes
    return std::to_string(s);
  }
  if (isComplex(t)) {
    PrimitiveType part = t == PrimitiveType::kC64 ? PrimitiveType::kF32 : PrimitiveType::kF64;
    size_t size = t == PrimitiveType::kC64 ? 4 : 8;
    return "(" + floatText(part, p) + ", " + floatText(part, p + size) + ")";
  }
  return floatText(t, p);
}

void appendDense(const Literal& lit, int64_t dim, int64_t* index, std::string* out) {
  const Shape& s = lit.shape();
  bool innermost = dim + 1 == s.rank() || s.dim(dim) == 0;
  *out += innermost ? "{" : "{ ";
  for (int64_t i = 0; i < s.dim(dim); ++i) {
    if (i) *out += ", ";
    if (innermost) {
      *out += literalElementText(lit, (*index)++);
    } else {
      appendDense(lit, dim + 1, index, out);
    }
  }
  *out += innermost ? "}" : " }";
}

std::string intList(const std::vector<int64_t>& v) {
  return "{" + join(v, ",") + "}";
}

void appendTypedAttributes(const HloAttributes& a, std::vector<std::string>* out) {
  auto add = [&](std::string_view name, const std::string& value) {
    out->push_back(std::string(name) + "=" + value);
  };
  if (a.slice) add("slice", sliceText(*a.slice));
  if (a.dimensions) add("dimensions", intList(*a.dimensions));
  if (a.index) add("index", std::to_string(*a.index));
  if (a.iota_dimension) add("iota_dimension", std::to_string(*a.iota_dimension));
  if (a.dynamic_slice_sizes) add("dynamic_slice_sizes", intList(*a.dynamic_slice_sizes));
  if (a.padding) add("padding", paddingText(*a.padding));
  if (a.window) add("window", windowText(*a.window));
  if (a.conv_dims) add("dim_labels", dimLabelsText(*a.conv_dims));
  if (a.feature_group_count) add("feature_group_count", std::to_string(*a.feature_group_count));
  if (a.batch_group_count) add("batch_group_count", std::to_string(*a.batch_group_count));
  if (a.dot_dims) {
    if (!a.dot_dims->lhs_batch.empty()) add("lhs_batch_dims", intList(a.dot_dims->lhs_batch));
    if (!a.dot_dims->lhs_contracting.empty())
      add("lhs_contracting_dims", intList(a.dot_dims->lhs_contracting));
    if (!a.dot_dims->rhs_batch.empty()) add("rhs_batch_dims", intList(a.dot_dims->rhs_batch));
    if (!a.dot_dims->rhs_contracting.empty())
      add("rhs_contracting_dims", intList(a.dot_dims->rhs_contracting));
  }
  if (a.direction) add("direction", std::string(comparisonDirectionName(*a.direction)));
  if (a.comparison_type) add("type", std::string(comparisonTypeName(*a.comparison_type)));
  if (a.exponent_bits) add("exponent_bits", std::to_string(*a.exponent_bits));
  if (a.mantissa_bits) add("mantissa_bits", std::to_string(*a.mantissa_bits));
  if (a.is_stable) add("is_stable", *a.is_stable ? "true" : "false");
}

void appendRaw(const HloAttributes& a, std::string_view name, std::vector<std::string>* out) {
  for (const RawAttribute& r : a.raw) {
    if (r.name == name) out->push_back(r.name + "=" + r.value);
  }
}

std::string computationRef(const HloComputation* c) {
  return c ? sigilName(c->name()) : "%<null>";
}

// The module name bare when it reads back as a name, else with a sigil.
std::string moduleName(const std::string& name) {
  bool plain = !name.empty() && isIdentStart(name[0]) && !isReservedWord(name) &&
               std::all_of(name.begin(), name.end(), isIdentChar);
  return plain ? name : sigilName(name);
}

}  // namespace

std::string sigilName(const std::string& name) {
  return "%" + name;
}

std::string literalElementText(const Literal& literal, int64_t index) {
  PrimitiveType t = literal.shape().elementType();
  size_t size = static_cast<size_t>(byteSize(t));
  return elementText(t, literal.bytes() + static_cast<size_t>(index) * size,
                     literal.shape().rank() == 0);
}

std::string literalText(const Literal& literal) {
  if (literal.isUnknown()) return "{...}";
  if (literal.isTuple()) {
    return "(" +
           joinWith(literal.elements(), ", ", [](const Literal& e) { return literalText(e); }) +
           ")";
  }
  const Shape& s = literal.shape();
  if (!s.isArray()) return "{}";  // not constructible by the parser; printed for robustness
  if (s.rank() == 0) return literalElementText(literal, 0);
  std::string out;
  int64_t index = 0;
  appendDense(literal, 0, &index, &out);
  return out;
}

std::string sliceText(const std::vector<SliceDim>& slice) {
  return "{" +
         joinWith(slice, ", ",
                  [](const SliceDim& d) {
                    std::string s = "[" + std::to_string(d.start) + ":" + std::to_string(d.limit);
                    if (d.stride != 1) s += ":" + std::to_string(d.stride);
                    return s + "]";
                  }) +
         "}";
}

std::string paddingText(const std::vector<PadDim>& padding) {
  bool interior =
      std::any_of(padding.begin(), padding.end(), [](const PadDim& p) { return p.interior != 0; });
  return joinWith(padding, "x", [&](const PadDim& p) {
    std::string s = std::to_string(p.lo) + "_" + std::to_string(p.hi);
    if (interior) s += "_" + std::to_string(p.interior);
    return s;
  });
}

std::string windowText(const std::vector<WindowDim>& window) {
  if (window.empty()) return "{}";
  auto field = [&](auto get) { return joinWith(window, "x", get); };
  auto any = [&](auto pred) { return std::any_of(window.begin(), window.end(), pred); };
  std::string out = "{size=" + field([](const WindowDim& w) { return w.size; });
  if (any([](const WindowDim& w) { return w.stride != 1; })) {
    out += " stride=" + field([](const WindowDim& w) { return w.stride; });
  }
  if (any([](const WindowDim& w) { return w.pad_lo != 0 || w.pad_hi != 0; })) {
    out += " pad=" + field([](const WindowDim& w) {
             return std::to_string(w.pad_lo) + "_" + std::to_string(w.pad_hi);
           });
  }
  if (any([](const WindowDim& w) { return w.lhs_dilation != 1; })) {
    out += " lhs_dilate=" + field([](const WindowDim& w) { return w.lhs_dilation; });
  }
  if (any([](const WindowDim& w) { return w.rhs_dilation != 1; })) {
    out += " rhs_dilate=" + field([](const WindowDim& w) { return w.rhs_dilation; });
  }
  if (any([](const WindowDim& w) { return w.reversal; })) {
    out += " rhs_reversal=" + field([](const WindowDim& w) { return w.reversal ? 1 : 0; });
  }
  return out + "}";
}

std::string dimLabelsText(const ConvDims& d) {
  auto labels = [](int64_t a_pos, char a, int64_t b_pos, char b,
                   const std::vector<int64_t>& spatial) {
    std::string s(spatial.size() + 2, '?');
    auto put = [&](int64_t pos, char c) {
      if (pos >= 0 && pos < static_cast<int64_t>(s.size())) s[static_cast<size_t>(pos)] = c;
    };
    put(a_pos, a);
    put(b_pos, b);
    for (size_t i = 0; i < spatial.size(); ++i)
      put(spatial[i], static_cast<char>('0' + i % 10));
    return s;
  };
  return labels(d.input_batch, 'b', d.input_feature, 'f', d.input_spatial) + "_" +
         labels(d.kernel_input_feature, 'i', d.kernel_output_feature, 'o', d.kernel_spatial) +
         "->" + labels(d.output_batch, 'b', d.output_feature, 'f', d.output_spatial);
}

std::string printInstruction(const HloInstruction& inst) {
  std::string out;
  if (inst.isRoot()) out += "ROOT ";
  out += sigilName(inst.name()) + " = " + inst.shape().str() + " " + inst.opcodeSpelling() + "(";
  if (inst.opcode() == HloOpcode::kParameter) {
    out += std::to_string(inst.parameterNumber());
  } else if (inst.opcode() == HloOpcode::kConstant && inst.literal()) {
    out += literalText(*inst.literal());
  } else {
    out += joinWith(inst.operands(), ", ",
                    [](const HloInstruction* o) { return sigilName(o->name()); });
  }
  out += ")";
  const HloAttributes& a = inst.attrs();
  std::vector<std::string> attrs;
  appendTypedAttributes(a, &attrs);
  for (const RawAttribute& r : a.raw) {
    if (!isTrailing(r.name)) attrs.push_back(r.name + "=" + r.value);
  }
  for (const CalledComputations& c : a.called) {
    std::string value = c.is_list
                            ? "{" + joinWith(c.computations, ", ", computationRef) + "}"
                            : computationRef(c.computations.empty() ? nullptr : c.computations[0]);
    attrs.push_back(c.attribute + "=" + value);
  }
  for (std::string_view name : kTrailingBeforeControl)
    appendRaw(a, name, &attrs);
  if (!inst.controlPredecessors().empty()) {
    attrs.push_back("control-predecessors={" +
                    joinWith(inst.controlPredecessors(), ", ",
                             [](const HloInstruction* p) { return sigilName(p->name()); }) +
                    "}");
  }
  for (std::string_view name : kTrailingAfterControl)
    appendRaw(a, name, &attrs);
  for (const std::string& s : attrs)
    out += ", " + s;
  return out;
}

std::string printComputation(const HloComputation& c) {
  std::string out;
  if (c.isEntry()) out += "ENTRY ";
  out += sigilName(c.name()) + " (";
  bool first = true;
  for (const HloInstruction* p : c.parameters()) {
    if (!p) continue;
    if (!first) out += ", ";
    first = false;
    out += p->name() + ": " + p->shape().shortStr();
  }
  out += ") -> " + (c.root() ? c.root()->shape().shortStr() : std::string("()")) + " {\n";
  for (const auto& inst : c.instructions())
    out += "  " + printInstruction(*inst) + "\n";
  out += "}";
  if (c.executionThread()) out += ", execution_thread=" + quote(*c.executionThread());
  return out + "\n";
}

std::string printModule(const HloModule& m) {
  std::string out = "HloModule " + moduleName(m.name());
  for (std::string_view name : kModuleHeaderAttributes) {
    if (name == "entry_computation_layout" && m.entryLayout()) {
      const ProgramShape& ps = *m.entryLayout();
      out += ", entry_computation_layout={(" +
             joinWith(ps.parameters, ", ", [](const Shape& s) { return s.str(); }) + ")->" +
             ps.result.str() + "}";
    }
    for (const RawAttribute& r : m.headerAttributes()) {
      if (r.name == name) out += ", " + r.name + "=" + r.value;
    }
  }
  out += "\n";
  for (const auto& c : m.computations())
    out += "\n" + printComputation(*c);
  return out;
}

}  // namespace tacit::hlo
