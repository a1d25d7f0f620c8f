#include "egraph/pattern.h"

#include <algorithm>
#include <cctype>

namespace tacit::egraph {

// ---------------------------------------------------------------------------------------------
// AttrMatch

AttrMatch AttrMatch::exact(AttrId a) {
  AttrMatch m;
  m.kind_ = Kind::kExact;
  m.attr_ = a;
  return m;
}

AttrMatch AttrMatch::any(AttrPredicate pred) {
  AttrMatch m;
  m.kind_ = Kind::kAny;
  m.pred_ = std::move(pred);
  return m;
}

AttrMatch AttrMatch::bind(std::string var, AttrPredicate pred) {
  if (var.empty()) throw EGraphError("AttrMatch::bind: empty variable name");
  AttrMatch m;
  m.kind_ = Kind::kBind;
  m.var_ = std::move(var);
  m.pred_ = std::move(pred);
  return m;
}

// ---------------------------------------------------------------------------------------------
// PatternBuilder

PatternBuilder::Ref PatternBuilder::var(std::string_view name) {
  if (name.empty()) throw EGraphError("PatternBuilder::var: empty variable name");
  Item it;
  it.is_var = true;
  it.name = std::string(name);
  items_.push_back(std::move(it));
  return static_cast<Ref>(items_.size() - 1);
}

PatternBuilder::Ref PatternBuilder::node(OpId op, AttrMatch attr, std::span<const Ref> children) {
  lang_.checkNode(op, children.size());
  if (attr.kind() == AttrMatch::Kind::kExact && !lang_.attrs().contains(attr.attr()))
    throw EGraphError("PatternBuilder::node: attribute id not in the language's table");
  for (Ref c : children)
    if (c >= items_.size()) throw EGraphError("PatternBuilder::node: unknown child reference");
  Item it;
  it.op = op;
  it.attr = std::move(attr);
  it.children.assign(children.begin(), children.end());
  items_.push_back(std::move(it));
  return static_cast<Ref>(items_.size() - 1);
}

Pattern PatternBuilder::build(Ref root) const {
  if (root >= items_.size()) throw EGraphError("PatternBuilder::build: unknown root reference");
  Pattern p;
  auto index_of = [](std::vector<std::string>& names, const std::string& n) {
    auto it = std::find(names.begin(), names.end(), n);
    if (it != names.end()) return static_cast<uint32_t>(it - names.begin());
    names.push_back(n);
    return static_cast<uint32_t>(names.size() - 1);
  };
  // Post-order emission with an explicit stack (children before parents).
  struct Frame {
    Ref ref;
    size_t next = 0;
    std::vector<uint32_t> kids;
  };
  std::vector<Frame> stack{{root, 0, {}}};
  while (!stack.empty()) {
    Frame& f = stack.back();
    const Item& it = items_[f.ref];
    if (!it.is_var && f.next < it.children.size()) {
      stack.push_back({it.children[f.next++], 0, {}});
      continue;
    }
    Pattern::Node n;
    if (it.is_var) {
      n.is_var = true;
      n.var = index_of(p.var_names_, it.name);
    } else {
      n.op = it.op;
      n.attr_kind = it.attr.kind();
      n.attr = it.attr.attr();
      if (it.attr.kind() == AttrMatch::Kind::kBind)
        n.attr_var = index_of(p.attr_var_names_, it.attr.var());
      if (it.attr.predicate()) {
        n.pred = static_cast<int32_t>(p.preds_.size());
        p.preds_.push_back(it.attr.predicate());
      }
      n.first_child = static_cast<uint32_t>(p.children_.size());
      n.arity = static_cast<uint32_t>(f.kids.size());
      p.children_.insert(p.children_.end(), f.kids.begin(), f.kids.end());
    }
    p.nodes_.push_back(n);
    auto index = static_cast<uint32_t>(p.nodes_.size() - 1);
    stack.pop_back();
    if (!stack.empty()) stack.back().kids.push_back(index);
  }
  for (const std::string& v : p.var_names_)
    if (std::find(p.attr_var_names_.begin(), p.attr_var_names_.end(), v) != p.attr_var_names_.end())
      throw EGraphError("pattern uses '" + v + "' both as a class and an attribute variable");
  p.compile();
  return p;
}

// ---------------------------------------------------------------------------------------------
// Parsing

namespace {

class Parser {
 public:
  Parser(Language& lang, std::string_view text, const ParseOptions& opts)
      : lang_(lang), text_(text), opts_(opts), b_(lang) {}

  Pattern run() {
    PatternBuilder::Ref root = parseTerm();
    skipSpace();
    if (pos_ != text_.size()) error("unexpected text after the pattern");
    return b_.build(root);
  }

 private:
  [[noreturn]] void error(const std::string& what) const {
    throw EGraphError("pattern '" + std::string(text_) + "' at offset " + std::to_string(pos_) +
                      ": " + what);
  }
  void skipSpace() {
    while (pos_ < text_.size() && std::isspace(static_cast<unsigned char>(text_[pos_])))
      ++pos_;
  }
  static bool symbolChar(char c) {
    return !std::isspace(static_cast<unsigned char>(c)) && c != '(' && c != ')' && c != '[' &&
           c != ']';
  }
  std::string_view symbol() {
    size_t start = pos_;
    while (pos_ < text_.size() && symbolChar(text_[pos_]))
      ++pos_;
    if (pos_ == start) error("expected an operator or a variable");
    return text_.substr(start, pos_ - start);
  }

  PatternBuilder::Ref parseTerm() {
    skipSpace();
    if (pos_ >= text_.size()) error("unexpected end of pattern");
    if (text_[pos_] == '?') {
      ++pos_;
      std::string_view name = symbol();
      return b_.var(name);
    }
    bool parens = text_[pos_] == '(';
    if (parens) {
      ++pos_;
      skipSpace();
    }
    size_t op_pos = pos_;
    std::string_view name = symbol();
    auto op = lang_.findOp(name);
    if (!op) {
      pos_ = op_pos;
      error("unknown operator '" + std::string(name) + "'");
    }
    AttrMatch attr;
    if (pos_ < text_.size() && text_[pos_] == '[') attr = parseAttr(*op);
    std::vector<PatternBuilder::Ref> kids;
    if (parens) {
      for (;;) {
        skipSpace();
        if (pos_ >= text_.size()) error("missing ')'");
        if (text_[pos_] == ')') break;
        kids.push_back(parseTerm());
      }
      ++pos_;
    }
    int arity = lang_.arity(*op);
    if (arity != kVariadic && static_cast<size_t>(arity) != kids.size())
      error("operator '" + std::string(name) + "' takes " + std::to_string(arity) +
            " children, got " + std::to_string(kids.size()));
    return b_.node(*op, std::move(attr), kids);
  }

  AttrMatch parseAttr(OpId op) {
    ++pos_;  // '['
    size_t close = text_.find(']', pos_);
    if (close == std::string_view::npos) error("missing ']'");
    std::string_view body = text_.substr(pos_, close - pos_);
    pos_ = close + 1;
    if (body.empty()) error("empty attribute; omit [] for kNoAttr");
    if (body[0] != '*' && body[0] != '?') return AttrMatch::exact(lang_.parseAttr(op, body));
    std::string_view var = body.substr(1);
    AttrPredicate pred;
    if (size_t colon = var.find(':'); colon != std::string_view::npos) {
      std::string_view pname = var.substr(colon + 1);
      auto it = opts_.predicates.find(pname);
      if (it == opts_.predicates.end())
        error("unknown attribute predicate '" + std::string(pname) + "'");
      pred = it->second;
      var = var.substr(0, colon);
    }
    if (body[0] == '*') {
      if (!var.empty()) error("a wildcard takes no name; use ?name to bind");
      return AttrMatch::any(std::move(pred));
    }
    if (var.empty()) error("attribute variable without a name");
    return AttrMatch::bind(std::string(var), std::move(pred));
  }

  Language& lang_;
  std::string_view text_;
  const ParseOptions& opts_;
  PatternBuilder b_;
  size_t pos_ = 0;
};

}  // namespace

Pattern Pattern::parse(Language& lang, std::string_view text, const ParseOptions& opts) {
  return Parser(lang, text, opts).run();
}

// ---------------------------------------------------------------------------------------------
// Queries and printing

std::optional<Var> Pattern::findVar(std::string_view name) const {
  for (size_t i = 0; i < var_names_.size(); ++i)
    if (var_names_[i] == name) return Var(static_cast<uint32_t>(i));
  return std::nullopt;
}

std::optional<AttrVar> Pattern::findAttrVar(std::string_view name) const {
  for (size_t i = 0; i < attr_var_names_.size(); ++i)
    if (attr_var_names_[i] == name) return AttrVar(static_cast<uint32_t>(i));
  return std::nullopt;
}

Var Pattern::var(std::string_view name) const {
  if (auto v = findVar(name)) return *v;
  throw EGraphError("pattern has no variable ?" + std::string(name));
}

AttrVar Pattern::attrVar(std::string_view name) const {
  if (auto v = findAttrVar(name)) return *v;
  throw EGraphError("pattern has no attribute variable ?" + std::string(name));
}

bool Pattern::instantiable() const {
  return std::all_of(nodes_.begin(), nodes_.end(), [](const Node& n) {
    return n.is_var || n.attr_kind != AttrMatch::Kind::kAny;
  });
}

std::optional<OpId> Pattern::rootOp() const {
  if (nodes_.back().is_var) return std::nullopt;
  return nodes_.back().op;
}

std::string Pattern::str(const Language& lang) const {
  std::vector<std::string> text(nodes_.size());
  for (size_t i = 0; i < nodes_.size(); ++i) {
    const Node& n = nodes_[i];
    if (n.is_var) {
      text[i] = "?" + var_names_[n.var];
      continue;
    }
    std::string head = lang.name(n.op);
    std::string pred = n.pred >= 0 ? ":pred" + std::to_string(n.pred) : "";
    switch (n.attr_kind) {
      case AttrMatch::Kind::kExact:
        if (n.attr != kNoAttr) head += "[" + lang.formatAttr(n.op, n.attr) + "]";
        break;
      case AttrMatch::Kind::kAny:
        head += "[*" + pred + "]";
        break;
      case AttrMatch::Kind::kBind:
        head += "[?" + attr_var_names_[n.attr_var] + pred + "]";
        break;
    }
    if (n.arity == 0) {
      text[i] = head;
      continue;
    }
    std::string s = "(" + head;
    for (uint32_t k = 0; k < n.arity; ++k)
      s += " " + text[children_[n.first_child + k]];
    text[i] = s + ")";
  }
  return text.back();
}

// ---------------------------------------------------------------------------------------------
// Instantiation

ClassId Pattern::instantiate(EGraph& g, std::span<const ClassId> vars,
                             std::span<const AttrId> attrs) const {
  if (!instantiable()) throw EGraphError("Pattern::instantiate: pattern has a wildcard attribute");
  if (vars.size() < var_names_.size() || attrs.size() < attr_var_names_.size())
    throw EGraphError("Pattern::instantiate: too few variable values");
  // Small patterns (the common case) use stack buffers: no allocation per application.
  constexpr size_t kInline = 32;
  ClassId inline_vals[kInline];
  std::vector<ClassId> heap_vals;
  ClassId* vals = inline_vals;
  if (nodes_.size() > kInline) {
    heap_vals.resize(nodes_.size());
    vals = heap_vals.data();
  }
  ClassId inline_kids[kInline];
  std::vector<ClassId> heap_kids;
  for (size_t i = 0; i < nodes_.size(); ++i) {
    const Node& n = nodes_[i];
    if (n.is_var) {
      vals[i] = vars[n.var];
      continue;
    }
    ClassId* kids = inline_kids;
    if (n.arity > kInline) {
      heap_kids.resize(n.arity);
      kids = heap_kids.data();
    }
    for (uint32_t k = 0; k < n.arity; ++k)
      kids[k] = vals[children_[n.first_child + k]];
    AttrId a = n.attr_kind == AttrMatch::Kind::kBind ? attrs[n.attr_var] : n.attr;
    vals[i] = g.add(n.op, a, std::span<const ClassId>(kids, n.arity));
  }
  return vals[nodes_.size() - 1];
}

void Pattern::prefetch(const EGraph& g, std::span<const ClassId> vars,
                       std::span<const AttrId> attrs, int stage) const {
  if (stage == 0) {
    for (ClassId v : vars)
      g.prefetchClass(v);
    return;
  }
  constexpr size_t kMax = 8;
  ClassId kids[kMax];
  for (const Node& n : nodes_) {
    if (n.is_var || n.arity > kMax || n.attr_kind == AttrMatch::Kind::kAny) continue;
    bool leaf_level = true;
    for (uint32_t k = 0; k < n.arity && leaf_level; ++k) {
      const Node& c = nodes_[children_[n.first_child + k]];
      leaf_level = c.is_var && c.var < vars.size();
      if (leaf_level) kids[k] = vars[c.var];
    }
    if (!leaf_level) continue;
    AttrId a = n.attr;
    if (n.attr_kind == AttrMatch::Kind::kBind) {
      if (n.attr_var >= attrs.size()) continue;
      a = attrs[n.attr_var];
    }
    g.prefetchNode(n.op, a, std::span<const ClassId>(kids, n.arity));
  }
}

ClassId Pattern::instantiate(EGraph& g, const Subst& s) const {
  if (s.varCount() != varCount() || s.attrVarCount() != attrVarCount())
    throw EGraphError("Pattern::instantiate: substitution belongs to another pattern");
  std::vector<ClassId> vars(varCount());
  std::vector<AttrId> attrs(attrVarCount());
  for (uint32_t i = 0; i < vars.size(); ++i)
    vars[i] = s[Var(i)];
  for (uint32_t i = 0; i < attrs.size(); ++i)
    attrs[i] = s[AttrVar(i)];
  return instantiate(g, vars, attrs);
}

}  // namespace tacit::egraph
