// Pitched moves (issue 7, acceptance 3): loads whose pad/slice chain is a strided view of their
// input, and results written block by block by read-modify-write stores (an `overlay`). Every
// instruction the matcher adds for them is checked against the kernel: its unit's semantics at its
// α (taidl::instantiate), evaluated on its operands' values, must equal the value of the class it
// joined, bit for bit — and an overlay of writes, each starting from random old content (the
// region's bytes before the writes do not matter), must equal the result it stands for.
#include <gtest/gtest.h>

#include <chrono>
#include <map>
#include <optional>
#include <random>
#include <set>

#include "common/paths.h"
#include "egraph/enumerate.h"
#include "hlo/parser.h"
#include "hlo_eval/random_literal.h"
#include "isel/selector.h"
#include "isel/storage.h"
#include "support/source.h"
#include "taidl/isa.h"
#include "taidl/symbolic.h"
#include "term_eval.h"

namespace tacit::isel {
namespace {

struct Compiled {
  taidl::Isa isa;
  std::unique_ptr<hlo::HloModule> kernel;
  std::unique_ptr<Target> target;
  std::unique_ptr<Selector> sel;
  std::vector<hlo::Literal> bytes;  // the inputs' HBM bytes
  std::map<uint32_t, std::optional<egraph::Term>> terms;
};

Compiled saturated(const std::string& isa_path, const std::string& hlo_text, uint64_t seed) {
  Compiled c{taidl::loadIsaFile(tacit::testing::sourceDir() + "/" + isa_path),
             hlo::parseModule(hlo_text, "kernel.hlo"),
             nullptr,
             nullptr,
             {},
             {}};
  // The product's 10 s limit is for users; the 64^3 matmul saturates in seconds optimised but
  // can take longer in the sanitizer build on a loaded machine, and a cut-off e-graph is not what
  // these tests check.
  c.target = std::make_unique<Target>(c.isa);
  c.sel = std::make_unique<Selector>(*c.target, *c.kernel);
  c.sel->saturate();  // no deadline
  for (const KernelParameter& p : c.sel->kernel().parameters)
    c.bytes.push_back(testing::hbmBytes(hlo::randomLiteral(p.shape, seed++), p.shape));
  return c;
}

// The value of class `c` from a term of HLO operators over the kernel's inputs, if it has one
// (terms are found once per class: enumerating is the slow part).
std::optional<hlo::Literal> classValue(Compiled& c, ClassId cls) {
  const IrLanguage& ir = c.sel->ir();
  cls = c.sel->egraph().find(cls);
  auto [it, fresh] = c.terms.try_emplace(cls.value);
  if (fresh) {
    egraph::EnumOptions o;
    o.max_size = 64;
    o.max_steps = 200'000;
    o.allowed = [&ir](const egraph::EGraph& g, NodeId n, egraph::Context) {
      egraph::OpId op = g.node(n).op();
      return ir.isHloOp(op) || op == ir.inputOp();
    };
    egraph::Enumerator en(c.sel->egraph(), cls, o);
    egraph::Term t;
    if (en.next(t)) it->second = std::move(t);
  }
  if (!it->second) return std::nullopt;
  return testing::evaluateTerm(ir, *it->second, c.bytes);
}

// Output `output` of a unit's semantics at α on the given operand values.
hlo::Literal runUnit(const Compiled& c, const PiiDesc& pii, std::span<const hlo::Literal> args) {
  const Unit& u = c.sel->units().units[static_cast<size_t>(pii.unit)];
  std::vector<int64_t> attrs = pii.alpha;
  attrs.resize(static_cast<size_t>(u.num_attrs), 0);
  auto module =
      taidl::instantiate(c.isa, u.semantics->cases[static_cast<size_t>(pii.case_index)], attrs);
  hlo::Literal all = hlo::evaluate(*module, args);
  return all.elements().at(static_cast<size_t>(pii.output));
}

// A pitched load reads a byte range of a kernel input: its class's value must be its semantics.
size_t checkPitchedLoads(Compiled& c, const std::string& unit_prefix = "mvin") {
  const egraph::EGraph& g = c.sel->egraph();
  const IrLanguage& ir = c.sel->ir();
  size_t checked = 0;
  for (ClassId cls : g.classes()) {
    for (NodeId n : g.nodes(cls)) {
      egraph::ENode e = g.node(n);
      if (e.op() != ir.piiOp() || e.arity() != 1) continue;
      const PiiDesc& pii = ir.piiDesc(e.attr());
      const Unit& u = c.sel->units().units[static_cast<size_t>(pii.unit)];
      if (u.is_macro || u.name.rfind(unit_prefix, 0) != 0 || pii.alpha.size() < 2 ||
          pii.alpha[1] == pii.alpha[0] * 16)
        continue;  // only the pitched ones (stride != tiles * DIM)
      std::optional<hlo::Literal> in = classValue(c, e.child(0));
      std::optional<hlo::Literal> out = classValue(c, cls);
      if (!in || !out) continue;
      hlo::Literal got = runUnit(c, pii, std::span<const hlo::Literal>(&*in, 1));
      EXPECT_TRUE(got.bitwiseEqual(*out)) << u.name << " α " << pii.alpha[0] << "," << pii.alpha[1];
      ++checked;
    }
  }
  return checked;
}

// Evaluates an overlay: each writer's unit runs on its operands with random old content, and its
// block lands at its offset.
hlo::Literal runOverlay(Compiled& c, NodeId overlay, uint64_t seed) {
  const egraph::EGraph& g = c.sel->egraph();
  const IrLanguage& ir = c.sel->ir();
  egraph::ENode e = g.node(overlay);
  const OverlayDesc& desc = ir.overlayDesc(e.attr());
  hlo::Literal region(hlo::Shape(hlo::PrimitiveType::kU8, {desc.bytes}));
  for (size_t i = 0; i < desc.parts.size(); ++i) {
    ClassId w = g.find(e.child(i));
    NodeId call = g.nodes(w).front();
    egraph::ENode we = g.node(call);
    std::vector<hlo::Literal> args;
    for (ClassId operand : we.children()) {
      std::optional<hlo::Literal> v = classValue(c, operand);
      args.push_back(v ? std::move(*v) : hlo::randomLiteral(c.sel->shapes().data(operand), seed++));
    }
    hlo::Literal written = runUnit(c, ir.piiDesc(we.attr()), args);
    const OverlayPart& part = desc.parts[i];
    std::vector<int64_t> idx(part.block.dims.size(), 0);
    for (int64_t k = 0; k < part.block.byteCount(); ++k) {
      int64_t p = part.block.offset;
      for (size_t d = 0; d < idx.size(); ++d)
        p += idx[d] * part.block.dims[d].stride;
      region.bytes()[part.at + p] = written.bytes()[p];
      for (size_t d = idx.size(); d-- > 0;) {
        if (++idx[d] < part.block.dims[d].extent) break;
        idx[d] = 0;
      }
    }
  }
  return region;
}

size_t checkOverlays(Compiled& c) {
  const egraph::EGraph& g = c.sel->egraph();
  const IrLanguage& ir = c.sel->ir();
  size_t checked = 0;
  for (ClassId cls : g.classes()) {
    for (NodeId n : g.nodes(cls)) {
      if (g.node(n).op() != ir.overlayOp()) continue;
      std::optional<hlo::Literal> want = classValue(c, cls);
      if (!want) continue;
      for (uint64_t seed : {7u, 8u}) {
        hlo::Literal got = runOverlay(c, n, seed * 1000);
        EXPECT_TRUE(got.bitwiseEqual(*want)) << "overlay of " << g.node(n).arity() << " writes";
      }
      ++checked;
    }
  }
  return checked;
}

std::string example(const std::string& rel) {
  return readFile(tacit::testing::sourceDir() + "/" + rel);
}

TEST(PitchedMoves, GemminiMatmul64LoadsAndWritesComputeTheirClasses) {
  Compiled c = saturated("isa/gemmini.taidl", example("examples/gemmini/matmul_64x64x64.hlo"), 1);
  for (uint64_t seed : {1u, 2u}) {
    c.bytes.clear();  // another random input set on the same e-graph
    for (const KernelParameter& p : c.sel->kernel().parameters)
      c.bytes.push_back(
          testing::hbmBytes(hlo::randomLiteral(p.shape, seed * 10 + c.bytes.size()), p.shape));
    EXPECT_GE(checkPitchedLoads(c), 32u);  // a 16x16 block of A and of B, 16 each
    EXPECT_GE(checkOverlays(c), 1u);
  }
}

// The first candidate writes the result as an overlay of 16 pitched stores: each store is placed
// inside the result's region at its block's offset (one alias group), and each store's old
// content is an undefined region of its own (it is rewritten in place).
TEST(PitchedMoves, ResultOverlayIsOneAliasGroupWithItsOwnOldContents) {
  Compiled c = saturated("isa/gemmini.taidl", example("examples/gemmini/matmul_64x64x64.hlo"), 1);
  std::optional<PiiGraph> g = c.sel->extractor({})->next();
  ASSERT_TRUE(g);
  ASSERT_EQ(g->results.size(), 1u);
  int32_t result = g->results[0];
  const PiiNode& overlay =
      g->nodes[static_cast<size_t>(g->values[static_cast<size_t>(result)].producer)];
  ASSERT_EQ(overlay.kind, PiiKind::kOverlayView) << g->str(c.isa, c.sel->units());
  ASSERT_EQ(overlay.operands.size(), 16u);
  Storage st = buildStorage(c.isa, *g);
  ASSERT_TRUE(st.conflict.empty()) << st.conflict;
  std::set<int32_t> old_contents;
  for (size_t i = 0; i < overlay.operands.size(); ++i) {
    int32_t w = overlay.operands[i];
    EXPECT_EQ(st.root[static_cast<size_t>(w)], st.root[static_cast<size_t>(result)]);
    EXPECT_EQ(st.offset[static_cast<size_t>(w)][0],
              st.offset[static_cast<size_t>(result)][0] + overlay.part_offsets[i]);
    const PiiNode& store =
        g->nodes[static_cast<size_t>(g->values[static_cast<size_t>(w)].producer)];
    ASSERT_EQ(store.kind, PiiKind::kCall);
    for (int32_t operand : store.operands) {
      const PiiNode& p =
          g->nodes[static_cast<size_t>(g->values[static_cast<size_t>(operand)].producer)];
      if (p.kind == PiiKind::kUndef) old_contents.insert(operand);
    }
  }
  EXPECT_EQ(old_contents.size(), 16u);  // one undefined region per store, none shared
}

// int32 blocks of a row-major s32[32,32] (pitch 128 bytes) load into the accumulator with the
// pitched mvin_acc_stride, whose third α (repeating_bias) only the case fixes.
TEST(PitchedMoves, Int32BlocksLoadIntoTheAccumulator) {
  const char* text =
      R"(HloModule k, entry_computation_layout={(s8[32,32], s8[32,32], s32[32,32])->s8[32,32]}
ENTRY main {
  a = s8[32,32] parameter(0)
  b = s8[32,32] parameter(1)
  d = s32[32,32] parameter(2)
  lo = s32[] constant(-128)
  hi = s32[] constant(127)
  wa = s32[32,32] convert(a)
  wb = s32[32,32] convert(b)
  p = s32[32,32] dot(wa, wb), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  s = s32[32,32] add(p, d)
  c = s32[32,32] clamp(lo, s, hi)
  ROOT r = s8[32,32] convert(c)
})";
  Compiled c = saturated("isa/gemmini.taidl", text, 9);
  EXPECT_GE(checkPitchedLoads(c, "mvin_acc_stride"), 4u);
}

// Column blocks of a wide matrix: the pitch is 48 bytes and the blocks are not 16-aligned in HBM
// for the second input (it starts after the first); the result is two 16x16 blocks at pitch 32.
TEST(PitchedMoves, ColumnBlocksOfNonSquareMatrices) {
  const char* text = R"(HloModule k, entry_computation_layout={(s8[16,48], s8[48,32])->s8[16,32]}
ENTRY main {
  a = s8[16,48] parameter(0)
  b = s8[48,32] parameter(1)
  lo = s32[] constant(-128)
  hi = s32[] constant(127)
  wa = s32[16,48] convert(a)
  wb = s32[48,32] convert(b)
  d = s32[16,32] dot(wa, wb), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  c = s32[16,32] clamp(lo, d, hi)
  ROOT r = s8[16,32] convert(c)
})";
  Compiled c = saturated("isa/gemmini.taidl", text, 5);
  EXPECT_GE(checkPitchedLoads(c), 3u);
  EXPECT_GE(checkOverlays(c), 1u);
}

}  // namespace
}  // namespace tacit::isel
