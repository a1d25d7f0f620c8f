#include "alloc/call_info.h"

#include <stdexcept>

#include "taidl/ops.h"

namespace tacit::alloc {
namespace {

int64_t evalPoly(const taidl::Poly& p, const std::vector<int64_t>& alpha) {
  auto v = p.eval([&](taidl::Var var) -> int64_t {
    if (var.kind != taidl::RefKind::kAlpha)
      throw std::logic_error("address coefficient depends on a non-α value");
    return alpha[static_cast<size_t>(var.slot)];
  });
  if (!v) throw std::logic_error("address coefficient overflows");
  return *v;
}

}  // namespace

SliceInfo sliceInfo(const taidl::SymSlice& s, const std::vector<int64_t>& attrs) {
  SliceInfo info;
  info.buffer = s.buffer;
  taidl::EvalEnv env{attrs, {}, {}};
  for (size_t k = 0; k < s.affine.size(); ++k) {
    AffineStart a;
    a.constant = evalPoly(s.affine[k].constant, attrs);
    for (const taidl::AffineTerm& t : s.affine[k].terms) {
      int64_t coeff = evalPoly(t.coeff, attrs);
      if (coeff != 0) a.terms.emplace_back(t.var.slot, coeff);
    }
    info.starts.push_back(std::move(a));
    info.extents.push_back(taidl::evalExpr(s.extents[k], env));
  }
  if (info.starts.size() != s.starts.size())
    throw std::logic_error("slice start is not affine in β");
  return info;
}

CallInfo callInfo(const isel::UnitSet& units, const isel::PiiNode& node) {
  CallInfo c;
  c.unit = &units.units[static_cast<size_t>(node.unit)];
  c.sym = &c.unit->semantics->cases[static_cast<size_t>(node.case_index)];
  c.attrs = node.alpha;
  c.attrs.resize(static_cast<size_t>(c.unit->num_attrs), 0);
  for (const taidl::SymSlice& s : c.sym->inputs)
    c.inputs.push_back(sliceInfo(s, c.attrs));
  for (const taidl::SymSlice& s : c.sym->outputs)
    c.outputs.push_back(sliceInfo(s, c.attrs));
  return c;
}

}  // namespace tacit::alloc
