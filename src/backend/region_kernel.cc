#include "backend/region_kernel.h"

#include <set>

#include "hlo/printer.h"
#include "support/strings.h"

namespace tacit::backend {
namespace {

using hlo::HloComputation;
using hlo::HloInstruction;
using hlo::HloOpcode;

double shapeBytes(const hlo::Shape& s) {
  if (s.isArray()) return static_cast<double>(s.byteSize());
  double n = 0;
  for (const hlo::Shape& e : s.tupleShapes())
    n += shapeBytes(e);
  return n;
}

// The computations `op` calls, and the ones they call, callees before callers (once each).
void calledInOrder(const HloInstruction& op, std::set<const HloComputation*>& seen,
                   std::vector<const HloComputation*>& order) {
  for (const hlo::CalledComputations& called : op.attrs().called) {
    for (const HloComputation* callee : called.computations) {
      if (callee == nullptr || !seen.insert(callee).second) continue;
      for (const auto& inst : callee->instructions())
        calledInOrder(*inst, seen, order);
      order.push_back(callee);
    }
  }
}

// The operation's text without its ROOT marker and its control predecessors (which name
// instructions the kernel does not have).
std::string operationText(const HloInstruction& op) {
  std::string text = hlo::printInstruction(op);
  if (text.rfind("ROOT ", 0) == 0) text.erase(0, 5);
  size_t control = text.find(", control-predecessors={");
  if (control != std::string::npos) text.erase(control, text.find('}', control) + 1 - control);
  return text;
}

}  // namespace

bool isPlumbing(HloOpcode op) {
  return op == HloOpcode::kParameter || op == HloOpcode::kConstant || op == HloOpcode::kTuple ||
         op == HloOpcode::kGetTupleElement;
}

double operationBytes(const HloInstruction& op) {
  double bytes = shapeBytes(op.shape());
  for (const HloInstruction* o : op.operands())
    bytes += shapeBytes(o->shape());
  return bytes;
}

RegionKernel regionKernel(const std::vector<const HloInstruction*>& region,
                          const std::vector<const HloInstruction*>& outputs) {
  RegionKernel out;
  auto line = [&](const std::string& text, const HloInstruction* op) {
    out.text += text + "\n";
    out.lines.push_back(op);
  };
  line("HloModule region", nullptr);
  std::set<const HloComputation*> seen;
  std::vector<const HloComputation*> called;
  for (const HloInstruction* op : region)
    calledInOrder(*op, seen, called);
  for (const HloComputation* c : called) {
    const std::string printed = hlo::printComputation(*c);  // split's views point into it
    for (std::string_view l : split(printed, '\n'))
      line(std::string(l), nullptr);
  }
  line("ENTRY main {", nullptr);
  std::set<const HloInstruction*> inside(region.begin(), region.end()), taken;
  for (const HloInstruction* op : region) {
    for (const HloInstruction* o : op->operands()) {
      if (inside.count(o) || !taken.insert(o).second) continue;
      if (o->opcode() == HloOpcode::kConstant) {
        line("  " + operationText(*o), nullptr);
        continue;
      }
      line("  " + hlo::sigilName(o->name()) + " = " + o->shape().str() + " parameter(" +
               std::to_string(out.parameters.size()) + ")",
           nullptr);
      out.parameters.push_back(o);
    }
  }
  for (const HloInstruction* op : region) {
    const bool root = outputs.size() == 1 && outputs[0] == op;
    line(std::string(root ? "  ROOT " : "  ") + operationText(*op), op);
  }
  if (outputs.size() > 1) {
    std::vector<hlo::Shape> shapes;
    for (const HloInstruction* o : outputs)
      shapes.push_back(o->shape());
    line("  ROOT region.outputs = " + hlo::Shape::tuple(shapes).str() + " tuple(" +
             joinWith(outputs, ", ",
                      [](const HloInstruction* o) { return hlo::sigilName(o->name()); }) +
             ")",
         nullptr);
  }
  line("}", nullptr);
  return out;
}

}  // namespace tacit::backend
