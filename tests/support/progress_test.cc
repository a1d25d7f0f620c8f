// The terminal progress line (support/progress.h): silent when not a terminal or before the
// delay, one rewritten line when it shows, erased by finish().
#include "support/progress.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <string>
#include <thread>

namespace tacit {
namespace {

// What `fn` writes to a temporary FILE.
template <typename Fn>
std::string written(Fn fn) {
  std::FILE* f = std::tmpfile();
  fn(f);
  std::fflush(f);
  std::string out;
  std::rewind(f);
  for (int c = std::fgetc(f); c != EOF; c = std::fgetc(f))
    out += static_cast<char>(c);
  std::fclose(f);
  return out;
}

TEST(TerminalProgress, IsSilentWhenNotATerminal) {
  EXPECT_EQ(written([](std::FILE* f) {
              TerminalProgress p(f, /*tty=*/0, std::chrono::milliseconds(0));
              EXPECT_FALSE(p.active());
              p.update("phase 1: iteration 1");
            }),
            "");
  // A file is not a terminal: the default asks the system.
  EXPECT_EQ(written([](std::FILE* f) {
              TerminalProgress p(f, -1, std::chrono::milliseconds(0));
              p.update("phase 1");
            }),
            "");
}

TEST(TerminalProgress, WaitsForTheDelayThenRewritesOneLineAndErasesIt) {
  EXPECT_EQ(written([](std::FILE* f) {
              TerminalProgress p(f, 1, std::chrono::milliseconds(60000));
              p.update("too early");
            }),
            "");
  const std::string out = written([](std::FILE* f) {
    TerminalProgress p(f, 1, std::chrono::milliseconds(0), std::chrono::milliseconds(0));
    p.update("phase 1: iteration 1\nsecond line dropped");
    p.update(std::string(150, 'x'));
    p.finish();
    p.finish();  // once
  });
  EXPECT_EQ(out, "\rphase 1: iteration 1\033[K\r" + std::string(97, 'x') + "...\033[K\r\033[K");
}

TEST(TerminalProgress, ThrottlesUpdates) {
  const std::string out = written([](std::FILE* f) {
    TerminalProgress p(f, 1, std::chrono::milliseconds(0), std::chrono::milliseconds(60000));
    p.update("first");
    p.update("dropped: within the interval");
  });
  EXPECT_EQ(out, "\rfirst\033[K\r\033[K");  // the destructor erases the line
}

}  // namespace
}  // namespace tacit
