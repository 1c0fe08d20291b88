#pragma once
// A training run's progress on a terminal: one line on stderr, rewritten in
// place at most a few times a second, so that a long first epoch does not
// look like a hang. Off unless asked (the CLI asks when stderr is a
// terminal): logs and captured output get nothing.
#include <cstdint>
#include <string>

#include "util/clock.h"

namespace nnbench::train {

// "epoch 2/10: 120/469 steps, 35.2 steps/s, epoch ends in 10 s": where an
// epoch is, its rate so far and the time its remaining steps take at that
// rate (no rate and no estimate before a step has ended).
std::string progress_line(int epoch, int epochs, int64_t step, int64_t steps,
                          double seconds);

// "0.4 s", "42 s", "3 min 20 s", "2 h 05 min".
std::string duration_text(double seconds);

class Progress {
 public:
  explicit Progress(bool on) : on_(on) {}
  ~Progress() { clear(); }
  // After each step; prints when a quarter second has passed since the
  // last line (or since `start`).
  void step(int epoch, int epochs, int64_t step, int64_t steps,
            util::Clock::time_point start);
  // A phase without steps ("epoch 2/10: evaluating"), unless a line was
  // shown less than a quarter second ago.
  void say(const std::string& line);
  // Erases the line, so what is printed next starts clean.
  void clear();

 private:
  void show(const std::string& line);
  bool on_;
  bool shown_ = false;
  util::Clock::time_point last_{};
};

}  // namespace nnbench::train
