// A compile's time budget as the one moment by which its work must end (docs/design.md,
// "Time budgets"). The budget the user gives (`--time-limit`, CompileOptions::time_limit) becomes
// a Deadline once, when the compile starts; saturation, the candidate search, each order's
// allocation, each solver call and each part of a plan check that same moment, and a
// sub-budget (a solver call's own limit) is an earlier Deadline, never a duration counted from a
// start of its own.
#pragma once

#include <algorithm>
#include <chrono>

namespace tacit {

class Deadline {
 public:
  using Clock = std::chrono::steady_clock;

  // No deadline: every check passes, left() is the clock's maximum.
  Deadline() = default;
  explicit Deadline(Clock::time_point at) : at_(at) {}
  // `budget` from now (a budget too large for the clock is no deadline).
  static Deadline after(Clock::duration budget) {
    Clock::time_point now = Clock::now();
    if (budget >= Clock::time_point::max() - now) return Deadline();
    return Deadline(now + budget);
  }

  // Strictly after the moment: work that ends exactly at it was within the budget.
  bool passed() const { return Clock::now() > at_; }
  // Time left, zero once passed.
  Clock::duration left() const { return std::max(at_ - Clock::now(), Clock::duration::zero()); }
  std::chrono::milliseconds leftMilliseconds() const {
    return std::chrono::duration_cast<std::chrono::milliseconds>(left());
  }
  Deadline earlier(Deadline other) const { return Deadline(std::min(at_, other.at_)); }
  Clock::time_point at() const { return at_; }

 private:
  Clock::time_point at_ = Clock::time_point::max();
};

}  // namespace tacit
