#include "engines/onednn/threads.h"

#ifdef _OPENMP
#include <omp.h>
#else
#include <dlfcn.h>
#endif

namespace nnbench::engines::onednn {

#ifdef _OPENMP

void set_threads(int n) { omp_set_num_threads(n); }
int max_threads() { return omp_get_max_threads(); }

#else

// This library is not compiled with -fopenmp (src/CMakeLists.txt gives
// nnbench_onednn only DNNL::dnnl), and linking libgomp's API directly fails
// as an indirect dependency. libdnnl loads libgomp, so look the two calls up
// at run time.
namespace {

template <typename F>
F omp_function(const char* name) {
  return reinterpret_cast<F>(dlsym(RTLD_DEFAULT, name));
}

}  // namespace

void set_threads(int n) {
  static const auto f = omp_function<void (*)(int)>("omp_set_num_threads");
  if (f != nullptr) f(n);
}

int max_threads() {
  static const auto f = omp_function<int (*)()>("omp_get_max_threads");
  return f != nullptr ? f() : 1;
}

#endif

}  // namespace nnbench::engines::onednn
