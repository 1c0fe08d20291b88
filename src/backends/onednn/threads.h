#pragma once
// The thread count of oneDNN's CPU runtime, which is OpenMP (libgomp) in
// Debian's build.

namespace nnbench::backends::onednn {

void set_threads(int n);
int max_threads();

}  // namespace nnbench::backends::onednn
