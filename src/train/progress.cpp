#include "train/progress.h"

#include <fmt/format.h>

#include <cmath>
#include <cstdio>

namespace nnbench::train {

std::string duration_text(double seconds) {
  if (seconds < 10) return fmt::format("{:.1f} s", seconds);
  const auto s = static_cast<int64_t>(std::llround(seconds));
  if (s < 60) return fmt::format("{} s", s);
  if (s < 3600) return fmt::format("{} min {:02} s", s / 60, s % 60);
  return fmt::format("{} h {:02} min", s / 3600, s % 3600 / 60);
}

std::string progress_line(int epoch, int epochs, int64_t step, int64_t steps,
                          double seconds) {
  std::string line =
      fmt::format("epoch {}/{}: {}/{} steps", epoch, epochs, step, steps);
  if (step <= 0 || seconds <= 0) return line;
  const double rate = static_cast<double>(step) / seconds;
  return line +
         fmt::format(", {:.1f} steps/s, epoch ends in {}", rate,
                     duration_text(static_cast<double>(steps - step) / rate));
}

void Progress::step(int epoch, int epochs, int64_t step, int64_t steps,
                    util::Clock::time_point start) {
  if (!on_) return;
  const auto now = util::Clock::now();
  const auto since = shown_ ? last_ : start;
  if (std::chrono::duration<double>(now - since).count() < 0.25) return;
  show(progress_line(epoch, epochs, step, steps,
                     std::chrono::duration<double>(now - start).count()));
}

void Progress::say(const std::string& line) {
  if (!on_ || (shown_ && util::seconds_since(last_) < 0.25)) return;
  show(line);
}

void Progress::show(const std::string& line) {
  // Carriage return, the line, then erase what a longer one left.
  std::fprintf(stderr, "\r%s\033[K", line.c_str());
  std::fflush(stderr);
  shown_ = true;
  last_ = util::Clock::now();
}

void Progress::clear() {
  if (!on_ || !shown_) return;
  std::fputs("\r\033[K", stderr);
  std::fflush(stderr);
  shown_ = false;
}

}  // namespace nnbench::train
