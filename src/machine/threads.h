#pragma once
// The thread count a run uses: the request, or every CPU this process may
// use for a request of 0. Resolved by the harness when it hands options to
// a backend; the request keeps what the user asked (0 stays 0) and the
// backend's `effective` says what ran.

namespace nnbench::machine {

// requested > 0: requested; otherwise the CPUs in this process's affinity
// mask (at least 1).
int resolve_threads(int requested);

}  // namespace nnbench::machine
