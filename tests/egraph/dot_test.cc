#include "egraph/dot.h"

#include <gtest/gtest.h>

#include "egraph/test_util.h"

namespace tacit::egraph {
namespace {

using testing::TestLang;

size_t count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t pos = text.find(what); pos != std::string::npos; pos = text.find(what, pos + 1))
    ++n;
  return n;
}

class DotTest : public ::testing::Test {
 protected:
  TestLang L;
  EGraph g{L.lang};
  ClassId a = g.add(L.a, {});
  ClassId b = g.add(L.b, {});
  ClassId ua = g.add(L.u, {a});
  ClassId fab = g.add(L.f, L.ints[2], {ua, b});
  ClassId top = g.add(L.g, {fab, fab});
};

TEST_F(DotTest, WholeGraphHasAClusterPerClassAndAnEdgePerChild) {
  g.unite(a, b);
  g.rebuild();
  std::string dot = toDot(g);
  EXPECT_EQ(dot.rfind("digraph egraph {", 0), 0u);
  EXPECT_EQ(count(dot, "subgraph cluster_"), g.classCount());
  EXPECT_EQ(count(dot, "[label=\"a\"]") + count(dot, "[label=\"b\"]"), 2u);
  EXPECT_EQ(count(dot, "[label=\"f[2]\"]"), 1u);  // the attribute is shown
  EXPECT_EQ(count(dot, " -> "), 1u + 2u + 2u);    // u: 1, f: 2, g: 2
  EXPECT_EQ(count(dot, "lhead=cluster_"), 5u);
  EXPECT_EQ(count(dot, "label=0") + count(dot, "label=1"), 4u);  // child indices on f and g
  EXPECT_EQ(count(dot, "outside_"), 0u);
  EXPECT_EQ(dot.back(), '\n');
}

TEST_F(DotTest, NeighbourhoodIsDepthLimited) {
  g.rebuild();
  DotOptions o;
  o.roots = {fab};
  o.depth = 0;
  std::string only = toDot(g, o);
  EXPECT_EQ(count(only, "subgraph cluster_"), 1u);
  EXPECT_EQ(count(only, "outside_" + std::to_string(g.find(ua).value) + " [label="), 1u);
  EXPECT_EQ(count(only, "style=dashed"), 4u);  // two edges and two boundary boxes
  o.depth = 1;
  std::string near = toDot(g, o);
  EXPECT_EQ(count(near, "subgraph cluster_"), 4u);  // fab, its children ua and b, its user top
  o.follow_parents = false;
  EXPECT_EQ(count(toDot(g, o), "subgraph cluster_"), 3u);
  o.depth = 5;
  EXPECT_EQ(count(toDot(g, o), "subgraph cluster_"), 4u);  // fab, ua, b, a
}

TEST_F(DotTest, ClientLabelsAndTruncation) {
  g.rebuild();
  DotOptions o;
  o.node_label = [](const EGraph&, NodeId n) { return "node \"" + std::to_string(n.value) + "\""; };
  o.class_label = [](const EGraph&, ClassId c) { return "class " + std::to_string(c.value); };
  o.max_classes = 2;
  std::string dot = toDot(g, o);
  EXPECT_NE(dot.find("// truncated to 2 classes"), std::string::npos);
  EXPECT_EQ(count(dot, "subgraph cluster_"), 2u);
  EXPECT_NE(dot.find("label=\"node \\\"0\\\"\""), std::string::npos);  // quotes are escaped
  EXPECT_NE(dot.find("label=\"class 0\""), std::string::npos);
}

TEST_F(DotTest, NeedsACleanGraph) {
  EXPECT_THROW(toDot(g), EGraphError);
}

}  // namespace
}  // namespace tacit::egraph
