#pragma once
// Runs a probe on a thread of its own, so that the OpenMP thread pool its
// parallel regions make ends with it. libgomp keeps a pool per thread that
// ran a parallel region for as long as that thread lives, and once its
// pools hold more threads than the process has CPUs, every pool's idle
// threads stop spinning between regions (libgomp's throttled spin count)
// and sleep: a two-thread step served from another thread (LoadGen's
// copies, inference/sut.h) then wakes its second thread by a system call
// at every primitive (docs/performance.md). A probe on the main thread (a
// backend's bf16 check, made when its precisions are listed) left such a
// pool behind.
#include <future>
#include <utility>

namespace nnbench::util {

// f() on a new thread, joined (std::async's thread: get() joins it);
// what f throws is rethrown here.
template <typename F>
auto on_own_thread(F f) -> decltype(f()) {
  return std::async(std::launch::async, std::move(f)).get();
}

}  // namespace nnbench::util
