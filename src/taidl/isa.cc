#include "taidl/isa.h"

namespace tacit::taidl {
namespace {

template <typename List>
int32_t findByName(const List& list, std::string_view name) {
  for (size_t i = 0; i < list.size(); ++i) {
    if (list[i].name.text == name) return static_cast<int32_t>(i);
  }
  return -1;
}

}  // namespace

int32_t Isa::findBuffer(std::string_view n) const {
  return findByName(buffers, n);
}
int32_t Isa::findRegister(std::string_view n) const {
  return findByName(registers, n);
}
int32_t Isa::findInstruction(std::string_view n) const {
  return findByName(instructions, n);
}
int32_t Isa::findMacro(std::string_view n) const {
  return findByName(macros, n);
}
int32_t Isa::findParam(std::string_view n) const {
  return findByName(params, n);
}
int32_t Isa::findEngine(std::string_view n) const {
  return findByName(engines, n);
}

const std::string& Isa::fileName() const {
  static const std::string kNone;
  return source ? source->name() : kNone;
}

SourceLoc Isa::loc(uint32_t offset) const {
  return source ? source->locate(offset) : SourceLoc{};
}

std::string Isa::locText(uint32_t offset) const {
  SourceLoc l = loc(offset);
  return fileName() + ":" + std::to_string(l.line) + ":" + std::to_string(l.col);
}

void Isa::fail(uint32_t offset, std::string message, std::string hint) const {
  throw DiagnosticError(makeError(fileName(), loc(offset), std::move(message), std::move(hint)));
}

Diagnostic Isa::warning(uint32_t offset, std::string message, std::string hint) const {
  return makeWarning(fileName(), loc(offset), std::move(message), std::move(hint));
}

std::vector<int64_t> Isa::initialRegisters() const {
  std::vector<int64_t> regs;
  regs.reserve(registers.size());
  for (const Register& r : registers)
    regs.push_back(r.value);
  return regs;
}

std::string Isa::callText(const Instruction& inst, std::span<const int64_t> attrs) const {
  std::string out = inst.name.text + "(";
  for (size_t i = 0; i < inst.attrs.size(); ++i) {
    if (i > 0) out += ", ";
    out += inst.attrs[i].name.text + "=";
    out += i < attrs.size() ? std::to_string(attrs[i]) : "?";
  }
  return out + ")";
}

}  // namespace tacit::taidl
