// Helpers for the evaluator tests: literals from text, evaluation of HLO text, bit helpers.
#pragma once

#include <gtest/gtest.h>

#include <bit>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "hlo/parser.h"
#include "hlo/printer.h"
#include "hlo_eval/evaluator.h"
#include "support/diagnostic.h"

namespace tacit::hlo::testing {

// A literal from its shape and constant(...) text, e.g. lit("f32[2]", "{1, 2.5}").
inline Literal lit(const std::string& shape, const std::string& values) {
  return parseLiteral(values, parseShape(shape));
}

// A literal from raw element bit patterns (for NaN payloads, -0, subnormals, bf16 ties).
template <typename T>
Literal bits(PrimitiveType type, std::vector<int64_t> dims, const std::vector<T>& raw) {
  Literal l(Shape(type, std::move(dims)));
  EXPECT_EQ(l.byteCount(), raw.size() * sizeof(T));
  if (!raw.empty()) std::memcpy(l.bytes(), raw.data(), l.byteCount());
  return l;
}

// Raw element bit patterns of an array literal.
template <typename T>
std::vector<T> rawOf(const Literal& l) {
  std::vector<T> out(l.byteCount() / sizeof(T));
  if (!out.empty()) std::memcpy(out.data(), l.bytes(), l.byteCount());
  return out;
}

// Runs a compiled plan on raw input bytes; each output starts as 0xAB bytes (so that an element
// the plan forgets to write shows).
inline std::vector<std::vector<uint8_t>> runPlan(EvalPlan& plan,
                                                 const std::vector<const void*>& inputs) {
  std::vector<std::vector<uint8_t>> outputs;
  std::vector<void*> output_ptrs;
  for (const Shape& s : plan.outputShapes())
    outputs.emplace_back(static_cast<size_t>(s.byteSize()), 0xAB);
  for (auto& o : outputs)
    output_ptrs.push_back(o.data());
  plan.run(inputs, output_ptrs);
  return outputs;
}

inline std::unique_ptr<HloModule> parseText(const std::string& text) {
  return parseModule(text, "t.hlo");
}

// Evaluates the entry computation of `text`.
inline Literal eval(const std::string& text, const std::vector<Literal>& args,
                    const EvalOptions& options = {}) {
  auto m = parseText(text);
  return evaluate(*m, args, options);
}

// The diagnostic that compiling or evaluating `text` throws; fails the test if none.
inline Diagnostic evalError(const std::string& text, const std::vector<Literal>& args,
                            const EvalOptions& options = {}) {
  try {
    eval(text, args, options);
  } catch (const DiagnosticError& e) {
    return e.diagnostic();
  }
  ADD_FAILURE() << "expected a diagnostic for:\n" << text;
  return {};
}

inline std::string show(const Literal& l) {
  return l.shape().shortStr() + " " + literalText(l);
}

// Bitwise equality of two literals, printing both on failure. Streams extra context with <<.
inline ::testing::AssertionResult literalsEqual(const char* actual_expr, const char*,
                                                const Literal& actual, const Literal& expected) {
  if (actual.bitwiseEqual(expected)) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure()
         << actual_expr << "\n  actual: " << show(actual) << "\nexpected: " << show(expected);
}
#define EXPECT_LITERAL(actual, expected) \
  EXPECT_PRED_FORMAT2(::tacit::hlo::testing::literalsEqual, actual, expected)

inline float f32(uint32_t b) {
  return std::bit_cast<float>(b);
}
inline uint32_t bitsOf(float f) {
  return std::bit_cast<uint32_t>(f);
}

}  // namespace tacit::hlo::testing
