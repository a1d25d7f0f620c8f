#include "isel/pii_graph.h"

#include <functional>

#include "support/strings.h"

namespace tacit::isel {

size_t PiiGraph::callCount() const {
  size_t n = 0;
  for (const PiiNode& node : nodes)
    n += node.kind == PiiKind::kCall;
  return n;
}

uint64_t PiiGraph::fingerprint() const {
  // FNV-1a over a canonical serialisation (nodes are already in a deterministic order).
  uint64_t h = 1469598103934665603ull;
  auto mix = [&h](int64_t v) {
    for (int i = 0; i < 8; ++i) {
      h ^= static_cast<uint64_t>(v >> (8 * i)) & 0xff;
      h *= 1099511628211ull;
    }
  };
  for (const PiiNode& n : nodes) {
    mix(static_cast<int64_t>(n.kind));
    mix(n.unit);
    mix(n.case_index);
    for (int64_t a : n.alpha)
      mix(a);
    mix(-1);
    for (int32_t o : n.operands)
      mix(o);
    mix(-2);
    for (int64_t v : n.view_start)
      mix(v);
    for (int64_t v : n.view_limit)
      mix(v);
    mix(n.concat_dim);
    for (int64_t v : n.part_offsets)
      mix(v);
    mix(n.parameter);
    if (n.literal) {
      for (size_t i = 0; i < n.literal->byteCount(); ++i)
        mix(n.literal->bytes()[i]);
    }
  }
  for (int32_t r : results)
    mix(r);
  return h;
}

std::string PiiGraph::str(const taidl::Isa& isa, const UnitSet& units) const {
  std::string out;
  auto value = [](int32_t v) { return "%" + std::to_string(v); };
  for (const PiiNode& n : nodes) {
    out += joinWith(n.outputs, ", ", value) + " = ";
    switch (n.kind) {
      case PiiKind::kInput:
        out += "input(" + std::to_string(n.parameter) + ")";
        break;
      case PiiKind::kConstant:
        out += "constant " + n.literal->shape().str();
        break;
      case PiiKind::kUndef:
        out += "undef";
        break;
      case PiiKind::kSliceView:
        out += "slice[" + join(n.view_start, ",") + " : " + join(n.view_limit, ",") + "](" +
               value(n.operands[0]) + ")";
        break;
      case PiiKind::kConcatView:
        out += "concat[" + std::to_string(n.concat_dim) + "](" + joinWith(n.operands, ", ", value) +
               ")";
        break;
      case PiiKind::kOverlayView:
        out +=
            "overlay[" + join(n.part_offsets, ",") + "](" + joinWith(n.operands, ", ", value) + ")";
        break;
      case PiiKind::kCall: {
        const Unit& u = units.units[static_cast<size_t>(n.unit)];
        out += u.name;
        if (!n.alpha.empty()) out += "(" + join(n.alpha, ",") + ")";
        out += "(" + joinWith(n.operands, ", ", value) + ")";
        break;
      }
    }
    if (!n.outputs.empty()) {
      const PiiValue& v = values[static_cast<size_t>(n.outputs[0])];
      out += " -> " + isa.buffers[static_cast<size_t>(v.buffer)].name.text + " " + v.shape.str();
    }
    out += "\n";
  }
  out += "results: " + joinWith(results, ", ", value) + "\n";
  return out;
}

}  // namespace tacit::isel
