// Builds every zoo model on the oneDNN engine, training and inference, at
// every precision the engine offers here, and prints, per build, a CASE
// line, then what oneDNN itself prints while the build creates its
// primitives (run it with ONEDNN_VERBOSE=2: one `create:` line per
// primitive, naming its implementation), then the engine's own record of
// its reference kernels. reference_kernels_test.cpp reads the two against
// each other; running this under ONEDNN_MAX_CPU_ISA checks other ISAs' paths.
#include <cstdio>
#include <exception>
#include <string>

#include "backend/registry.h"
#include "data/synthetic.h"
#include "host/tensor_file.h"
#include "model/zoo/zoo.h"
#include "util/temp_dir.h"

namespace {

using namespace nnbench;

// Prints through stdio, as oneDNN does, so that the lines keep their order.
void line(const std::string& s) {
  std::printf("%s\n", s.c_str());
  std::fflush(stdout);
}

void survey(const std::string& model, bool train, const std::string& precision,
            const std::string& calibration) {
  line("CASE " + model + " " + (train ? "train" : "infer") + " " + precision);
  backend::Options o;
  o.threads = 1;
  o.precision = precision;
  o.calibration = calibration;
  try {
    auto exe = backend::make_backend("onednn")->compile(
        model::zoo::get(model), o,
        train ? backend::Shapes::train(2) : backend::Shapes::infer(2));
    line("RECORD " + exe->effective().extras.at("reference_kernels"));
  } catch (const backend::Unimplemented& e) {
    line(std::string("REFUSED ") + e.what());
  }
}

}  // namespace

int main() {
  try {
    util::TempDir dir("nnbench-kernel-survey");
    auto b = backend::make_backend("onednn");
    for (const auto& name : model::zoo::names()) {
      const model::Model m = model::zoo::get(name);
      const std::string calibration = dir.file(name + ".calibration");
      host::write_tensors(calibration,
                          {{"input", data::synthetic_batch(m, 4, 1).input}});
      for (const auto& precision : b->describe().precisions) {
        if (precision != "int8") survey(name, true, precision, "");
        survey(name, false, precision, calibration);
      }
    }
    line("DONE");
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "survey: %s\n", e.what());
    return 1;
  }
}
