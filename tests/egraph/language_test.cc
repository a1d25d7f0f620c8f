#include "egraph/language.h"

#include <gtest/gtest.h>

#include "egraph/id_table.h"

namespace tacit::egraph {
namespace {

TEST(Language, RegistersOperators) {
  Language l;
  OpId add = l.addOp("add", 2);
  OpId cat = l.addOp("concat", kVariadic);
  EXPECT_EQ(l.op("add"), add);
  EXPECT_EQ(l.findOp("concat"), cat);
  EXPECT_FALSE(l.findOp("mul").has_value());
  EXPECT_EQ(l.name(cat), "concat");
  EXPECT_EQ(l.arity(add), 2);
  EXPECT_EQ(l.opCount(), 2u);
  EXPECT_THROW(l.addOp("add", 1), EGraphError);   // duplicate
  EXPECT_THROW(l.addOp("", 1), EGraphError);      // empty
  EXPECT_THROW(l.addOp("a b", 1), EGraphError);   // whitespace
  EXPECT_THROW(l.addOp("f(x)", 1), EGraphError);  // parentheses
  EXPECT_THROW(l.addOp("bad", -2), EGraphError);  // arity
  EXPECT_THROW(l.op("mul"), EGraphError);
  EXPECT_THROW(l.info(OpId(9)), EGraphError);
  EXPECT_NO_THROW(l.checkNode(cat, 0));
  EXPECT_NO_THROW(l.checkNode(cat, 7));
  EXPECT_THROW(l.checkNode(add, 3), EGraphError);
}

TEST(AttrTable, InternsByteStringsOnce) {
  AttrTable t;
  EXPECT_EQ(t.intern(""), kNoAttr);
  AttrId x = t.intern("perm:1,0");
  AttrId y = t.intern("perm:0,1");
  EXPECT_NE(x, y);
  EXPECT_EQ(t.intern("perm:1,0"), x);
  EXPECT_EQ(t.bytes(x), "perm:1,0");
  EXPECT_EQ(t.find("perm:0,1"), y);
  EXPECT_FALSE(t.find("perm:2").has_value());
  EXPECT_THROW(t.bytes(AttrId(1000)), EGraphError);
  // Embedded zero bytes and large payloads (own arena chunk) round-trip; views stay valid.
  std::string zeros("a\0b\0", 4);
  AttrId z = t.intern(zeros);
  std::string big(200000, 'q');
  AttrId bg = t.intern(big);
  std::string_view zv = t.bytes(z);
  for (int i = 0; i < 5000; ++i)
    t.intern("filler" + std::to_string(i));
  EXPECT_EQ(zv, zeros);
  EXPECT_EQ(t.bytes(bg), big);
  EXPECT_EQ(t.intern(big), bg);
  EXPECT_EQ(t.size(), 5000u + 5u);
  EXPECT_GT(t.memoryBytes(), big.size());
}

TEST(AttrTable, TypedValues) {
  AttrTable t;
  AttrId dims = t.internInts(std::vector<int64_t>{64, -1, 0});
  EXPECT_EQ(t.intsValue(dims), (std::vector<int64_t>{64, -1, 0}));
  EXPECT_EQ(t.internInts(std::vector<int64_t>{64, -1, 0}), dims);
  AttrId seven = t.internInt(7);
  EXPECT_EQ(t.intValue(seven), 7);
  EXPECT_THROW(t.intValue(dims), EGraphError);  // bytes left over
  EXPECT_THROW(t.intsValue(seven), EGraphError);
  // A structured value: buffer tag + alpha binding.
  AttrId pii = t.intern(AttrWriter().u8(3).str("load_rm").ints(std::vector<int64_t>{64}).bytes());
  AttrReader r(t.bytes(pii));
  EXPECT_EQ(r.u8(), 3);
  EXPECT_EQ(r.str(), "load_rm");
  EXPECT_EQ(r.ints(), (std::vector<int64_t>{64}));
  EXPECT_TRUE(r.atEnd());
  EXPECT_NO_THROW(r.done());
  EXPECT_THROW(r.u8(), EGraphError);
  struct Packed {
    int32_t a, b;
  };
  AttrId raw = t.intern(AttrWriter().raw(Packed{1, 2}).bytes());
  auto p = AttrReader(t.bytes(raw)).raw<Packed>();
  EXPECT_EQ(p.a, 1);
  EXPECT_EQ(p.b, 2);
}

TEST(Language, AttributeTextHooks) {
  Language l;
  OpId num = l.addOp("num", 0);
  EXPECT_EQ(l.formatAttr(num, kNoAttr), "");
  AttrId text = l.parseAttr(num, "abc");  // default: the bytes of the text
  EXPECT_EQ(l.formatAttr(num, text), "abc");
  AttrId bin = l.attrs().intern(std::string("\x01\xff", 2));
  EXPECT_EQ(l.formatAttr(num, bin), "0x01ff");
  l.setAttrParser([](Language& lang, OpId, std::string_view s) {
    return lang.attrs().internInt(std::stoll(std::string(s)));
  });
  l.setAttrFormatter([](const Language& lang, OpId, AttrId a) {
    return "#" + std::to_string(lang.attrs().intValue(a));
  });
  AttrId n = l.parseAttr(num, "42");
  EXPECT_EQ(l.attrs().intValue(n), 42);
  EXPECT_EQ(l.formatAttr(num, n), "#42");
}

TEST(IdTable, InsertFindEraseUnderChurn) {
  // Keys are the ids themselves; a deliberately poor hash forces long probe runs and wrap-around.
  detail::IdTable t;
  auto hash = [](uint32_t id) { return id % 37; };
  std::vector<bool> present(5000, false);
  uint32_t state = 1;
  for (int step = 0; step < 40000; ++step) {
    state = state * 1103515245u + 12345u;
    uint32_t id = (state >> 8) % 5000;
    uint32_t found = t.find(hash(id), [&](uint32_t c) { return c == id; });
    ASSERT_EQ(found != detail::IdTable::kEmpty, present[id]);
    if (present[id]) {
      ASSERT_TRUE(t.erase(hash(id), id));
    } else {
      t.insert(hash(id), id);
    }
    present[id] = !present[id];
  }
  size_t live = 0;
  for (bool p : present)
    live += p ? 1 : 0;
  EXPECT_EQ(t.size(), live);
  size_t seen = 0;
  t.forEach([&](uint32_t id) {
    EXPECT_TRUE(present[id]);
    ++seen;
  });
  EXPECT_EQ(seen, live);
  EXPECT_FALSE(t.erase(hash(4999), 123456));
}

}  // namespace
}  // namespace tacit::egraph
