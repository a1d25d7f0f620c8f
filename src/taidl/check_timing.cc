// The timing model's declarations (docs/taidl.md section 3.5): engines and the memory interface.
// Their settings are constant expressions, folded here; the timing clauses of instructions are
// resolved with the rest of the body (check_body.cc).
#include <algorithm>

#include "support/strings.h"
#include "taidl/check.h"

namespace tacit::taidl {
namespace {

// Largest value of any timing setting: a queue of a million entries or a latency of a billion
// cycles is already a description error, and the simulator's sums stay far from overflow.
constexpr int64_t kMaxSetting = int64_t{1} << 30;

struct SettingRule {
  std::string_view name;
  int64_t min;
  int64_t* out;
};

// Folds each setting into its rule's slot; unknown, repeated or out-of-range settings fail.
void foldSettings(Checker& c, std::vector<CallArg>& settings, std::span<SettingRule> rules,
                  std::string_view owner) {
  Isa& isa = c.isa();
  for (size_t i = 0; i < settings.size(); ++i) {
    CallArg& a = settings[i];
    auto rule = std::find_if(rules.begin(), rules.end(),
                             [&](const SettingRule& r) { return r.name == a.name.text; });
    if (rule == rules.end()) {
      isa.fail(a.name.offset, "unknown setting '" + a.name.text + "' of " + std::string(owner),
               "the settings are " +
                   joinWith(rules, ", ", [](const SettingRule& r) { return std::string(r.name); }));
    }
    for (size_t j = 0; j < i; ++j) {
      if (settings[j].name.text == a.name.text)
        isa.fail(a.name.offset,
                 "setting '" + a.name.text + "' of " + std::string(owner) + " is given twice");
    }
    int64_t v = c.fold(a.value, "setting " + a.name.text + " of " + std::string(owner));
    if (v < rule->min || v > kMaxSetting) {
      isa.fail(a.value.offset(), "setting " + a.name.text + " of " + std::string(owner) +
                                     " must be in [" + std::to_string(rule->min) + ", 2^30], got " +
                                     std::to_string(v));
    }
    *rule->out = v;
  }
}

}  // namespace

void Checker::checkEngine(Engine& e) {
  for (int32_t i = 0; i < engines_checked_; ++i) {
    const Engine& other = isa_.engines[static_cast<size_t>(i)];
    if (other.name.text == e.name.text)
      isa_.fail(e.name.offset, "engine " + e.name.text + " is already declared at " +
                                   isa_.locText(other.name.offset));
  }
  SettingRule rules[] = {{"queue", 1, &e.queue}};
  foldSettings(*this, e.settings, rules, "engine " + e.name.text);
  ++engines_checked_;
}

void Checker::checkMemory(MemoryPort& m) {
  bool has_beat = std::any_of(m.settings.begin(), m.settings.end(),
                              [](const CallArg& a) { return a.name.text == "beat"; });
  if (!has_beat)
    isa_.fail(m.offset, "the memory interface needs its bus width",
              "memory(beat = BYTES_PER_CYCLE, request = BYTES, in_flight = N, latency = CYCLES)");
  SettingRule rules[] = {{"beat", 1, &m.beat},
                         {"request", 1, &m.request},
                         {"in_flight", 1, &m.in_flight},
                         {"latency", 0, &m.latency}};
  m.request = 0;
  foldSettings(*this, m.settings, rules, "the memory interface");
  if (m.request == 0) m.request = m.beat;  // default: one beat per request
}

int32_t Checker::engineDeclared(const Ident& name) const {
  for (int32_t i = 0; i < engines_checked_; ++i) {
    if (isa_.engines[static_cast<size_t>(i)].name.text == name.text) return i;
  }
  std::string hint;
  if (isa_.findEngine(name.text) >= 0)
    hint = "engine " + name.text + " is declared later; declarations must precede their uses";
  else if (engines_checked_ == 0)
    hint = "declare it first: engine " + name.text + "(queue = N);";
  else
    hint = "the engines are " +
           joinWith(std::span(isa_.engines.data(), static_cast<size_t>(engines_checked_)), ", ",
                    [](const Engine& e) { return e.name.text; });
  isa_.fail(name.offset, "unknown engine '" + name.text + "'", hint);
}

}  // namespace tacit::taidl
