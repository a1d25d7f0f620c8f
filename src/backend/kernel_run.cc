#include "backend/kernel_run.h"

#include <map>
#include <string>

#include "isel/kernel.h"
#include "support/diagnostic.h"

namespace tacit::backend {

std::vector<hlo::Literal> runKernelProgram(const taidl::Isa& isa, const hlo::HloModule& kernel,
                                           const oracle::Program& program,
                                           std::span<const hlo::Literal* const> arguments,
                                           oracle::Stats* stats) {
  std::vector<const oracle::Tensor*> inputs, outputs;
  for (const oracle::Tensor& t : program.tensors) {
    if (t.kind == oracle::TensorKind::kInput) inputs.push_back(&t);
    if (t.kind == oracle::TensorKind::kOutput) outputs.push_back(&t);
  }
  const std::vector<hlo::Shape> parameters = isel::entryParameterShapes(kernel);
  const std::vector<hlo::Shape> results = isel::entryResultShapes(kernel);
  if (arguments.size() != parameters.size() || inputs.size() != parameters.size())
    fail("the kernel takes " + std::to_string(parameters.size()) + " parameters, its program " +
         std::to_string(inputs.size()) + " inputs, and " + std::to_string(arguments.size()) +
         " values were given");
  if (outputs.size() != results.size())
    fail("the kernel has " + std::to_string(results.size()) + " results, its program " +
         std::to_string(outputs.size()) + " outputs");
  std::map<std::string, hlo::Literal> physical;
  for (size_t i = 0; i < parameters.size(); ++i) {
    if (!parameters[i].isArray() || !arguments[i]->shape().isArray())
      fail("parameter " + std::to_string(i) + " of the kernel is a tuple: a program takes arrays");
    physical[inputs[i]->name] = isel::toPhysical(*arguments[i], parameters[i]);
  }
  std::map<std::string, hlo::Literal> got = oracle::run(isa, program, physical, {}, stats);
  std::vector<hlo::Literal> out;
  for (size_t r = 0; r < results.size(); ++r)
    out.push_back(isel::fromPhysical(got.at(outputs[r]->name), results[r]));
  return out;
}

}  // namespace tacit::backend
