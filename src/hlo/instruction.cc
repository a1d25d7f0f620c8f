#include "hlo/instruction.h"

namespace tacit::hlo {

HloInstruction::HloInstruction(HloOpcode opcode, std::string name, Shape shape)
    : opcode_(opcode),
      opcode_spelling_(opcodeName(opcode)),
      name_(std::move(name)),
      shape_(std::move(shape)) {}

void HloInstruction::setUnknownOpcodeSpelling(std::string spelling) {
  opcode_ = HloOpcode::kUnknown;
  opcode_spelling_ = std::move(spelling);
}

bool HloInstruction::isRoot() const {
  return parent_ != nullptr && parent_->root() == this;
}

HloComputation* HloInstruction::called(std::string_view attribute, size_t i) const {
  for (const CalledComputations& c : attrs_.called) {
    if (c.attribute == attribute) return i < c.computations.size() ? c.computations[i] : nullptr;
  }
  return nullptr;
}

const RawAttribute* HloInstruction::raw(std::string_view name) const {
  for (const RawAttribute& r : attrs_.raw) {
    if (r.name == name) return &r;
  }
  return nullptr;
}

HloComputation::HloComputation(std::string name) : name_(std::move(name)) {}

bool HloComputation::isEntry() const {
  return parent_ != nullptr && parent_->entry() == this;
}

HloInstruction* HloComputation::addInstruction(std::unique_ptr<HloInstruction> instruction) {
  instruction->parent_ = this;
  HloInstruction* raw = instruction.get();
  instructions_.push_back(std::move(instruction));
  if (raw->opcode() == HloOpcode::kParameter && raw->parameterNumber() >= 0) {
    auto n = static_cast<size_t>(raw->parameterNumber());
    if (parameters_.size() <= n) parameters_.resize(n + 1, nullptr);
    parameters_[n] = raw;
  }
  return raw;
}

HloInstruction* HloComputation::findInstruction(std::string_view name) const {
  for (const auto& inst : instructions_) {
    if (inst->name() == name) return inst.get();
  }
  return nullptr;
}

HloModule::HloModule(std::string name) : name_(std::move(name)) {}

HloComputation* HloModule::addComputation(std::unique_ptr<HloComputation> computation) {
  computation->parent_ = this;
  computations_.push_back(std::move(computation));
  return computations_.back().get();
}

HloComputation* HloModule::findComputation(std::string_view name) const {
  for (const auto& c : computations_) {
    if (c->name() == name) return c.get();
  }
  return nullptr;
}

std::string_view comparisonDirectionName(ComparisonDirection d) {
  switch (d) {
    case ComparisonDirection::kEq:
      return "EQ";
    case ComparisonDirection::kNe:
      return "NE";
    case ComparisonDirection::kGe:
      return "GE";
    case ComparisonDirection::kGt:
      return "GT";
    case ComparisonDirection::kLe:
      return "LE";
    case ComparisonDirection::kLt:
      return "LT";
  }
  return "EQ";
}

std::string_view comparisonTypeName(ComparisonType t) {
  switch (t) {
    case ComparisonType::kFloat:
      return "FLOAT";
    case ComparisonType::kTotalOrder:
      return "TOTALORDER";
    case ComparisonType::kSigned:
      return "SIGNED";
    case ComparisonType::kUnsigned:
      return "UNSIGNED";
  }
  return "FLOAT";
}

}  // namespace tacit::hlo
