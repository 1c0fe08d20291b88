#include "train/exports.h"

#include <fmt/core.h>
#include <pwd.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdlib>
#include <ctime>

#include "util/error.h"

namespace nnbench::train {
namespace {

std::string login_name() {
  if (const passwd* p = getpwuid(geteuid()); p && p->pw_name && *p->pw_name)
    return p->pw_name;
  for (const char* var : {"USER", "LOGNAME"})
    if (const char* v = std::getenv(var); v && *v) return v;
  return "nnbench";
}

std::string host_name() {
  std::array<char, 256> buf{};
  if (gethostname(buf.data(), buf.size() - 1) != 0 || buf[0] == 0)
    return "localhost";
  return buf.data();
}

bool is_email(const std::string& s) {
  const auto at = s.find('@');
  return at != std::string::npos && at > 0 && at + 1 < s.size() &&
         s.find('@', at + 1) == std::string::npos &&
         std::none_of(s.begin(), s.end(),
                      [](unsigned char c) { return c <= ' '; });
}

void require_one_of(const std::string& field, const std::string& option,
                    const std::string& value,
                    std::initializer_list<const char*> allowed) {
  std::string list;
  for (const char* a : allowed) {
    if (value == a) return;
    list += std::string(list.empty() ? "" : ", ") + a;
  }
  throw Error(fmt::format("{} ({}) must be one of {}; got '{}'", option, field,
                          list, value));
}

// Fields every DAWNBench entry must have (test_submissions.py
// required_fields, training and inference alike).
nlohmann::json common_fields(const TrainRun& r, const ExportInfo& info) {
  return {{"version", "v1.0"},
          {"author", info.who.author},
          {"authorEmail", info.who.email},
          {"framework", fmt::format("nnbench {} backend ({})", r.backend,
                                    r.backend_version)},
          {"model", r.model},
          {"hardware", info.who.platform},
          {"timestamp", utc_date(run_start_ms(r))}};
}

}  // namespace

Submitter with_defaults(Submitter s) {
  if (s.author.empty()) s.author = login_name();
  if (s.email.empty()) s.email = login_name() + "@" + host_name();
  if (s.org.empty()) s.org = s.author;
  return s;
}

void check_submitter(const Submitter& s) {
  if (s.author.empty()) throw Error("--author (DAWNBench author) is empty");
  if (!is_email(s.email))
    throw Error("--author-email (DAWNBench authorEmail) '" + s.email +
                "' is not an email address (name@domain)");
  if (s.org.empty()) throw Error("--org (MLPerf submission_org) is empty");
  if (s.platform.empty())
    throw Error("--platform (MLPerf submission_platform) is empty");
  require_one_of("MLPerf submission_division", "--division", s.division,
                 {"closed", "open"});
  require_one_of("MLPerf submission_status", "--status", s.status,
                 {"cloud", "onprem", "preview", "research"});
}

int64_t run_start_ms(const TrainRun& r) {
  if (r.start_unix_ms > 0) return r.start_unix_ms;
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

std::string utc_date(int64_t unix_ms) {
  const std::time_t t = static_cast<std::time_t>(unix_ms / 1000);
  std::tm tm{};
  gmtime_r(&t, &tm);
  return fmt::format("{:04}-{:02}-{:02}", tm.tm_year + 1900, tm.tm_mon + 1,
                     tm.tm_mday);
}

std::string dawnbench_tsv(const TrainRun& r) {
  std::string out = "epoch\thours\ttop1Accuracy\n";
  for (const auto& e : r.epochs)
    out += fmt::format("{}\t{:.8f}\t{:.2f}\n", e.epoch, e.train_seconds / 3600,
                       e.val_accuracy * 100);
  return out;
}

nlohmann::json dawnbench_entry(const TrainRun& r, const ExportInfo& info) {
  nlohmann::json j = common_fields(r, info);
  if (info.price) j["costPerHour"] = info.price->usd_per_hour;
  // nnbench's own fields; the leaderboard reads time to accuracy off the TSV.
  j["task"] = r.task;
  j["targetAccuracy"] = r.target;
  j["reached"] = r.state == results::State::kConverged;
  j["timeToAccuracyHours"] = r.state == results::State::kConverged
                                 ? nlohmann::json(r.time_to_target / 3600)
                                 : nlohmann::json();
  j["misc"] = {{"seed", r.seed},
               {"state", results::state_name(r.state)},
               {"model_hash", r.model_hash},
               {"init_seconds", r.init_seconds}};
  if (info.price) j["misc"]["price_source"] = info.price->source;
  return j;
}

std::optional<nlohmann::json> dawnbench_inference_entry(
    const TrainRun& r, const ExportInfo& info) {
  if (!r.latency || r.latency->items == 0) return std::nullopt;
  const results::Latency& l = *r.latency;
  const double mean_s = l.mean;
  nlohmann::json j = common_fields(r, info);
  j["latency"] = mean_s * 1e3;
  if (info.price) j["cost"] = info.price->usd_per_hour * mean_s / 3600;
  j["top1Accuracy"] = l.accuracy * 100;
  j["misc"] = {{"task", r.task},
               {"items", l.items},
               {"batch", 1},
               {"p50_ms", l.p50 * 1e3},
               {"p99_ms", l.p99 * 1e3},
               {"timed",
                "infer + synchronize per item; input copy and read-back "
                "of the prediction excluded"},
               {"seed", r.seed},
               {"model_hash", r.model_hash},
               {"training_state", results::state_name(r.state)}};
  if (info.eval_samples > 0) j["misc"]["test_set_size"] = info.eval_samples;
  if (info.price) {
    j["misc"]["costPerHour"] = info.price->usd_per_hour;
    j["misc"]["price_source"] = info.price->source;
  }
  return j;
}

}  // namespace nnbench::train
