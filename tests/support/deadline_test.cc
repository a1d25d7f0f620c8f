// support/deadline.h: the one form of a compile's time budget.
#include "support/deadline.h"

#include <gtest/gtest.h>

#include <thread>

namespace tacit {
namespace {

using std::chrono::hours;
using std::chrono::milliseconds;

TEST(Deadline, NoDeadlineNeverPasses) {
  Deadline never;
  EXPECT_FALSE(never.passed());
  EXPECT_GT(never.left(), hours(24 * 365));
  // A budget beyond the clock's range is no deadline rather than an overflowed one in the past.
  EXPECT_FALSE(Deadline::after(Deadline::Clock::duration::max()).passed());
}

TEST(Deadline, PassesAfterItsBudgetAndLeftStopsAtZero) {
  Deadline soon = Deadline::after(milliseconds(2));
  EXPECT_FALSE(Deadline::after(hours(1)).passed());
  std::this_thread::sleep_for(milliseconds(5));
  EXPECT_TRUE(soon.passed());
  EXPECT_EQ(soon.left(), Deadline::Clock::duration::zero());
  EXPECT_EQ(soon.leftMilliseconds(), milliseconds(0));
}

TEST(Deadline, EarlierIsTheSoonerOfTwo) {
  Deadline a = Deadline::after(milliseconds(100)), b = Deadline::after(hours(1));
  EXPECT_EQ(a.earlier(b).at(), a.at());
  EXPECT_EQ(b.earlier(a).at(), a.at());
  EXPECT_EQ(Deadline().earlier(b).at(), b.at());
  EXPECT_LE(a.earlier(b).leftMilliseconds(), milliseconds(100));
}

}  // namespace
}  // namespace tacit
