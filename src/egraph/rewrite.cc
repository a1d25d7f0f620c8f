#include "egraph/rewrite.h"

namespace tacit::egraph {

Rewrite::Rewrite(std::string name, Pattern lhs, Pattern rhs)
    : name_(std::move(name)), lhs_(std::move(lhs)), rhs_(std::move(rhs)) {
  if (!rhs_->instantiable())
    throw EGraphError("rewrite '" + name_ + "': the right-hand side has a wildcard attribute");
  for (const std::string& v : rhs_->varNames()) {
    auto lv = lhs_.findVar(v);
    if (!lv)
      throw EGraphError("rewrite '" + name_ + "': ?" + v + " is not bound by the left-hand side");
    rhs_vars_.push_back(lv->value);
  }
  for (const std::string& v : rhs_->attrVarNames()) {
    auto lv = lhs_.findAttrVar(v);
    if (!lv)
      throw EGraphError("rewrite '" + name_ + "': attribute ?" + v +
                        " is not bound by the left-hand side");
    rhs_attrs_.push_back(lv->value);
  }
  reads_ = ApplierReads::kMatch;
}

Rewrite::Rewrite(std::string name, Pattern lhs, Applier apply)
    : name_(std::move(name)), lhs_(std::move(lhs)), apply_(std::move(apply)) {
  if (!apply_) throw EGraphError("rewrite '" + name_ + "': empty applier");
}

Rewrite Rewrite::parse(Language& lang, std::string name, std::string_view lhs, std::string_view rhs,
                       const ParseOptions& opts) {
  return Rewrite(std::move(name), Pattern::parse(lang, lhs, opts), Pattern::parse(lang, rhs, opts));
}

Rewrite& Rewrite::when(Condition c) {
  if (!c) throw EGraphError("rewrite '" + name_ + "': empty condition");
  conditions_.push_back(std::move(c));
  reads_ = ApplierReads::kAnything;  // a condition may read anything
  return *this;
}

Rewrite& Rewrite::reads(ApplierReads r) {
  reads_ = r;
  return *this;
}

bool Rewrite::apply(EGraph& g, ClassId matched, const Subst& s) const {
  for (const Condition& c : conditions_)
    if (!c(g, matched, s)) return false;
  uint64_t before = g.version();
  std::optional<ClassId> result;
  if (rhs_) {
    // Map the substitution onto the rhs's variable numbering (stack buffers: no allocation).
    constexpr size_t kInline = 16;
    ClassId vars_inline[kInline];
    AttrId attrs_inline[kInline];
    std::vector<ClassId> vars_heap;
    std::vector<AttrId> attrs_heap;
    ClassId* vars = vars_inline;
    AttrId* attrs = attrs_inline;
    if (rhs_vars_.size() > kInline) {
      vars_heap.resize(rhs_vars_.size());
      vars = vars_heap.data();
    }
    if (rhs_attrs_.size() > kInline) {
      attrs_heap.resize(rhs_attrs_.size());
      attrs = attrs_heap.data();
    }
    for (size_t i = 0; i < rhs_vars_.size(); ++i)
      vars[i] = s[Var(rhs_vars_[i])];
    for (size_t i = 0; i < rhs_attrs_.size(); ++i)
      attrs[i] = s[AttrVar(rhs_attrs_[i])];
    result = rhs_->instantiate(g, std::span<const ClassId>(vars, rhs_vars_.size()),
                               std::span<const AttrId>(attrs, rhs_attrs_.size()));
  } else {
    result = apply_(g, matched, s);
  }
  if (result) g.unite(matched, *result);
  return g.version() != before;
}

void Rewrite::prefetch(const EGraph& g, ClassId matched, const Subst& s, int stage) const {
  if (stage == 0) g.prefetchClass(matched);
  if (!rhs_) {
    if (stage == 0)
      for (size_t i = 0; i < s.varCount(); ++i)
        g.prefetchClass(s[Var(static_cast<uint32_t>(i))]);
    return;
  }
  constexpr size_t kInline = 16;
  if (rhs_vars_.size() > kInline || rhs_attrs_.size() > kInline) return;
  ClassId vars[kInline];
  AttrId attrs[kInline];
  for (size_t i = 0; i < rhs_vars_.size(); ++i)
    vars[i] = s[Var(rhs_vars_[i])];
  for (size_t i = 0; i < rhs_attrs_.size(); ++i)
    attrs[i] = s[AttrVar(rhs_attrs_[i])];
  rhs_->prefetch(g, std::span<const ClassId>(vars, rhs_vars_.size()),
                 std::span<const AttrId>(attrs, rhs_attrs_.size()), stage);
}

size_t Rewrite::applyAll(EGraph& g, const Matches& m) const {
  size_t changed = 0;
  for (size_t i = 0; i < m.size(); ++i)
    changed += apply(g, m.eclass(i), m.subst(i)) ? 1 : 0;
  return changed;
}

}  // namespace tacit::egraph
