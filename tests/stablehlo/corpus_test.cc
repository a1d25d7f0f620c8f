// The shared HLO corpus through StableHLO: every module whose instructions are all in the subset
// prints as StableHLO and reads back to the same module, compared as printed HLO after dropping
// what StableHLO does not carry (layouts other than the entry's, header attributes, metadata,
// sharding and other raw attributes, control predecessors, explicit group counts of 1, a scalar
// broadcast's omitted dimensions) and naming reducers by first use (a region has no name). Modules
// with instructions outside the subset are counted and must fail with a diagnostic naming the
// instruction (docs/stablehlo.md lists them).
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <iterator>
#include <map>
#include <set>

#include "common/paths.h"
#include "hlo/builder.h"
#include "hlo/parser.h"
#include "hlo/printer.h"
#include "stablehlo/input.h"
#include "stablehlo/printer.h"
#include "support/source.h"

namespace tacit::stablehlo {
namespace {

// reduce, reduce-window, while and sort: their computations are regions in StableHLO.
bool hasRegions(const hlo::HloInstruction& inst) {
  return inst.opcode() == hlo::HloOpcode::kReduce ||
         inst.opcode() == hlo::HloOpcode::kReduceWindow ||
         inst.opcode() == hlo::HloOpcode::kWhile || inst.opcode() == hlo::HloOpcode::kSort;
}

// A computation printed with its parameters first, by number: StableHLO declares them first
// (block arguments), HLO may interleave them with the instructions, an order without meaning.
std::string paramsFirst(const hlo::HloComputation& c) {
  std::string text = hlo::printComputation(c);
  std::string header = text.substr(0, text.find('\n') + 1), rest;
  std::map<int64_t, std::string> parameters;
  for (size_t at = header.size(); at < text.size();) {
    size_t end = text.find('\n', at);
    end = end == std::string::npos ? text.size() : end + 1;
    const std::string line = text.substr(at, end - at);
    const size_t p = line.find(" parameter(");
    if (p != std::string::npos) {
      parameters[std::stoll(line.substr(p + 11))] = line;
    } else {
      rest += line;
    }
    at = end;
  }
  for (const auto& [number, line] : parameters)
    header += line;
  return header + rest;
}

// The module's computations as printed HLO, normalised as the file comment says. Region
// computations (reducers, loop conditions and bodies) are compared by body: their instructions get
// canonical names (a region inlined twice, or whose names its function already uses, is renamed in
// the text), regions of one body are one, and each is named by its first use.
std::multiset<std::string> normalised(const hlo::HloModule& original) {
  std::unique_ptr<hlo::HloModule> m = hlo::cloneModule(original);
  std::set<hlo::HloComputation*> reducers;
  std::vector<hlo::HloComputation*> functions;
  for (const auto& c : m->computations()) {
    c->setExecutionThread(std::nullopt);
    for (const auto& inst : c->instructions()) {
      inst->mutableShape().clearLayouts();
      inst->controlPredecessors().clear();
      std::vector<hlo::RawAttribute> kept;
      for (const hlo::RawAttribute& r : inst->attrs().raw) {
        if (r.name == "custom_call_target" || r.name == "custom_call_has_side_effect" ||
            (r.name == "backend_config" && r.value.size() > 2 && r.value[0] == '"') ||
            (r.name == "api_version" && r.value != "API_VERSION_ORIGINAL"))
          kept.push_back(r);
      }
      inst->attrs().raw = kept;
      // A group count of 1 is the default StableHLO always writes and the conversion leaves out.
      if (inst->attrs().feature_group_count == 1) inst->attrs().feature_group_count.reset();
      if (inst->attrs().batch_group_count == 1) inst->attrs().batch_group_count.reset();
      // A scalar's broadcast may omit `dimensions={}` in HLO; StableHLO always writes dims = [].
      if (inst->opcode() == hlo::HloOpcode::kBroadcast && !inst->attrs().dimensions &&
          inst->operandCount() == 1 && inst->operand(0)->shape().rank() == 0)
        inst->attrs().dimensions = std::vector<int64_t>{};
      if (hasRegions(*inst)) {
        for (const hlo::CalledComputations& called : inst->attrs().called)
          reducers.insert(called.computations.begin(), called.computations.end());
      }
    }
  }
  for (const auto& c : m->computations())
    if (!reducers.count(c.get())) functions.push_back(c.get());
  std::sort(functions.begin(), functions.end(),
            [](const auto* a, const auto* b) { return a->name() < b->name(); });
  std::map<std::string, hlo::HloComputation*> by_body;
  std::map<hlo::HloComputation*, hlo::HloComputation*> representative;
  for (hlo::HloComputation* r : reducers) {
    int n = 0;
    for (const auto& inst : r->instructions()) {
      inst->setName(inst->opcode() == hlo::HloOpcode::kParameter
                        ? "p" + std::to_string(inst->parameterNumber())
                        : "v" + std::to_string(n++));
    }
    r->setName("r");
    representative[r] = by_body.emplace(paramsFirst(*r), r).first->second;
  }
  // Name regions by first use, functions first, then the regions they use, and so on.
  std::vector<hlo::HloComputation*> order = functions;
  for (size_t i = 0; i < order.size(); ++i) {
    for (const auto& inst : order[i]->instructions()) {
      if (!hasRegions(*inst)) continue;
      for (hlo::CalledComputations& called : inst->attrs().called) {
        for (hlo::HloComputation*& c : called.computations) {
          c = representative.at(c);
          if (c->name() == "r") {
            c->setName("region." + std::to_string(order.size() - functions.size()));
            order.push_back(c);
          }
        }
      }
    }
  }
  std::multiset<std::string> out;
  for (hlo::HloComputation* c : order)
    out.insert(paramsFirst(*c));
  return out;
}

TEST(StableHloCorpus, ModulesInTheSubsetRoundTrip) {
  TACIT_REQUIRE_SHARED_DATA("corpus/hlo");
  std::vector<std::filesystem::path> files;
  for (const auto& e : std::filesystem::directory_iterator(
           std::filesystem::path(tacit::testing::sharedDir()) / "corpus" / "hlo"))
    if (e.path().extension() == ".hlo") files.push_back(e.path());
  std::sort(files.begin(), files.end());
  ASSERT_GE(files.size(), 80u);
  int in_subset = 0, outside = 0;
  std::map<std::string, std::string> outside_reasons;
  for (const auto& path : files) {
    std::vector<std::unique_ptr<hlo::HloModule>> modules;
    try {
      modules = hlo::parseModules(readFile(path.string()), path.string());
    } catch (const DiagnosticError&) {
      continue;  // the HLO corpus test owns the files the HLO parser rejects
    }
    for (const auto& m : modules) {
      std::string text;
      try {
        text = printStableHlo(*m);
      } catch (const DiagnosticError& e) {
        ++outside;
        outside_reasons[path.filename().string()] = e.diagnostic().message;
        EXPECT_NE(e.diagnostic().message.find("'"), std::string::npos) << e.what();
        continue;
      }
      ++in_subset;
      SCOPED_TRACE(path.filename().string() + "\n" + text);
      std::unique_ptr<hlo::HloModule> back;
      try {
        back = parseStableHlo(text, "printed.mlir");
      } catch (const DiagnosticError& e) {
        ADD_FAILURE() << e.what();
        continue;
      }
      EXPECT_EQ(back->name(), m->name());
      const std::multiset<std::string> before = normalised(*m), after = normalised(*back);
      std::vector<std::string> lost, gained;
      std::set_difference(before.begin(), before.end(), after.begin(), after.end(),
                          std::back_inserter(lost));
      std::set_difference(after.begin(), after.end(), before.begin(), before.end(),
                          std::back_inserter(gained));
      EXPECT_TRUE(lost.empty() && gained.empty()) << "computations lost:\n"
                                                  << (lost.empty() ? "" : lost[0]) << "gained:\n"
                                                  << (gained.empty() ? "" : gained[0]);
      // The printed StableHLO is a fixed point after one round (which shares identical
      // reducers).
      const std::string again = printStableHlo(*back);
      EXPECT_EQ(printStableHlo(*parseStableHlo(again, "again.mlir")), again);
    }
  }
  std::string listing;
  for (const auto& [file, why] : outside_reasons)
    listing += "  " + file + ": " + why + "\n";
  std::cout << in_subset << " modules in the subset round-trip; " << outside
            << " have instructions outside it:\n"
            << listing;
  EXPECT_GT(in_subset, 40);
}

}  // namespace
}  // namespace tacit::stablehlo
