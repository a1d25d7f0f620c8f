#include "backend/schedule.h"

#include <nlohmann/json.hpp>

#include "support/diagnostic.h"
#include "support/strings.h"

namespace tacit::backend {
namespace {

// The line and column of byte `at` of `text` (1-based).
SourceLoc locationOf(const std::string& text, size_t at) {
  SourceLoc loc{1, 1};
  for (size_t i = 0; i < at && i < text.size(); ++i) {
    if (text[i] == '\n') {
      ++loc.line;
      loc.col = 1;
    } else {
      ++loc.col;
    }
  }
  return loc;
}

std::vector<int64_t> integers(const nlohmann::json& j, const char* member,
                              const std::string& file) {
  auto it = j.find(member);
  if (it == j.end() || !it->is_array())
    fail(file, {1, 1}, std::string("a schedule needs \"") + member + "\", an array of integers",
         R"(e.g. {"tile": [16, 16], "order": [0, 1]})");
  std::vector<int64_t> out;
  for (const nlohmann::json& v : *it) {
    if (!v.is_number_integer())
      fail(file, {1, 1}, std::string("\"") + member + "\" holds " + v.dump() + ", not an integer");
    out.push_back(v.get<int64_t>());
  }
  return out;
}

}  // namespace

std::string TileSchedule::json() const {
  std::string out = "{\"tile\": [" + join(tile, ", ") + "], \"order\": [" + join(order, ", ") + "]";
  if (contraction > 0)
    out += ", \"contraction\": " + std::to_string(contraction) +
           ", \"accumulator\": " + quote(accumulator, Escapes::kJson);
  if (buffers != 1) out += ", \"buffers\": " + std::to_string(buffers);
  if (reassociate) out += ", \"reassociate\": true";
  return out + "}\n";
}

TileSchedule TileSchedule::parse(const std::string& text, const std::string& file) {
  // Limits: a schedule is a few dozen bytes, an object of arrays (depth 2).
  constexpr size_t kMaxBytes = 1 << 16;
  constexpr int kMaxDepth = 2;
  if (text.size() > kMaxBytes)
    fail(file, {1, 1},
         "a schedule of " + std::to_string(text.size()) + " bytes is larger than " +
             std::to_string(kMaxBytes));
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(text, [&](int depth, nlohmann::json::parse_event_t, nlohmann::json&) {
      if (depth > kMaxDepth)
        fail(file, {1, 1}, "a schedule nests no deeper than an object of arrays",
             R"(e.g. {"tile": [16, 16], "order": [0, 1]})");
      return true;
    });
  } catch (const nlohmann::json::parse_error& e) {
    fail(file, locationOf(text, e.byte > 0 ? e.byte - 1 : 0),
         "the schedule is not JSON: " + std::string(e.what()));
  } catch (const nlohmann::json::exception& e) {  // a number out of range (1.5e600)
    fail(file, {1, 1}, "the schedule is not JSON that tacit reads: " + std::string(e.what()));
  }
  if (!j.is_object()) fail(file, {1, 1}, "a schedule is a JSON object");
  for (const auto& [key, value] : j.items()) {
    if (key != "tile" && key != "order" && key != "contraction" && key != "accumulator" &&
        key != "buffers" && key != "reassociate")
      fail(file, {1, 1}, "unknown schedule member \"" + key + "\"",
           "members: tile, order, contraction, accumulator, buffers, reassociate");
  }
  TileSchedule s{integers(j, "tile", file), integers(j, "order", file), 0, ""};
  if (auto c = j.find("contraction"); c != j.end()) {
    if (!c->is_number_integer() || c->get<int64_t>() < 1)
      fail(file, {1, 1}, "\"contraction\" is a block size (a positive integer), not " + c->dump());
    s.contraction = c->get<int64_t>();
    auto a = j.find("accumulator");
    if (a == j.end() || !a->is_string())
      fail(file, {1, 1}, "a split contraction needs \"accumulator\": the buffer that carries it",
           R"(e.g. "contraction": 64, "accumulator": "acc")");
    s.accumulator = a->get<std::string>();
  } else if (j.contains("accumulator")) {
    fail(file, {1, 1}, "\"accumulator\" without \"contraction\"");
  }
  if (auto b = j.find("buffers"); b != j.end()) {
    if (!b->is_number_integer() || b->get<int64_t>() < 1 || b->get<int64_t>() > kMaxBuffers)
      fail(file, {1, 1},
           "\"buffers\" is a number of copies in [1, " + std::to_string(kMaxBuffers) + "], not " +
               b->dump());
    s.buffers = b->get<int64_t>();
  }
  if (auto r = j.find("reassociate"); r != j.end()) {
    if (!r->is_boolean()) fail(file, {1, 1}, "\"reassociate\" is true or false, not " + r->dump());
    s.reassociate = r->get<bool>();
    if (s.reassociate && s.contraction == 0)
      fail(file, {1, 1}, "\"reassociate\" marks a split contraction: it needs \"contraction\"");
  }
  return s;
}

}  // namespace tacit::backend
