// The opcode table (hlo/opcode.def): spellings, arities and categories agree with what the
// attribute table, the verifier's operand counts and shape inference accept.
#include "hlo/opcode.h"

#include <gtest/gtest.h>

#include <map>
#include <vector>

#include "hlo/attributes.h"
#include "hlo/shape_inference.h"

namespace tacit::hlo {
namespace {

using C = OpcodeCategory;
using P = PrimitiveType;

std::vector<HloOpcode> allOpcodes() {
  std::vector<HloOpcode> out;
  for (size_t i = 0; i + 1 < kOpcodeCount; ++i)
    out.push_back(static_cast<HloOpcode>(i));
  return out;
}

TEST(OpcodeTable, SpellingsAreSortedAndParseBack) {
  std::string_view previous;
  for (HloOpcode op : allOpcodes()) {
    EXPECT_LT(previous, opcodeName(op));
    previous = opcodeName(op);
    EXPECT_EQ(parseOpcode(opcodeName(op)), op) << opcodeName(op);
  }
  EXPECT_EQ(opcodeArity(HloOpcode::kUnknown), kVariadicArity);
  EXPECT_EQ(opcodeCategory(HloOpcode::kUnknown), C::kOther);
}

TEST(OpcodeTable, ArityIsTheOperandCountOfTheAttributeTable) {
  for (HloOpcode op : allOpcodes()) {
    const OpcodeSpec& spec = opcodeSpec(op);
    int arity = opcodeArity(op);
    if (arity == kVariadicArity) {  // a range: attributes.cc gives its bounds
      EXPECT_TRUE(spec.max_operands < 0 || spec.max_operands > spec.min_operands) << opcodeName(op);
    } else {
      EXPECT_EQ(spec.min_operands, arity) << opcodeName(op);
      EXPECT_EQ(spec.max_operands, arity) << opcodeName(op);
    }
  }
}

TEST(OpcodeTable, TranscendentalOpcodesAloneTakeResultAccuracy) {
  for (HloOpcode op : allOpcodes())
    EXPECT_EQ(attributeAllowed(op, "result_accuracy"), isTranscendental(op)) << opcodeName(op);
}

TEST(OpcodeTable, CategoriesAndTheirPredicates) {
  for (HloOpcode op : allOpcodes()) {
    C c = opcodeCategory(op);
    EXPECT_EQ(isElementwiseUnary(op), c == C::kUnary || c == C::kTranscendental) << opcodeName(op);
    EXPECT_EQ(isElementwiseBinary(op), c == C::kBinary) << opcodeName(op);
  }
  // The opcodes the consumers used to classify differently (docs/hlo.md section 4).
  for (HloOpcode op : {HloOpcode::kCopy, HloOpcode::kReal, HloOpcode::kImag, HloOpcode::kIsFinite})
    EXPECT_EQ(opcodeCategory(op), C::kUnary) << opcodeName(op);
  EXPECT_EQ(opcodeCategory(HloOpcode::kStochasticConvert), C::kConversion);
  EXPECT_EQ(opcodeCategory(HloOpcode::kCompare), C::kComparison);
  EXPECT_EQ(opcodeCategory(HloOpcode::kClamp), C::kTernary);
}

// The operand count of each elementwise category, and shape inference accepts exactly that many
// operands (of the first element type whose rules the opcode accepts).
TEST(OpcodeTable, ElementwiseAritiesAreWhatShapeInferenceAccepts) {
  // Operands per elementwise category (the categories not listed are not elementwise).
  const std::map<C, int> kArity = {{C::kUnary, 1},
                                   {C::kTranscendental, 1},
                                   {C::kBinary, 2},
                                   {C::kComparison, 2},
                                   {C::kTernary, 3}};
  int checked = 0;
  for (HloOpcode op : allOpcodes()) {
    auto it = kArity.find(opcodeCategory(op));
    if (it == kArity.end()) continue;
    int want = it->second;
    EXPECT_EQ(opcodeArity(op), want) << opcodeName(op);
    HloAttributes attrs;
    if (op == HloOpcode::kCompare) attrs.direction = ComparisonDirection::kLt;
    auto infer = [&](P t, int count) {
      std::vector<Shape> shapes;
      for (int k = 0; k < count; ++k)
        shapes.emplace_back(k == 0 && op == HloOpcode::kSelect ? P::kPred : t,
                            std::vector<int64_t>{4});
      std::vector<const Shape*> ptrs;
      for (const Shape& s : shapes)
        ptrs.push_back(&s);
      return inferShape(op, ptrs, attrs);
    };
    bool accepted = false;
    for (P t : {P::kF32, P::kS32, P::kPred, P::kC64}) {
      if (!infer(t, want).ok()) continue;
      accepted = true;
      EXPECT_FALSE(infer(t, want + 1).ok()) << opcodeName(op);
      EXPECT_FALSE(infer(t, want - 1).ok()) << opcodeName(op);
      break;
    }
    EXPECT_TRUE(accepted) << opcodeName(op) << " takes " << want << " operands of no type";
    ++checked;
  }
  EXPECT_EQ(checked, 14 + 20 + 16 + 1 + 2);
}

}  // namespace
}  // namespace tacit::hlo
