// Rewrite rules: a searcher (a pattern), optional conditions, and an applier (a right-hand-side
// pattern or a callback that computes the right-hand side).
//
//   Rewrite comm = Rewrite::parse(lang, "comm-add", "(+ ?a ?b)", "(+ ?b ?a)");
//   Rewrite tt("transpose-transpose", Pattern::parse(lang, "(transpose[?p] (transpose[?q] ?x))"),
//              [p, q, x](EGraph& g, ClassId, const Subst& s) -> std::optional<ClassId> {
//                AttrId composed = ...;        // from s[p], s[q]
//                return g.add(transpose, composed, {s[x]});
//              });
//   tt.when([](const EGraph& g, ClassId c, const Subst& s) { return ...; });
//
// Applying a match: every condition must hold; then the applier yields a class (or declines with
// std::nullopt, e.g. a precondition it checked failed), which is united with the matched class.
// Appliers may add nodes and unite classes themselves; they run on an e-graph that is not
// rebuilt (the Runner rebuilds after applying a whole batch, like egg).
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "egraph/egraph.h"
#include "egraph/pattern.h"

namespace tacit::egraph {

using Condition = std::function<bool(const EGraph& g, ClassId matched, const Subst& s)>;

// What an applier reads of the e-graph besides its match. A driver that runs one iteration at a
// time finds the same matches again and again; AppliedMatches (runner.h) skips those whose
// application can change nothing, which only the applier's reads decide.
enum class ApplierReads : uint8_t {
  kAnything,  // anything (e.g. value ranges): applied every time it matches
  // Only the matched class, the substitution and analysis data that merging never changes (a
  // class's type): the same match builds the same nodes and unions again.
  kMatch,
  // Also the e-nodes of the substitution's classes (whether an operand is a concatenation).
  kSubstNodes,
};
using Applier = std::function<std::optional<ClassId>(EGraph& g, ClassId matched, const Subst& s)>;

class Rewrite {
 public:
  // lhs => rhs. Every variable of rhs (class and attribute) must occur in lhs, and rhs may not
  // contain wildcard attributes; otherwise EGraphError.
  Rewrite(std::string name, Pattern lhs, Pattern rhs);
  // lhs => the class the callback returns.
  Rewrite(std::string name, Pattern lhs, Applier apply);
  static Rewrite parse(Language& lang, std::string name, std::string_view lhs, std::string_view rhs,
                       const ParseOptions& opts = {});

  // Adds a condition; all conditions must hold for a match to be applied.
  Rewrite& when(Condition c);
  // Declares what the applier reads: a right-hand-side pattern reads only its match, a callback
  // anything unless declared. Conditions are part of the applier: when() resets it to kAnything.
  Rewrite& reads(ApplierReads r);
  ApplierReads reads() const { return reads_; }

  const std::string& name() const { return name_; }
  const Pattern& lhs() const { return lhs_; }
  const std::optional<Pattern>& rhs() const { return rhs_; }

  SearchStatus search(const EGraph& g, Matches& out, const SearchBudget& budget = {}) const {
    return lhs_.search(g, out, budget);
  }
  // Applies one match (conditions, applier, union). True if the e-graph changed.
  bool apply(EGraph& g, ClassId matched, const Subst& s) const;
  // Cache hints for a coming apply() of this match (see Pattern::prefetch); callback appliers get
  // only the stage-0 hint for the matched class and the substitution.
  void prefetch(const EGraph& g, ClassId matched, const Subst& s, int stage) const;
  // Applies every match; returns how many changed the e-graph.
  size_t applyAll(EGraph& g, const Matches& m) const;

 private:
  std::string name_;
  Pattern lhs_;
  std::optional<Pattern> rhs_;
  std::vector<uint32_t> rhs_vars_;   // rhs Var index -> lhs Var index
  std::vector<uint32_t> rhs_attrs_;  // rhs AttrVar index -> lhs AttrVar index
  Applier apply_;
  std::vector<Condition> conditions_;
  ApplierReads reads_ = ApplierReads::kAnything;
};

}  // namespace tacit::egraph
