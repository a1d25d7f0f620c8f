#include "isel/ir.h"

#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>

#include "common/paths.h"
#include "hlo/parser.h"
#include "isel/ir_builder.h"
#include "isel/kernel.h"
#include "support/diagnostic.h"
#include "support/source.h"

namespace tacit::isel {
namespace {

struct Fixture {
  IrLanguage ir;
  egraph::EGraph g{ir.language()};
  ShapeAnalysis& shapes = g.addAnalysis<ShapeAnalysis>(ir);
  ConstAnalysis& consts = g.addAnalysis<ConstAnalysis>(ir);
  IrBuilder b{g, ir, shapes};
};

std::unique_ptr<hlo::HloModule> parse(const std::string& text) {
  return hlo::parseModule(text, "k.hlo");
}

TEST(IrLanguage, AttributesRoundTripAndIdentifyNodes) {
  Fixture f;
  OpDesc d;
  d.opcode = hlo::HloOpcode::kSlice;
  d.shape = hlo::Shape(hlo::PrimitiveType::kF32, {2, 3});
  d.attrs.slice = std::vector<hlo::SliceDim>{{0, 4, 2}, {1, 4, 1}};
  AttrId a = f.ir.encode(d);
  AttrId b = f.ir.encode(d);
  EXPECT_EQ(a, b);
  const OpDesc& back = f.ir.opDesc(a);
  EXPECT_EQ(back.opcode, hlo::HloOpcode::kSlice);
  EXPECT_EQ(back.shape, d.shape);
  EXPECT_EQ(*back.attrs.slice, *d.attrs.slice);
  d.attrs.slice = std::vector<hlo::SliceDim>{{0, 4, 2}, {1, 4, 2}};
  EXPECT_NE(f.ir.encode(d), a);  // every attribute is part of the identity
}

TEST(IrBuilder, InfersTypesAndRejectsIllTypedNodes) {
  Fixture f;
  hlo::Literal lit(hlo::Shape(hlo::PrimitiveType::kF32, {2, 3}));
  ClassId c = f.b.constant(lit);
  ClassId t = f.b.transpose(c, {1, 0});
  f.g.rebuild();
  EXPECT_EQ(f.shapes.data(t), hlo::Shape(hlo::PrimitiveType::kF32, {3, 2}));
  EXPECT_TRUE(f.consts.data(t));
  EXPECT_THROW(f.b.reshape(c, {7}), std::logic_error);
}

TEST(IrBuilder, FlattenIsInverseOfUnflattenStructurally) {
  Fixture f;
  ClassId bytes = f.g.add(f.ir.inputOp(), f.ir.encode(InputDesc{0, 8192, 0, {}}));
  ClassId x = f.b.unflatten(bytes, hlo::Shape(hlo::PrimitiveType::kBF16, {64, 64}));
  f.g.rebuild();
  EXPECT_EQ(f.shapes.data(x), hlo::Shape(hlo::PrimitiveType::kBF16, {64, 64}));
  EXPECT_FALSE(f.consts.data(x));
  ClassId back = f.b.flatten(x);
  f.g.rebuild();
  EXPECT_EQ(f.shapes.data(back), hlo::Shape(hlo::PrimitiveType::kU8, {8192}));
}

TEST(KernelImport, LaysOutInputsThenResultsInHbm) {
  Fixture f;
  auto m = parse(R"(
HloModule k
ENTRY main {
  a = bf16[64,64] parameter(0)
  b = s8[16] parameter(1)
  c = bf16[64,64] exponential(a)
  ROOT t = (bf16[64,64], s8[16]) tuple(c, b)
})");
  ImportedKernel k = importKernel(*m, f.b);
  ASSERT_EQ(k.parameters.size(), 2u);
  EXPECT_EQ(k.parameters[0].hbm_offset, 0);
  EXPECT_EQ(k.parameters[1].hbm_offset, 8192);
  ASSERT_EQ(k.results.size(), 2u);
  EXPECT_EQ(k.results[0].hbm_offset, 8192 + 16);
  EXPECT_EQ(k.results[1].hbm_offset, 8192 + 16 + 8192);
  EXPECT_EQ(k.io_bytes, 8192 + 16 + 8192 + 16);
  f.g.rebuild();
  // The second result is the second input, unchanged: same class.
  EXPECT_TRUE(f.g.same(k.results[1].value_class, k.parameters[1].value_class));
}

// HLO lets a scalar's broadcast leave out its (empty) dimensions; the IR's rules and views read
// them on every broadcast, so the import writes them (a coverage run over the shared corpus read
// the absent ones through a null optional and crashed).
TEST(KernelImport, AScalarBroadcastWithoutDimensionsGetsEmptyOnes) {
  Fixture f;
  auto m = parse(R"(
HloModule k
ENTRY main {
  c = f32[] constant(0.5)
  ROOT b = f32[16,16] broadcast(c)
})");
  ImportedKernel k = importKernel(*m, f.b);
  f.g.rebuild();
  bool found = false;
  for (NodeId n : f.g.nodes(f.g.find(k.results[0].value_class))) {
    egraph::ENode e = f.g.node(n);
    if (f.ir.opcodeOf(e.op()) != hlo::HloOpcode::kBroadcast) continue;
    ASSERT_TRUE(f.ir.opDesc(e.attr()).attrs.dimensions.has_value());
    EXPECT_TRUE(f.ir.opDesc(e.attr()).attrs.dimensions->empty());
    found = true;
  }
  EXPECT_TRUE(found);
}

TEST(KernelImport, TiledLayoutIsReshapeAndTranspose) {
  Fixture f;
  auto m = parse(R"(
HloModule k, entry_computation_layout={(s32[32,32]{1,0:T(16,16)})->s32[32,32]{1,0}}
ENTRY main {
  ROOT a = s32[32,32] parameter(0)
})");
  ImportedKernel k = importKernel(*m, f.b);
  f.g.rebuild();
  // The logical value is transpose(reshape(bitcast(reshape(bytes)))) with the tile order (0,2,1,3).
  bool found = false;
  for (NodeId n : f.g.nodes(f.g.find(k.parameters[0].value_class))) {
    egraph::ENode e = f.g.node(n);
    if (f.ir.opcodeOf(e.op()) == hlo::HloOpcode::kReshape) {
      for (NodeId m2 : f.g.nodes(f.g.find(e.child(0)))) {
        egraph::ENode t = f.g.node(m2);
        if (f.ir.opcodeOf(t.op()) == hlo::HloOpcode::kTranspose) {
          EXPECT_EQ(*f.ir.opDesc(t.attr()).attrs.dimensions, (std::vector<int64_t>{0, 2, 1, 3}));
          found = true;
        }
      }
    }
  }
  EXPECT_TRUE(found);
}

// physicalOffset (the byte a tiled compile moves a window by) agrees with toPhysical, the
// verifier's rearrangement, element by element: a transposed and a tiled layout.
TEST(KernelImport, PhysicalOffsetIsWhereToPhysicalPutsTheElement) {
  for (const char* text :
       {"s32[8,12]{0,1}", "s8[32,8]{1,0:T(16,4)}", "s16[3,16,8]{2,1,0:T(8,8)}"}) {
    SCOPED_TRACE(text);
    const hlo::Shape shape = hlo::parseShape(text);
    hlo::Literal logical(hlo::Shape(shape.elementType(), shape.dims()));
    const size_t width = static_cast<size_t>(hlo::byteSize(shape.elementType()));
    for (size_t i = 0; i < logical.byteCount(); ++i)
      logical.bytes()[i] = static_cast<uint8_t>((i / width) >> (8 * (i % width)));  // its index
    const hlo::Literal physical = toPhysical(logical, shape);
    std::vector<int64_t> index(static_cast<size_t>(shape.rank()), 0);
    for (int64_t e = 0; e < shape.elementCount(); ++e) {
      const int64_t at = physicalOffset(shape, index);
      ASSERT_EQ(std::memcmp(physical.bytes() + at, logical.bytes() + static_cast<size_t>(e) * width,
                            width),
                0)
          << "element " << e;
      for (size_t d = index.size(); d-- > 0;) {
        if (++index[d] < shape.dim(static_cast<int64_t>(d))) break;
        index[d] = 0;
      }
    }
  }
}

TEST(KernelImport, RejectsUnsupportedOpsWithPosition) {
  Fixture f;
  auto m = parse(
      "HloModule k\nadd {\n  x = f32[] parameter(0)\n  y = f32[] parameter(1)\n  ROOT s = f32[] "
      "add(x, y)\n}\n"
      "ENTRY main {\n  a = f32[4] parameter(0)\n  z = f32[] constant(0)\n"
      "  ROOT r = f32[2] reduce-window(a, z), window={size=2 stride=2}, to_apply=add\n}");
  try {
    importKernel(*m, f.b);
    FAIL() << "expected a diagnostic";
  } catch (const DiagnosticError& e) {
    EXPECT_EQ(e.diagnostic().loc.line, 10u);
    EXPECT_NE(std::string(e.what()).find("reduce-window"), std::string::npos) << e.what();
  }
}

TEST(KernelImport, EveryShippedExampleImports) {
  for (const auto& entry :
       std::filesystem::recursive_directory_iterator(testing::sourceDir() + "/examples")) {
    if (entry.path().extension() != ".hlo") continue;
    // Whole modules for `tacit run-module` (docs/backend.md, "Module execution"): the partition
    // splits them and lowers their convolutions before any kernel is imported.
    if (entry.path().parent_path().filename() == "modules") continue;
    SCOPED_TRACE(entry.path().string());
    Fixture f;
    auto m = hlo::parseModule(readFile(entry.path().string()), entry.path().string());
    ImportedKernel k = importKernel(*m, f.b);
    f.g.rebuild();
    EXPECT_FALSE(k.results.empty());
    EXPECT_GT(f.g.classCount(), 3u);
  }
}

}  // namespace
}  // namespace tacit::isel
