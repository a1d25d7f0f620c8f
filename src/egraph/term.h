// Term: a concrete expression taken out of (or put into) an e-graph, in the style of egg's
// RecExpr. Nodes are stored children-first: a node's children have smaller indices, and the root
// is the last node. A node may be the child of several nodes (a DAG with shared sub-terms); the
// extractors share a sub-term exactly when it was extracted from the same e-class (and, for the
// enumerator, never: its terms are trees).
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "egraph/ids.h"

namespace tacit::egraph {

class EGraph;
class Language;

struct TermNode {
  OpId op;
  AttrId attr;
  ClassId eclass;        // the e-class the node was taken from (invalid in hand-built terms)
  NodeId enode;          // the e-node it was taken from (invalid in hand-built terms)
  uint32_t context = 0;  // the enumeration context it was enumerated in (0 elsewhere)
  uint32_t first_child = 0;
  uint32_t arity = 0;
};

class Term {
 public:
  // Appends a node whose children are existing node indices; returns its index. Throws
  // EGraphError if a child index does not precede the new node.
  uint32_t add(TermNode node, std::span<const uint32_t> children);
  uint32_t add(OpId op, AttrId attr, std::span<const uint32_t> children);

  size_t size() const { return nodes_.size(); }  // distinct nodes (DAG size)
  bool empty() const { return nodes_.empty(); }
  uint32_t root() const;  // the last node; throws on an empty term
  const TermNode& operator[](size_t i) const { return nodes_[i]; }
  std::span<const TermNode> nodes() const { return nodes_; }
  std::span<const uint32_t> children(size_t i) const {
    return {children_.data() + nodes_[i].first_child, nodes_[i].arity};
  }
  // Number of nodes of the tree expansion below `at` (shared sub-terms counted once per use);
  // saturates at UINT64_MAX.
  uint64_t treeSize(uint32_t at) const;
  uint64_t treeSize() const { return treeSize(root()); }

  // The tree below `at` in the pattern syntax: `(op[attr] child ...)`, leaves as `op[attr]`/`op`.
  // Output longer than max_chars is cut and ends in "...".
  std::string str(const Language& lang, size_t max_chars = 1 << 20) const;
  std::string str(const Language& lang, uint32_t at, size_t max_chars) const;

  void clear() {
    nodes_.clear();
    children_.clear();
  }
  friend bool operator==(const Term&, const Term&);

 private:
  std::vector<TermNode> nodes_;
  std::vector<uint32_t> children_;
};

// Adds every node of the term to the e-graph; returns the class of the root.
ClassId addTerm(EGraph& g, const Term& t);

}  // namespace tacit::egraph
