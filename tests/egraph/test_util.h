// Shared helpers for the e-graph tests: a small test language and random e-graph construction.
#pragma once

#include <cstdint>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "egraph/all.h"

namespace tacit::egraph::testing {

// Leaves a, b, c; k[int] (a leaf with an integer attribute); unary u; binary f (optionally with an
// integer attribute) and g; ternary t; variadic v.
struct TestLang {
  std::shared_ptr<Language> lang = std::make_shared<Language>();
  OpId a, b, c, k, u, f, g, t, v;
  std::vector<AttrId> ints;  // interned 0..3

  TestLang() {
    a = lang->addOp("a", 0);
    b = lang->addOp("b", 0);
    c = lang->addOp("c", 0);
    k = lang->addOp("k", 0);
    u = lang->addOp("u", 1);
    f = lang->addOp("f", 2);
    g = lang->addOp("g", 2);
    t = lang->addOp("t", 3);
    v = lang->addOp("v", kVariadic);
    for (int64_t i = 0; i < 4; ++i)
      ints.push_back(lang->attrs().internInt(i));
    lang->setAttrFormatter(
        [](const Language& l, OpId, AttrId id) { return std::to_string(l.attrs().intValue(id)); });
    lang->setAttrParser([](Language& l, OpId, std::string_view text) {
      return l.attrs().internInt(std::stoll(std::string(text)));
    });
  }
};

// One recorded add: the op, attribute and the indices of earlier terms used as children.
struct TermSpec {
  OpId op;
  AttrId attr = kNoAttr;
  std::vector<uint32_t> children;
};

// Builds random terms into g; returns their specs and the class each add returned.
struct RandomBuild {
  std::vector<TermSpec> specs;
  std::vector<ClassId> classes;
};

inline TermSpec randomSpec(const TestLang& L, std::mt19937& rng, size_t existing) {
  TermSpec s;
  std::uniform_int_distribution<int> pick(0, 9);
  int r = existing == 0 ? 0 : pick(rng);
  auto child = [&] {
    // Prefer recent terms so that terms get deep, but reuse old ones too.
    std::uniform_int_distribution<size_t> any(0, existing - 1);
    size_t x = any(rng);
    if (rng() % 2 && existing > 8) x = existing - 1 - (rng() % 8);
    return static_cast<uint32_t>(x);
  };
  std::uniform_int_distribution<size_t> small(0, 3);
  switch (r) {
    case 0: {
      OpId leaves[] = {L.a, L.b, L.c, L.k};
      s.op = leaves[small(rng)];
      s.attr = s.op == L.k ? L.ints[small(rng)] : kNoAttr;
      return s;
    }
    case 1:
    case 2:
      s.op = L.u;
      break;
    case 3:
    case 4:
    case 5:
      s.op = L.f;
      s.attr = rng() % 3 == 0 ? L.ints[small(rng) % 2] : kNoAttr;
      break;
    case 6:
    case 7:
      s.op = L.g;
      break;
    case 8:
      s.op = L.t;
      break;
    default:
      s.op = L.v;
      break;
  }
  int arity = L.lang->arity(s.op);
  if (arity == kVariadic) arity = static_cast<int>(rng() % 4);
  for (int i = 0; i < arity; ++i)
    s.children.push_back(child());
  return s;
}

inline ClassId addSpec(EGraph& g, const TermSpec& s, const std::vector<ClassId>& classes) {
  std::vector<ClassId> kids;
  for (uint32_t c : s.children)
    kids.push_back(classes[c]);
  return g.add(s.op, s.attr, kids);
}

// n random terms, then `unions` random unions, then rebuild.
inline RandomBuild buildRandom(EGraph& g, const TestLang& L, uint32_t seed, size_t n,
                               size_t unions) {
  std::mt19937 rng(seed);
  RandomBuild rb;
  for (size_t i = 0; i < n; ++i) {
    rb.specs.push_back(randomSpec(L, rng, rb.specs.size()));
    rb.classes.push_back(addSpec(g, rb.specs.back(), rb.classes));
  }
  for (size_t i = 0; i < unions; ++i)
    g.unite(rb.classes[rng() % n], rb.classes[rng() % n]);
  g.rebuild();
  return rb;
}

}  // namespace tacit::egraph::testing
