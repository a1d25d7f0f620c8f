#include "stablehlo/types.h"

#include <cctype>

namespace tacit::stablehlo {

std::optional<hlo::PrimitiveType> elementTypeOf(std::string_view name) {
  using P = hlo::PrimitiveType;
  if (name == "i1") return P::kPred;
  if (name == "complex<f32>") return P::kC64;
  if (name == "complex<f64>") return P::kC128;
  std::string hlo_name;
  if (name.size() > 1 && name[0] == 'i') {
    hlo_name = "s" + std::string(name.substr(1));  // i8 -> s8 (signless integers are signed)
  } else if (name.size() > 2 && name.substr(0, 2) == "ui") {
    hlo_name = "u" + std::string(name.substr(2));
  } else if (name.size() > 2 && name.substr(0, 2) == "si") {
    hlo_name = "s" + std::string(name.substr(2));
  } else if (name == "bf16" || name == "f16" || name == "f32" || name == "f64" ||
             name.substr(0, 2) == "f8" || name.substr(0, 2) == "f4") {
    // MLIR spells the small floats f8E4M3FN; HLO f8e4m3fn.
    for (char c : name)
      hlo_name += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  } else {
    return std::nullopt;
  }
  std::optional<P> t = hlo::parsePrimitiveType(hlo_name);
  if (!t || !hlo::isArrayType(*t) || *t == P::kPred) return std::nullopt;
  return t;
}

std::string elementTypeName(hlo::PrimitiveType t) {
  using P = hlo::PrimitiveType;
  if (t == P::kPred) return "i1";
  if (t == P::kC64) return "complex<f32>";
  if (t == P::kC128) return "complex<f64>";
  std::string name(hlo::primitiveTypeName(t));
  if (hlo::isSignedInteger(t)) return "i" + name.substr(1);
  if (hlo::isUnsignedInteger(t)) return "ui" + name.substr(1);
  if (name.size() > 2 && (name.substr(0, 2) == "f8" || name.substr(0, 2) == "f4")) {
    // f8e4m3fn -> f8E4M3FN: everything after the width is upper case.
    for (size_t i = 2; i < name.size(); ++i)
      name[i] = static_cast<char>(std::toupper(static_cast<unsigned char>(name[i])));
  }
  return name;
}

std::string typeText(const hlo::Shape& shape) {
  if (shape.isToken()) return "!stablehlo.token";
  if (shape.isTuple()) {
    std::string out = "tuple<";
    for (size_t i = 0; i < shape.tupleShapes().size(); ++i) {
      if (i) out += ", ";
      out += typeText(shape.tupleShapes()[i]);
    }
    return out + ">";
  }
  std::string out = "tensor<";
  for (int64_t d : shape.dims())
    out += std::to_string(d) + "x";
  return out + elementTypeName(shape.elementType()) + ">";
}

}  // namespace tacit::stablehlo
