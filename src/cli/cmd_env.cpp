// `nnbench env`: what results would be measured on, and what distorts them.
#include <fmt/core.h>

#include <optional>

#include "cli/app.h"
#include "cli/commands.h"
#include "cli/options.h"
#include "cli/session.h"
#include "machine/bandwidth.h"
#include "machine/environment.h"
#include "machine/threads.h"
#include "results/limits.h"

namespace nnbench::cli {
namespace {

struct EnvArgs {
  bool json = false, peak = true, bandwidth = true;
  int threads = 0;
};

// A value on one line: strings as they are, lists joined by commas,
// objects as "key: value" pairs (e.g. a backend's libraries and devices).
std::string plain(const nlohmann::json& v) {
  if (v.is_string()) return v.get<std::string>();
  std::string out;
  if (v.is_array())
    for (const auto& x : v) out += (out.empty() ? "" : ", ") + plain(x);
  else if (v.is_object())
    for (const auto& [k, x] : v.items())
      out += (out.empty() ? "" : "; ") + k + ": " + plain(x);
  else
    out = v.dump();
  return out;
}

void print_text(const nlohmann::json& env, const machine::Peak& peak,
                const std::optional<machine::Bandwidth>& bw) {
  for (const auto& [key, value] : env.items()) {
    if (value.is_object()) {
      fmt::print("{}\n", key);
      for (const auto& [k, v] : value.items())
        fmt::print("  {:<20} {}\n", k, plain(v));
    } else {
      fmt::print("{:<22} {}\n", key, plain(value));
    }
  }
  if (peak.gflops > 0)
    fmt::print("{:<22} {:.1f} GFLOP/s ({})\n", "measured_peak", peak.gflops,
               peak.method);
  if (peak.bf16_gflops > 0)
    fmt::print("{:<22} {:.1f} GFLOP/s ({})\n", "measured_peak_bf16",
               peak.bf16_gflops, peak.bf16_method);
  for (const auto& g : peak.gemms)
    fmt::print("  {:<20} {:.1f} GFLOP/s: {} {} ({})\n", "gemm", g.gflops,
               g.library, g.precision, g.kernel);
  const auto& t = peak.theoretical;
  if (t.fp32_gflops > 0)
    fmt::print(
        "{:<22} fp32 {:.1f}, bf16 {:.1f} GFLOP/s: {} x {:.3f} GHz x {} "
        "cores ({}); clock: {}\n",
        "theoretical_peak", t.fp32_gflops, t.bf16_gflops,
        t.fp32_flops_per_cycle, t.ghz, t.cores, t.units, t.clock_source);
  if (bw)
    fmt::print(
        "{:<22} read {:.1f} GB/s, triad {:.1f} GB/s, copy {:.1f} "
        "GB/s ({})\n",
        "memory_bandwidth", bw->read_gbs, bw->triad_gbs, bw->copy_gbs,
        bw->method);
}

int env_command(const EnvArgs& a) {
  const machine::Environment env = capture_and_warn();
  machine::Peak peak;
  if (a.peak)
    peak = measure_peak(machine::resolve_threads(a.threads), &env.cpu);
  // The ceiling of work that reads every byte once (docs/performance.md).
  std::optional<machine::Bandwidth> bw;
  if (a.bandwidth)
    bw = machine::measure_bandwidth(
        machine::resolve_threads(a.threads),
        machine::stream_array_bytes(env.cpu,
                                    machine::available_memory_bytes()));
  nlohmann::json j = machine::to_json(env);
  if (a.json) {
    fmt::print("{}\n",
               nlohmann::json{{"environment", j},
                              {"peak", machine::to_json(peak)},
                              {"memory_bandwidth",
                               bw ? machine::to_json(*bw) : nlohmann::json()}}
                   .dump(2));
  } else {
    print_text(j, peak, bw);
  }
  return kExitOk;
}

}  // namespace

Action add_env(CLI::App& app) {
  auto a = std::make_shared<EnvArgs>();
  app.add_flag("--json", a->json, "Print as JSON");
  app.add_flag("!--no-peak", a->peak, "Skip the GEMM peak calibration");
  app.add_flag("!--no-bandwidth", a->bandwidth,
               "Skip the memory bandwidth measurement (STREAM copy and "
               "triad, a read)");
  app.add_option(
         "--threads", a->threads,
         "Threads for the peak calibration and the bandwidth measurement "
         "(0: all usable CPUs; at most 1024)")
      ->check(non_negative(results::kMaxThreads));
  return [a] { return env_command(*a); };
}

}  // namespace nnbench::cli
