// Progress of long work on a terminal (`tacit compile`, `tacit optimize`): one status line on
// stderr, rewritten in place, that appears only once the work has taken longer than a delay (a
// second: short runs stay silent) and never when stderr is not a terminal (logs and pipes get no
// carriage returns). Updates are throttled; finish() erases the line.
#pragma once

#include <chrono>
#include <cstdio>
#include <string>

namespace tacit {

class TerminalProgress {
 public:
  using Clock = std::chrono::steady_clock;

  // `tty`: whether `out` is a terminal (isatty); the default asks the system about stderr.
  explicit TerminalProgress(std::FILE* out = stderr, int tty = -1,
                            std::chrono::milliseconds delay = std::chrono::milliseconds(1000),
                            std::chrono::milliseconds interval = std::chrono::milliseconds(100));
  ~TerminalProgress();
  TerminalProgress(const TerminalProgress&) = delete;
  TerminalProgress& operator=(const TerminalProgress&) = delete;

  // Shows `status` (cut to one line of at most 100 characters) if the delay has passed and the
  // last update was at least `interval` ago.
  void update(const std::string& status);
  // Erases the status line, if one was shown.
  void finish();
  // Whether updates can show (stderr is a terminal): callers skip building status text if not.
  bool active() const { return tty_; }

 private:
  std::FILE* out_;
  bool tty_;
  std::chrono::milliseconds delay_, interval_;
  Clock::time_point start_, last_;
  bool shown_ = false;
};

}  // namespace tacit
