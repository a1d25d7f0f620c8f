// Checks the hand-written specs' tests share (trainium_test.cc, vta_test.cc): a program against
// its HLO twin on random inputs, and every limit of a spec as a `require` that rejects one past it.
#pragma once

#include <gtest/gtest.h>

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "hlo/parser.h"
#include "hlo_eval/evaluator.h"
#include "hlo_eval/random_literal.h"
#include "oracle/machine.h"
#include "oracle/tasm.h"
#include "support/diagnostic.h"
#include "support/source.h"
#include "taidl/isa.h"

namespace tacit::oracle::spec_checks {

// Runs BASE.tasm on `sets` random input sets (seeds from `seed`) and compares its one output with
// BASE.hlo evaluated on the same inputs, bit for bit. The program declares its inputs in the
// order of the HLO parameters, with the same shapes. `check` (optional) sees each expected result.
inline void expectProgramEqualsHlo(const taidl::Isa& isa, const std::string& base, int sets,
                                   uint64_t seed,
                                   const std::function<void(const hlo::Literal&)>& check = {}) {
  Program p = parseProgramFile(isa, base + ".tasm");
  auto module = hlo::parseModule(readFile(base + ".hlo"), base + ".hlo");
  std::vector<const Tensor*> inputs, outputs;
  for (const Tensor& t : p.tensors) {
    if (t.kind == TensorKind::kInput) inputs.push_back(&t);
    if (t.kind == TensorKind::kOutput) outputs.push_back(&t);
  }
  const auto& params = module->entry()->parameters();
  ASSERT_EQ(inputs.size(), params.size()) << base;
  ASSERT_EQ(outputs.size(), 1u) << base;
  for (size_t i = 0; i < inputs.size(); ++i)
    ASSERT_EQ(inputs[i]->shape, params[i]->shape()) << base << " input " << inputs[i]->name;
  for (int set = 0; set < sets; ++set) {
    std::map<std::string, hlo::Literal> by_name;
    std::vector<hlo::Literal> args;
    for (size_t i = 0; i < inputs.size(); ++i) {
      args.push_back(hlo::randomLiteral(inputs[i]->shape, hlo::mixSeed(seed + set, i)));
      by_name.emplace(inputs[i]->name, args.back());
    }
    std::map<std::string, hlo::Literal> got = run(isa, p, by_name);
    hlo::Literal want = hlo::evaluate(*module, args);
    const hlo::Literal& out = got.at(outputs[0]->name);
    ASSERT_EQ(out.shape(), want.shape()) << base;
    EXPECT_TRUE(out.bitwiseEqual(want)) << base << ": input set " << set;
    EXPECT_FALSE(want.bitwiseEqual(hlo::Literal(want.shape()))) << base << ": an all-zero result";
    if (check) check(want);
  }
}

// The error of running `calls` alone on a fresh machine with `hbm` bytes, or "" if they run.
inline std::string errorOfCalls(const taidl::Isa& isa, const std::string& calls,
                                int64_t hbm = 4096) {
  const std::string text = "kernel limit hbm=" + std::to_string(hbm) + " {\n  " + calls + "\n}\n";
  try {
    Program p = parseProgram(isa, text, "limit.tasm");
    run(isa, p, {});
  } catch (const DiagnosticError& e) {
    return e.what();
  }
  return "";
}

// One documented limit: a call at it and the same call one past it.
struct Limit {
  std::string what;
  std::string ok;   // runs
  std::string bad;  // fails on `constraint` of `instruction`
  std::string instruction;
  std::string constraint;  // as the diagnostic prints it
};

inline void expectLimitsAreRequires(const taidl::Isa& isa, const std::vector<Limit>& limits,
                                    int64_t hbm = 4096) {
  for (const Limit& l : limits) {
    SCOPED_TRACE(l.what);
    EXPECT_EQ(errorOfCalls(isa, l.ok, hbm), "");
    const std::string error = errorOfCalls(isa, l.bad, hbm);
    EXPECT_NE(error.find("constraint `" + l.constraint + "` of " + l.instruction +
                         " is violated by " + l.instruction + "("),
              std::string::npos)
        << error;
  }
}

}  // namespace tacit::oracle::spec_checks
