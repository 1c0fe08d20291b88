#include "engines/onednn/onednn_backend.h"

#include <cmath>
#include <string>

#include "backend/optimizer.h"
#include "engines/onednn/cpu_isa.h"
#include "engines/onednn/executable.h"
#include "engines/onednn/gemm_rate.h"
#include "engines/onednn/generator.h"
#include "engines/onednn/graph.h"
#include "engines/onednn/threads.h"
#include "util/error.h"

namespace nnbench::engines::onednn {
namespace {

// What this CPU runs, detected (oneDNN's effective ISA), never assumed.
std::string precisions_here() {
  if (cpu_has_bf16())
    return "fp32, bf16 and int8 inference on this CPU (oneDNN ISA " +
           cpu_isa_name() + ")";
  return "fp32 and int8 inference on this CPU; bf16 needs AVX512-BF16, "
         "which its oneDNN ISA " +
         cpu_isa_name() + " lacks";
}

// int8 runs quantized conv and linear layers between fp32 values.
Dt data_type(const std::string& precision) {
  if (precision == "fp32" || precision == "int8") return Dt::f32;
  if (precision != "bf16")
    throw backend::Unimplemented("precision " + precision +
                                 " (the oneDNN backend runs " +
                                 precisions_here() + ")");
  if (!cpu_has_bf16())
    throw backend::Unimplemented(
        "precision bf16 needs AVX512-BF16 (oneDNN ISA avx512_core_bf16 or "
        "later); this CPU's is " +
        cpu_isa_name());
  return Dt::bf16;
}

// The version of the libdnnl this process loaded.
std::string library() {
  const dnnl_version_t* v = dnnl_version();
  return std::to_string(v->major) + "." + std::to_string(v->minor) + "." +
         std::to_string(v->patch);
}

class OnednnBackend : public backend::Backend {
 public:
  std::string name() const override { return "onednn"; }
  std::string version() const override { return "oneDNN " + library(); }
  backend::Description describe() const override {
    std::vector<std::string> precisions = {"fp32"};
    if (cpu_has_bf16()) precisions.push_back("bf16");
    precisions.push_back("int8");
    return {name(),
            {.data_parallel = true,
             .overlap = false,
             .lr_schedules = true,
             .running_stats = true},
            // What oneDNN dispatches to here (ONEDNN_MAX_CPU_ISA caps
            // it), beside its version: `nnbench env` shows both.
            {{"oneDNN", library()}, {"oneDNN ISA", cpu_isa_name()}},
            {"cpu"},
            precisions,
            backend::known_optimizers(),
            {},
            {"int8"}};  // post-training quantization: nothing trains in int8
  }
  backend::Support supports(const model::Layer& l,
                            const backend::Options& o) const override {
    if (auto s = backend::supports_options(describe(), o); !s) return s;
    // The gaps check_supported finds from attributes alone; those that
    // depend on shapes (linear on more than [T, F], average pooling in ceil
    // mode with padding) are found by compile.
    if (l.op == model::Op::kLrn && l.size % 2 == 0)
      return backend::Support::no("layer '" + l.name + "' (lrn): even size " +
                                  std::to_string(l.size));
    return backend::Support::yes();
  }
  std::unique_ptr<backend::Executable> compile(
      const model::Model& m, const backend::Options& o,
      const backend::Shapes& shapes) override {
    // A device it does not have is a gap, as on every backend
    // (docs/backends.md): unimplemented, naming it.
    if (o.device != "cpu")
      throw backend::Unimplemented("device " + o.device + " (onednn has: cpu)");
    const Dt dt = data_type(o.precision);
    check_supported(m);
    backend::HostOptimizer check(o);  // throws for what it cannot run
    if (o.threads > 0) set_threads(o.threads);
    return make_executable(m, o, dt, shapes);
  }
  backend::Support supports_shapes(const model::Model& m,
                                   const backend::Options& o) const override {
    try {
      check_supported(m);  // what compile checks first
    } catch (const backend::Unimplemented& e) {
      return backend::Support::no(e.what());
    }
    return backend::Support::yes();
  }
  std::unique_ptr<backend::Generator> generator(
      const model::Model& m, const backend::Options& o,
      const backend::GenerationShape& shape) override {
    check_supported(m);
    return make_generator(m, o, shape, data_type(o.precision));
  }
  std::vector<backend::GemmRate> time_gemms(int threads, int n) override {
    return time_matmuls(threads, n);
  }
};

}  // namespace

std::unique_ptr<backend::Backend> make_backend() {
  return std::make_unique<OnednnBackend>();
}

}  // namespace nnbench::engines::onednn
