#include "study/max_batch.h"

#include "data/manifest.h"

namespace nnbench::study {

PlannedCase probe_case(const PlannedCase& base, int64_t batch) {
  PlannedCase p = base;
  auto& r = p.c.request;
  r.batch = batch;
  r.warmup = {1, 0, r.warmup.max_seconds};
  r.stop.min_iterations = 2;
  r.stop.min_seconds = 0;
  results::set_max_relative_ci(r.stop, 0);
  r.memory_check = false;  // the probe itself finds out
  p.repetition = 0;
  p.key = data::sha256_hex(case_json(p).dump());
  return p;
}

MaxBatch find_max_batch(const PlannedCase& base, int64_t cap,
                        const Probe& probe) {
  MaxBatch m;
  // ok: fits; oom: does not; anything else ends the search, stated.
  const auto fits = [&](int64_t b) -> int {
    const auto r = probe(probe_case(base, b));
    ++m.probes;
    if (r->state == results::State::kOk) return 1;
    if (r->state == results::State::kOom) return 0;
    m.why = "batch " + std::to_string(b) + ": " +
            results::state_name(r->state) + " (" + r->message + ")";
    return -1;
  };
  int64_t lo = 0, hi = 0;  // lo fits, hi does not (0: none seen)
  for (int64_t b = 1; b <= cap; b *= 2) {
    const int f = fits(b);
    if (f < 0) {
      m.batch = lo;
      return m;
    }
    if (f == 0) {
      hi = b;
      break;
    }
    lo = b;
  }
  if (hi == 0) {  // the cap stopped it
    m.batch = lo;
    return m;
  }
  while (hi - lo > 1) {
    const int64_t mid = lo + (hi - lo) / 2;
    const int f = fits(mid);
    if (f < 0) {
      m.batch = lo;
      return m;
    }
    (f ? lo : hi) = mid;
  }
  m.batch = lo;
  m.bounded = true;
  return m;
}

}  // namespace nnbench::study
