#include "egraph/term.h"

#include "egraph/egraph.h"
#include "egraph/language.h"

namespace tacit::egraph {

uint32_t Term::add(TermNode node, std::span<const uint32_t> children) {
  auto index = static_cast<uint32_t>(nodes_.size());
  for (uint32_t c : children)
    if (c >= index)
      throw EGraphError("Term::add: child index " + std::to_string(c) +
                        " does not precede the new node " + std::to_string(index));
  node.first_child = static_cast<uint32_t>(children_.size());
  node.arity = static_cast<uint32_t>(children.size());
  children_.insert(children_.end(), children.begin(), children.end());
  nodes_.push_back(node);
  return index;
}

uint32_t Term::add(OpId op, AttrId attr, std::span<const uint32_t> children) {
  TermNode n;
  n.op = op;
  n.attr = attr;
  return add(n, children);
}

uint32_t Term::root() const {
  if (nodes_.empty()) throw EGraphError("Term::root: empty term");
  return static_cast<uint32_t>(nodes_.size() - 1);
}

uint64_t Term::treeSize(uint32_t at) const {
  if (at >= nodes_.size()) throw EGraphError("Term::treeSize: node index out of range");
  // Children precede parents, so one forward pass computes every subtree size.
  std::vector<uint64_t> size(at + 1, 0);
  for (uint32_t i = 0; i <= at; ++i) {
    uint64_t s = 1;
    for (uint32_t c : children(i))
      s = (s + size[c] < s) ? UINT64_MAX : s + size[c];
    size[i] = s;
  }
  return size[at];
}

namespace {

struct Printer {
  const Term& t;
  const Language& lang;
  size_t max_chars;
  std::string out;

  bool full() const { return out.size() >= max_chars; }

  void head(const TermNode& n) {
    out += lang.name(n.op);
    if (n.attr != kNoAttr) {
      out += '[';
      out += lang.formatAttr(n.op, n.attr);
      out += ']';
    }
  }

  // Iterative, so that very deep terms (long chains) cannot overflow the stack.
  void print(uint32_t at) {
    struct Item {
      uint32_t node;
      uint32_t next_child;  // UINT32_MAX: not opened yet
    };
    std::vector<Item> stack{{at, UINT32_MAX}};
    while (!stack.empty() && !full()) {
      Item& top = stack.back();
      const TermNode& n = t[top.node];
      if (top.next_child == UINT32_MAX) {
        if (n.arity == 0) {
          head(n);
          stack.pop_back();
          continue;
        }
        out += '(';
        head(n);
        top.next_child = 0;
      }
      if (top.next_child < n.arity) {
        uint32_t child = t.children(top.node)[top.next_child++];
        out += ' ';
        stack.push_back({child, UINT32_MAX});
      } else {
        out += ')';
        stack.pop_back();
      }
    }
  }
};

}  // namespace

std::string Term::str(const Language& lang, size_t max_chars) const {
  return str(lang, root(), max_chars);
}

std::string Term::str(const Language& lang, uint32_t at, size_t max_chars) const {
  if (at >= nodes_.size()) throw EGraphError("Term::str: node index out of range");
  Printer p{*this, lang, max_chars, {}};
  p.print(at);
  if (p.out.size() > max_chars) {
    p.out.resize(max_chars);
    p.out += "...";
  }
  return p.out;
}

bool operator==(const Term& a, const Term& b) {
  if (a.nodes_.size() != b.nodes_.size() || a.children_ != b.children_) return false;
  for (size_t i = 0; i < a.nodes_.size(); ++i) {
    const TermNode& x = a.nodes_[i];
    const TermNode& y = b.nodes_[i];
    if (x.op != y.op || x.attr != y.attr || x.eclass != y.eclass || x.enode != y.enode ||
        x.context != y.context || x.first_child != y.first_child || x.arity != y.arity)
      return false;
  }
  return true;
}

ClassId addTerm(EGraph& g, const Term& t) {
  std::vector<ClassId> classes(t.size());
  std::vector<ClassId> kids;
  for (uint32_t i = 0; i < t.size(); ++i) {
    kids.clear();
    for (uint32_t c : t.children(i))
      kids.push_back(classes[c]);
    classes[i] = g.add(t[i].op, t[i].attr, kids);
  }
  return classes[t.root()];
}

}  // namespace tacit::egraph
