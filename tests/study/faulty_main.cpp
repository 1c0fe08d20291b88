// nnbench with one more backend, "faulty", for the isolation tests: it runs
// the reference's arithmetic for most models and misbehaves for three, as a
// real engine sometimes does: mnist-cnn aborts, fcn-r hangs, alexnet-r asks
// for far more memory than any limit allows, lstm-ptb runs out of memory
// above batch 12.
#include <chrono>
#include <cstdlib>
#include <thread>
#include <vector>

#include "backend/optimizer.h"
#include "backend/registry.h"
#include "cli/app.h"
#include "machine/env_fixes.h"

namespace {

using namespace nnbench;

class Faulty : public backend::Backend {
 public:
  std::string name() const override { return "faulty"; }
  std::string version() const override { return "faulty 1"; }
  backend::Description describe() const override {
    return {name(), {}, {}, {"cpu"}, {"fp32"}, backend::known_optimizers()};
  }
  backend::Support supports(const model::Layer&,
                            const backend::Options& o) const override {
    return backend::supports_options(describe(), o);
  }
  std::unique_ptr<backend::Executable> compile(
      const model::Model& m, const backend::Options& o,
      const backend::Shapes& shapes) override {
    if (m.name == "mnist-cnn") std::abort();
    if (m.name == "fcn-r")
      for (;;) std::this_thread::sleep_for(std::chrono::seconds(1));
    if (m.name == "alexnet-r") {
      std::vector<char> huge(size_t{64} << 30);  // 64 GiB, never touched
      huge[0] = 1;
    }
    if (m.name == "lstm-ptb" && shapes.train_batch > 12)
      throw backend::OutOfMemory("faulty: lstm-ptb fits batches up to 12");
    return backend::make_backend(backend::kOracle)->compile(m, o, shapes);
  }
};

}  // namespace

int main(int argc, char** argv) {
  machine::apply_environment_fixes(argv);
  backend::register_backend("faulty",
                            []() -> std::unique_ptr<backend::Backend> {
                              return std::make_unique<Faulty>();
                            });
  return cli::main(argc, argv);
}
