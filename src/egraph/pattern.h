// Patterns and e-matching.
//
// A pattern is a tree of operator nodes and class variables. Each operator node constrains the
// e-node's attribute with an AttrMatch: exact id, wildcard, wildcard that binds the attribute into
// the substitution (repeated names must bind the same attribute), each optionally restricted by
// a predicate on the payload. A class variable that occurs twice must bind the same e-class.
// Patterns compile once, at construction, into a small matching program (egg's e-matching
// virtual machine, §5.1 of the egg paper: bind / compare / ground-check / yield instructions);
// searching runs it over the e-graph's sorted class index.
//
// Text form (parse()):  pattern := ?var | op | op[attr] | (op[attr]? pattern*)
//   attr := *            any attribute                 (wildcard)
//         | *:name       any attribute that satisfies predicate `name` (ParseOptions)
//         | ?a           binds the attribute to attribute variable `a`
//         | ?a:name      binds it, if predicate `name` holds
//         | text         exactly Language::parseAttr(op, text)
//   An operator without [...] requires kNoAttr. Examples:
//   "(+ ?a (* ?b (num[0])))", "(transpose[?p] (transpose[?q] ?x))", "(slice[*:full] ?x)".
//
// Patterns hold op and attribute ids: use them only with e-graphs of the Language they were built
// for. A Pattern caches predicate results, so one Pattern must not be searched from two threads at
// once.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "egraph/egraph.h"
#include "egraph/ids.h"
#include "egraph/language.h"

namespace tacit::egraph {

// Class and attribute variables of one pattern: indices into its variable tables.
using Var = StrongId<struct VarTag>;
using AttrVar = StrongId<struct AttrVarTag>;

// A pure predicate on an attribute payload (decode it with table.bytes(a) / AttrReader). Results
// are cached per AttrId, so it must not depend on anything but the attribute.
using AttrPredicate = std::function<bool(const AttrTable& table, AttrId a)>;

class AttrMatch {
 public:
  enum class Kind : uint8_t { kExact, kAny, kBind };
  AttrMatch() = default;  // exactly kNoAttr
  static AttrMatch exact(AttrId a);
  static AttrMatch none() { return exact(kNoAttr); }
  static AttrMatch any(AttrPredicate pred = {});
  static AttrMatch bind(std::string var, AttrPredicate pred = {});

  Kind kind() const { return kind_; }
  AttrId attr() const { return attr_; }
  const std::string& var() const { return var_; }
  const AttrPredicate& predicate() const { return pred_; }

 private:
  Kind kind_ = Kind::kExact;
  AttrId attr_ = kNoAttr;
  std::string var_;
  AttrPredicate pred_;
};

// A substitution: the classes and attributes a match bound, indexed by the pattern's Var/AttrVar.
class Subst {
 public:
  Subst(const uint32_t* vars, uint32_t nvars, uint32_t nattrs)
      : vals_(vars), nvars_(nvars), nattrs_(nattrs) {}
  ClassId operator[](Var v) const {
    if (v.value >= nvars_) throw EGraphError("Subst: variable index out of range");
    return ClassId(vals_[v.value]);
  }
  AttrId operator[](AttrVar v) const {
    if (v.value >= nattrs_) throw EGraphError("Subst: attribute variable index out of range");
    return AttrId(vals_[nvars_ + v.value]);
  }
  size_t varCount() const { return nvars_; }
  size_t attrVarCount() const { return nattrs_; }

 private:
  const uint32_t* vals_;
  uint32_t nvars_, nattrs_;
};

// The matches of one search: (class, substitution) rows stored in fixed-size chunks (no
// allocation per match, no copying as it grows, and clear() keeps the chunks for the next search).
// Rows are grouped by class, classes ascending; the same (class, substitution) never appears
// twice. Indices must be < size().
// Where a search stopped by SearchBudget::max_matches continues: after root e-node `after` of
// root class `cls` (the root e-node is the e-node the pattern's root operator matched). The
// default starts at the beginning.
struct SearchResume {
  ClassId cls;
  NodeId after;  // invalid: at the first root e-node of cls
};

class MatchRun;

class Matches {
 public:
  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  ClassId eclass(size_t i) const { return ClassId(row(i)[0]); }
  Subst subst(size_t i) const { return Subst(row(i) + 1, nvars_, nattrs_); }
  void clear() {
    size_ = 0;
    resume_ = SearchResume();
    cut_ = false;
  }
  // After SearchStatus::kMatchLimit: where the search stopped (pass it as SearchBudget::resume to
  // continue; every root e-node before it was searched completely).
  SearchResume resume() const { return resume_; }
  // The last root e-node alone had so many matches that the hard cap (see SearchBudget) cut them:
  // resuming skips the rest of that e-node's matches.
  bool cut() const { return cut_; }
  size_t memoryBytes() const {
    return chunks_.size() * kRowsPerChunk * stride_ * sizeof(uint32_t) +
           chunks_.capacity() * sizeof(void*);
  }

 private:
  friend class Pattern;
  friend class MatchRun;
  static constexpr size_t kRowsPerChunk = 4096;
  const uint32_t* row(size_t i) const {
    return chunks_[i / kRowsPerChunk].get() + (i % kRowsPerChunk) * stride_;
  }
  // Starts a search for rows of `stride` words (chunks of another stride are dropped).
  void reset(uint32_t nvars, uint32_t nattrs);
  uint32_t* appendRow();
  uint32_t stride_ = 0, nvars_ = 0, nattrs_ = 0;
  size_t size_ = 0;
  std::vector<std::unique_ptr<uint32_t[]>> chunks_;
  SearchResume resume_;
  bool cut_ = false;
};

// Limits for one search. A search that hits one stops early and says which.
struct SearchBudget {
  // The search stops after the root e-node with which it reaches this many matches, so it can
  // continue exactly from Matches::resume() (a pattern with a non-binding wildcard may then report
  // one substitution in two chunks). A single root e-node with a huge number of matches is cut at
  // the hard cap of max_matches + max(max_matches, 4096) rows (Matches::cut()), which bounds the
  // memory of a search.
  size_t max_matches = SIZE_MAX;
  std::optional<std::chrono::steady_clock::time_point> deadline;
  SearchResume resume;  // continue an earlier search from here
};
enum class SearchStatus { kComplete, kMatchLimit, kDeadline };

struct ParseOptions {
  std::map<std::string, AttrPredicate, std::less<>> predicates;  // for `[*:name]`, `[?a:name]`
};

class PatternBuilder;

class Pattern {
 public:
  // Parses the text form (see the top of this file). Throws EGraphError with the offending
  // position for a syntax error, an unknown operator, a wrong arity or an unknown predicate.
  static Pattern parse(Language& lang, std::string_view text, const ParseOptions& opts = {});

  size_t varCount() const { return var_names_.size(); }
  size_t attrVarCount() const { return attr_var_names_.size(); }
  const std::vector<std::string>& varNames() const { return var_names_; }
  const std::vector<std::string>& attrVarNames() const { return attr_var_names_; }
  Var var(std::string_view name) const;  // throws if the pattern has no such variable
  AttrVar attrVar(std::string_view name) const;
  std::optional<Var> findVar(std::string_view name) const;
  std::optional<AttrVar> findAttrVar(std::string_view name) const;
  // True if every operator node has an exact or binding attribute (so it can be instantiated).
  bool instantiable() const;
  // Root is a variable (matches every class).
  bool rootIsVar() const { return nodes_.back().is_var; }
  std::optional<OpId> rootOp() const;

  std::string str(const Language& lang) const;

  // Every match in the e-graph (which must be clean()). Appends to `out` after clearing it.
  SearchStatus search(const EGraph& g, Matches& out, const SearchBudget& budget = {}) const;
  Matches search(const EGraph& g) const;
  // The matches rooted at one class.
  SearchStatus searchClass(const EGraph& g, ClassId c, Matches& out,
                           const SearchBudget& budget = {}) const;

  // Adds the pattern's nodes with variables replaced (vars/attrs indexed by this pattern's
  // Var/AttrVar); returns the root's class. Throws unless instantiable().
  ClassId instantiate(EGraph& g, std::span<const ClassId> vars,
                      std::span<const AttrId> attrs = {}) const;
  ClassId instantiate(EGraph& g, const Subst& s) const;
  // Cache hints for a coming instantiate() with these values: stage 0 loads the variables'
  // union-find entries, stage 1 the hash-cons slots of the nodes whose children are all
  // variables. No effect on the e-graph's contents.
  void prefetch(const EGraph& g, std::span<const ClassId> vars, std::span<const AttrId> attrs,
                int stage) const;

 private:
  friend class PatternBuilder;
  friend class MatchRun;

  struct Node {
    bool is_var = false;
    uint32_t var = 0;  // class variable (is_var)
    OpId op;
    AttrMatch::Kind attr_kind = AttrMatch::Kind::kExact;
    AttrId attr;            // kExact
    uint32_t attr_var = 0;  // kBind
    int32_t pred = -1;      // index into preds_, or -1
    uint32_t first_child = 0, arity = 0;
    bool ground = false;  // no variables, every attribute exact: one hash-cons lookup
  };
  struct Instr {
    enum Kind : uint8_t { kBind, kCompare, kCheckGround, kYield };
    enum Key : uint8_t { kNoKey, kKeyRegister, kKeyGround };
    Kind kind;
    bool attr_bind_first = false;  // kBind with kBind attr: first occurrence of the variable
    Key key = kNoKey;  // kBind: the first child is already known (register or ground slot)
    uint32_t key_index = 0;
    uint32_t reg = 0;  // kBind: class register scanned; kCompare/kCheckGround: register checked
    uint32_t arg = 0;  // kBind: pattern node; kCompare: other register; kCheckGround: ground slot
    uint32_t out = 0;  // kBind: first register receiving the children
  };
  struct PredCache {
    const AttrTable* table = nullptr;
    std::vector<int8_t> value;  // by AttrId: 0 unknown, 1 true, 2 false
  };

  Pattern() = default;
  void compile();
  static void dedupRows(Matches& m);
  bool predicateHolds(int32_t pred, const AttrTable& table, AttrId a) const;

  std::vector<Node> nodes_;  // children before parents; the root is last
  std::vector<uint32_t> children_;
  std::vector<std::string> var_names_;
  std::vector<std::string> attr_var_names_;
  std::vector<AttrPredicate> preds_;
  std::vector<Instr> program_;
  std::vector<uint32_t> var_reg_;       // register holding each class variable
  std::vector<uint32_t> ground_nodes_;  // ground sub-patterns checked by kCheckGround
  uint32_t reg_count_ = 0;
  bool may_duplicate_ = false;  // a non-binding wildcard can yield one substitution twice
  mutable std::vector<PredCache> pred_cache_;
};

// Builds patterns in code (attribute predicates and bindings without the text syntax):
//   PatternBuilder b(lang);
//   auto x = b.var("x");
//   auto t = b.node(transpose, AttrMatch::bind("p", isPermutation), {x});
//   Pattern p = b.build(t);
// Refs may be reused: each use stands for its own copy of the sub-pattern.
class PatternBuilder {
 public:
  using Ref = uint32_t;
  explicit PatternBuilder(const Language& lang) : lang_(lang) {}
  Ref var(std::string_view name);
  Ref node(OpId op, AttrMatch attr, std::span<const Ref> children);
  Ref node(OpId op, AttrMatch attr, std::initializer_list<Ref> children = {}) {
    return node(op, std::move(attr), std::span<const Ref>(children.begin(), children.size()));
  }
  Ref node(OpId op, std::initializer_list<Ref> children) { return node(op, AttrMatch(), children); }
  // The pattern rooted at `root`. The builder can go on building other patterns afterwards.
  Pattern build(Ref root) const;

 private:
  struct Item {
    bool is_var = false;
    std::string name;
    OpId op;
    AttrMatch attr;
    std::vector<Ref> children;
  };
  const Language& lang_;
  std::vector<Item> items_;
};

}  // namespace tacit::egraph
