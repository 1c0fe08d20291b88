#pragma once
// The studies' question asked of one run: which engine is fastest here, per
// model? In each cell (model, mode, precision, batch, threads) the engines
// that measured a valid time are ranked by median and the fastest is
// compared with the runner-up by compare_case (ratio of medians, bootstrap
// interval, Mann-Whitney); each model then gets one verdict line from its
// headline cell (one two engines ran in; training at the most threads, the
// studies' figure) and a count over its other cells. A difference the
// statistics cannot support is called a tie. Beside the verdict, every
// engine far behind the fastest (kFarBehind) or with no valid time in one of
// the model's cells is named with the reason its records give, so a slow
// engine is never left for a reader to find in the table.
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "compare/compare.h"
#include "results/result.h"

namespace nnbench::compare {

// One process per engine measures only that process's noise; on this
// machine processes of one case differed by 3-13 % (docs/compare.md), so a
// smaller difference between engines is a tie.
inline Options engine_options() {
  Options o;
  o.min_repetitions = 1;
  o.noise = 0.10;
  return o;
}

struct Cell {
  std::string name;                // "train b64 t2"
  std::string fastest, runner_up;  // "" when fewer than two engines ran
  double speedup = 0;              // runner-up's median / fastest's
  results::Interval speedup_ci;    // 95 %, bootstrap
  bool tie = false;
  std::string why;  // compare's reason
};

// An engine whose median is more than this many times the fastest's in a
// cell is "far behind" (docs/report.md): beyond any noise of one process
// per engine, a gap a reader must hear about whatever the verdict says.
inline constexpr double kFarBehind = 2.0;

// Whether `median` is far behind `fastest`: false when either was not
// measured (a missing median is never 0, nor infinitely slow).
bool far_behind(std::optional<double> median, std::optional<double> fastest);

// An engine far behind the fastest in a model's cells, or one that ran no
// valid time in them, with what its records say about why.
struct Behind {
  std::string engine;
  std::string cell;     // the cell shown: the headline's, else the worst
  std::string fastest;  // that cell's fastest engine; "" with no time
  // Its median over the fastest's; none when it ran no valid time.
  std::optional<double> factor;
  int cells = 0;    // the model's cells where it was far behind (or had none)
  int of = 0;       // the model's cells it was asked to run in
  std::string why;  // from the records: "reference kernels: ...",
                    // "unimplemented (layer 'lstm_1' (lstm))"
};

// "onednn 5.60x behind torch in fp32 train b64 t2 (more than 2x in 2 of its
// 4 cells): reference kernels: conv2d_1 convolution ref:any": the one text
// of it that the terminal and the report show.
std::string behind_text(const Behind& b);
// The heading over the list of them, naming the threshold.
std::string behind_heading();

struct ModelVerdict {
  std::string model;
  Cell headline;
  int cells = 0, wins = 0, ties = 0;   // over cells with two engines or more
  std::map<std::string, int> wins_by;  // cells each engine won outright
  std::vector<std::string> engines;    // that measured any valid time
  int asked = 0;     // engines with records for it, those not run here aside
  std::string line;  // the sentence for tables and the report
  // Engines far behind the fastest or with no valid time in any of the
  // model's cells (engines that cannot run on this machine at all, not_run,
  // are said once elsewhere); each engine at most once for each kind.
  std::vector<Behind> behind;
};

std::vector<ModelVerdict> fastest_engines(
    const std::vector<results::RunResult>& runs,
    const Options& o = engine_options());

}  // namespace nnbench::compare
