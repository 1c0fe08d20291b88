#pragma once
// The largest batch that fits: doubling from 1, then bisection between the
// last batch that ran and the first that ran out of memory. Each probe is a
// case of its own (run isolated by the caller) and is stored like any other.
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "results/record.h"
#include "study/plan.h"

namespace nnbench::study {

using Probe =
    std::function<std::unique_ptr<results::Record>(const PlannedCase&)>;

struct MaxBatch {
  int64_t batch = 0;     // the largest that ran (0: not even batch 1)
  bool bounded = false;  // an oom above it was seen (else the cap stopped it)
  std::string why;       // when the search stopped on another state
  int probes = 0;
};

// `base`'s batch is ignored; probes run with short rules (1 warm-up step,
// 2 measured steps), batches up to `cap`.
MaxBatch find_max_batch(const PlannedCase& base, int64_t cap,
                        const Probe& probe);

// The probe case for one batch: `base` with that batch, short rules and a
// key of its own.
PlannedCase probe_case(const PlannedCase& base, int64_t batch);

}  // namespace nnbench::study
