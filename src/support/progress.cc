#include "support/progress.h"

#include <unistd.h>

namespace tacit {

TerminalProgress::TerminalProgress(std::FILE* out, int tty, std::chrono::milliseconds delay,
                                   std::chrono::milliseconds interval)
    : out_(out),
      tty_(tty < 0 ? isatty(fileno(out)) == 1 : tty != 0),
      delay_(delay),
      interval_(interval),
      start_(Clock::now()),
      last_(start_ - interval) {}

TerminalProgress::~TerminalProgress() {
  finish();
}

void TerminalProgress::update(const std::string& status) {
  if (!tty_) return;
  const Clock::time_point now = Clock::now();
  if (now - start_ < delay_ || now - last_ < interval_) return;
  last_ = now;
  std::string line = status.substr(0, status.find('\n'));
  if (line.size() > 100) line = line.substr(0, 97) + "...";
  // Carriage return, the line, then erase to its end (ANSI EL): the previous status disappears.
  std::fprintf(out_, "\r%s\033[K", line.c_str());
  std::fflush(out_);
  shown_ = true;
}

void TerminalProgress::finish() {
  if (!shown_) return;
  std::fprintf(out_, "\r\033[K");
  std::fflush(out_);
  shown_ = false;
}

}  // namespace tacit
