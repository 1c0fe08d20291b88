#pragma once
// The thread count of oneDNN's CPU runtime, which is OpenMP (libgomp) in
// Debian's build.

namespace nnbench::engines::onednn {

void set_threads(int n);
int max_threads();

}  // namespace nnbench::engines::onednn
