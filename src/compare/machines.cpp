#include "compare/machines.h"

#include <fmt/core.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <tuple>

#include "bench/statistics.h"
#include "results/case_key.h"
#include "results/kinds.h"

namespace nnbench::compare {
namespace {

using nlohmann::json;

std::string text(const json& j, const char* key) {
  if (!j.is_object() || !j.contains(key)) return "";
  const json& v = j.at(key);
  return v.is_string() ? v.get<std::string>() : v.is_null() ? "" : v.dump();
}

std::optional<cost::Instance> priced_instance(const json& i) {
  if (!i.is_object() || !i.value("usd_per_hour", json()).is_number())
    return std::nullopt;
  cost::Instance c;
  c.name = text(i, "name");
  c.provider = text(i, "provider");
  c.pricing = text(i, "pricing");
  c.date = text(i, "price_date");
  c.source = text(i, "price_source");
  c.vcpus = i.value("vcpus", 0);
  c.gpus = i.value("gpus", 0);
  c.usd_per_hour = i.at("usd_per_hour").get<double>();
  c.pro_rata_vcpus = i.value("pro_rata_vcpus", false);
  return c;
}

// One job's records on one machine.
struct Found {
  Side side;
  int threads = 0;
  std::string state;
};

struct Job {
  std::string model, name;
  bool training = false;
  int64_t batch = 0;
  int threads = 0;
  std::map<size_t, Found> on;  // by machine index
};

std::string first_line(const std::string& s) {
  return s.substr(0, s.find('\n'));
}

std::string why_none(const results::Record& r) {
  if (r.state == results::State::kOk || r.state == results::State::kConverged ||
      r.state == results::State::kCompleted)
    return r.validity.valid() ? "no time" : r.validity.summary();
  const std::string m = first_line(r.message);
  return results::state_name(r.state) + (m.empty() ? "" : " (" + m + ")");
}

// Tells apart machines whose labels coincide by their host hash's digits.
void distinct_labels(std::vector<MachineId>& ms, const std::vector<json>& env) {
  std::map<std::string, int> seen;
  for (const auto& m : ms) ++seen[m.label];
  for (size_t i = 0; i < ms.size(); ++i) {
    if (seen[ms[i].label] < 2) continue;
    const std::string host = text(env[i], "host");
    ms[i].label += host.size() > 11 ? " #" + host.substr(7, 4)
                                    : " #" + std::to_string(i + 1);
  }
}

// `second`'s time over `first`'s; times `scale` (the prices' ratio) for a
// cost. A time is decided by compare_case; a cost, whose ratio the prices
// can turn either way, is a tie when the samples cannot say (compare_case
// inconclusive), when its interval reaches 1, or when it is within the
// noise.
Ranking rank_pair(const std::string& name, const Side& first,
                  const Side& second, const Options& o, double scale = 0) {
  // compare_case's ratio is B's median over A's: A the second, B the first.
  const Comparison c = compare_case(name, second, first, o);
  const double k = scale > 0 ? scale : 1;
  Ranking r;
  r.factor = k / c.ratio;
  r.ci = {k / c.ratio_ci.hi, k / c.ratio_ci.lo, c.ratio_ci.coverage};
  r.why = c.why;
  if (scale <= 0) {
    r.tie = c.verdict != Verdict::kFaster;
  } else if (c.verdict == Verdict::kInconclusive) {
    r.tie = true;
  } else if (!(r.ci.lo > 1)) {
    r.tie = true;
    r.why = "the interval reaches 1";
  } else if (r.factor <= 1 + o.noise) {
    r.tie = true;
    r.why = fmt::format("under {:g} %", o.noise * 100);
  } else {
    r.why.clear();
  }
  return r;
}

std::string ratio_text(const Ranking& r, const char* word) {
  if (r.second.empty()) return r.first + " only";
  if (r.tie)
    return fmt::format("tie: {} and {} ({:.2f}x, 95 % CI {:.2f}-{:.2f}; {})",
                       r.first, r.second, r.factor, r.ci.lo, r.ci.hi, r.why);
  return fmt::format("{} is {:.2f}x {} than {} (95 % CI {:.2f}-{:.2f})",
                     r.first, r.factor, word, r.second, r.ci.lo, r.ci.hi);
}

void judge(MachineJob& out, const Job& j,
           const std::vector<MachineId>& machines, const Options& o) {
  std::vector<std::pair<double, size_t>> by_time, by_cost;
  for (size_t m = 0; m < machines.size(); ++m) {
    OnMachine f;
    const auto it = j.on.find(m);
    if (it == j.on.end()) {
      out.on.push_back(f);  // a gap: this machine has no such job
      continue;
    }
    const Found& c = it->second;
    f.threads = c.threads;
    f.state = c.state;
    if (!c.side.repetitions.empty()) {
      f.measured = true;
      f.state.clear();
      f.seconds = bench::median(samples_of(c.side, false));
      if (!j.training && j.batch > 0 && f.seconds > 0)
        f.per_second = static_cast<double>(j.batch) / f.seconds;
      if (machines[m].instance) {
        const cost::Price p =
            cost::instance_price(*machines[m].instance, c.threads);
        const double per = j.training ? 1 : 1e4 / static_cast<double>(j.batch);
        f.usd = f.seconds * per * p.usd_per_hour / 3600;
        f.price = p.source;
        by_cost.push_back({*f.usd, m});
      }
      by_time.push_back({f.seconds, m});
      ++out.machines_measured;
    }
    out.on.push_back(f);
  }
  const OnMachine& base = out.on.front();
  for (auto& f : out.on) {
    if (!f.measured || !base.measured) continue;
    f.time_vs_base = f.seconds / base.seconds;
    if (f.usd && base.usd && *base.usd > 0) f.usd_vs_base = *f.usd / *base.usd;
  }
  std::sort(by_time.begin(), by_time.end());
  std::sort(by_cost.begin(), by_cost.end());
  // The first machine of a ranking against the second; a cost ratio is
  // the time ratio scaled by the prices' ratio (a constant of the catalog).
  const auto leader = [&](const std::vector<std::pair<double, size_t>>& by,
                          bool cost) -> std::optional<Ranking> {
    if (by.empty()) return std::nullopt;
    const size_t a = by[0].second;
    Ranking r;
    if (by.size() > 1) {
      const size_t b = by[1].second;
      const double scale = cost
                               ? out.on[b].usd.value() / out.on[b].seconds /
                                     (out.on[a].usd.value() / out.on[a].seconds)
                               : 0;
      r = rank_pair(j.name, j.on.at(a).side, j.on.at(b).side, o, scale);
      r.second = machines[b].label;
    }
    r.first = machines[a].label;
    return r;
  };
  out.fastest = leader(by_time, false);
  out.cheapest = leader(by_cost, true);
}

// The cheapest machine's figure: "$0.0123 per 10,000 samples".
std::string cost_of(const MachineJob& j, const std::vector<MachineId>& ms,
                    const std::string& label) {
  for (size_t m = 0; m < ms.size(); ++m)
    if (ms[m].label == label && j.on[m].usd)
      return usd_text(*j.on[m].usd) +
             (j.training ? " per run" : " per 10,000 samples");
  return "";
}

std::string sentence(const MachineJob& j, const std::vector<MachineId>& ms) {
  std::string s = j.fastest ? ratio_text(*j.fastest, "faster")
                            : "no machine measured a valid time";
  if (j.cheapest)
    s += "; cheapest: " + ratio_text(*j.cheapest, "cheaper") + ", at " +
         cost_of(j, ms, j.cheapest->first);
  else if (j.fastest)
    s += "; cheapest: no machine has a price (record one with --instance)";
  return s + "; " + j.name;
}

// Machines in order: most headline jobs measured first, then the geometric
// mean over them of the time over that job's fastest machine's.
void rank_machines(MachineAnswer& a) {
  std::vector<std::tuple<int, double, size_t>> key;
  for (size_t m = 0; m < a.machines.size(); ++m) {
    int n = 0;
    double log_sum = 0;
    for (size_t j : a.headline_jobs) {
      const MachineJob& job = a.jobs[j];
      double best = 0;
      for (const auto& f : job.on)
        if (f.measured && (best == 0 || f.seconds < best)) best = f.seconds;
      if (!job.on[m].measured || best <= 0) continue;
      ++n;
      log_sum += std::log(job.on[m].seconds / best);
    }
    key.push_back({-n, n ? log_sum / n : 0, m});
  }
  std::sort(key.begin(), key.end());
  for (const auto& [n, g, m] : key) {
    a.ranked.push_back(m);
    a.behind_fastest.push_back(n ? std::optional<double>(std::exp(g))
                                 : std::nullopt);
  }
}

}  // namespace

std::string usd_text(double usd) {
  return usd >= 100    ? fmt::format("${:.0f}", usd)
         : usd >= 1    ? fmt::format("${:.2f}", usd)
         : usd >= 0.01 ? fmt::format("${:.4f}", usd)
                       : fmt::format("${:.2e}", usd);
}

MachineId machine_of(const json& e) {
  MachineId m;
  const json cpu = e.is_object() ? e.value("cpu", json::object()) : json();
  const std::string name = text(cpu, "name"),
                    micro = text(cpu, "microarchitecture");
  const std::string cpus = text(e, "logical_cpus");
  std::string gpus;
  std::map<std::string, int> count;
  if (e.is_object())
    for (const auto& g : e.value("gpus", json::array()))
      if (g.is_string()) ++count[g.get<std::string>()];
  for (const auto& [model, n] : count)
    gpus += fmt::format(" + {}x {}", n, model);
  const json inst = e.is_object() ? e.value("instance", json()) : json();
  m.instance = priced_instance(inst);
  const std::string hw = (name.empty() ? "unknown CPU" : name) +
                         (micro.empty() ? "" : " (" + micro + ")") + ", " +
                         (cpus.empty() ? "?" : cpus) + " CPUs" + gpus;
  m.label = inst.is_object() ? text(inst, "name") : hw;
  const std::string host = text(e, "host");
  m.key = host.empty() ? hw + "|" + text(inst, "name") : host;
  return m;
}

MachineAnswer fastest_machines(const std::vector<MachineRuns>& sources,
                               const Options& o) {
  MachineAnswer a;
  std::vector<json> env;  // the first environment of each machine
  std::vector<size_t> at;
  for (const auto& s : sources) {
    const MachineId id = machine_of(s.environment);
    size_t i = 0;
    while (i < a.machines.size() && a.machines[i].key != id.key) ++i;
    if (i == a.machines.size()) {
      a.machines.push_back(id);
      env.push_back(s.environment);
    }
    at.push_back(i);
  }
  distinct_labels(a.machines, env);
  std::vector<Job> jobs;
  std::map<std::string, size_t> job_at;
  auto job = [&](const std::string& model, const std::string& name,
                 bool training, int64_t batch, int threads) -> Job& {
    const auto [it, fresh] = job_at.emplace(name, jobs.size());
    if (fresh) jobs.push_back({model, name, training, batch, threads, {}});
    return jobs[it->second];
  };
  for (size_t s = 0; s < sources.size(); ++s) {
    const size_t m = at[s];
    if (sources[s].runs)
      for (const auto& r : *sources[s].runs) {
        if (results::measure_of(r) != results::Measure::kSteps ||
            r.state == results::State::kNotRun)
          continue;
        results::CaseKey k = results::key_of(r.model, r.kind, r.requested);
        k.backend = r.backend;
        if (r.distributed && r.distributed->ranks > 1) {
          k.ranks = r.distributed->ranks;
          k.engine = r.distributed->engine;
        }
        Found& c = job(r.model, k.name(), false, r.requested.batch,
                       r.requested.options.threads)
                       .on[m];
        if (r.state == results::State::kOk && r.validity.valid() &&
            !r.samples.empty()) {
          if (c.side.repetitions.empty()) c.threads = r.effective.threads;
          c.side.repetitions.push_back(r.samples);
        } else if (c.side.repetitions.empty()) {
          c.state = why_none(r);
        }
      }
    if (sources[s].training)
      for (const auto& r : *sources[s].training) {
        if (r.state == results::State::kNotRun) continue;
        results::CaseKey k = results::key_of(r);
        Found& c =
            job(r.task, k.name(results::CaseKey::kThreads), true, 0, 0).on[m];
        const auto seconds = results::priced_seconds(r);
        // Each machine at its most threads: fewer threads start over.
        if (seconds && r.effective.threads > c.threads) {
          c.side.repetitions.clear();
          c.threads = r.effective.threads;
        }
        if (seconds && r.effective.threads == c.threads)
          c.side.repetitions.push_back({*seconds});
        else if (!seconds && c.side.repetitions.empty())
          c.state = why_none(r);
      }
  }
  std::vector<std::string> models;
  std::map<std::string, size_t> head;
  a.source_machine = at;
  for (const Job& j : jobs) {
    MachineJob out;
    out.model = j.model;
    out.name = j.name;
    out.training = j.training;
    out.batch = j.batch;
    out.threads = j.threads;
    judge(out, j, a.machines, o);
    a.jobs.push_back(std::move(out));
  }
  // The headline job of each model: measured on the most machines, then
  // training before inference, every CPU ("t0": each machine whole) before
  // the most threads asked, then the largest batch.
  const auto rank = [](const MachineJob& j) {
    return std::make_tuple(
        j.machines_measured, j.training,
        j.name.find(" train ") != std::string::npos,
        j.threads == 0 ? std::numeric_limits<int>::max() : j.threads, j.batch);
  };
  for (size_t i = 0; i < a.jobs.size(); ++i) {
    const MachineJob& j = a.jobs[i];
    const auto [it, fresh] = head.emplace(j.model, i);
    if (fresh)
      models.push_back(j.model);
    else if (rank(j) > rank(a.jobs[it->second]))
      it->second = i;
  }
  for (const auto& m : models) {
    a.verdicts.push_back({m, sentence(a.jobs[head[m]], a.machines)});
    a.headline_jobs.push_back(head[m]);
  }
  rank_machines(a);
  return a;
}

std::string to_markdown(const MachineAnswer& a) {
  std::string out =
      "## Which machine is fastest and cheapest for this job?\n\n";
  for (size_t m = 0; m < a.machines.size(); ++m) {
    const MachineId& id = a.machines[m];
    out += fmt::format(
        "- {}{}: {}\n", id.label, m == 0 ? " (baseline)" : "",
        id.instance
            ? fmt::format("${:.3f}/h ({} {} {})", id.instance->usd_per_hour,
                          id.instance->provider, id.instance->pricing,
                          id.instance->date)
            : "no price (--instance NAME records one)");
  }
  out += "\n";
  for (const auto& [model, line] : a.verdicts)
    out += "- " + model + ": " + line + "\n";
  out += "\n| job |";
  for (const auto& m : a.machines) out += " " + m.label + " |";
  out += "\n|---|";
  for (size_t m = 0; m < a.machines.size(); ++m) out += "---|";
  out += "\n";
  for (const auto& j : a.jobs) {
    out += "| " + j.name + " |";
    for (const auto& f : j.on) {
      std::string c = f.state.empty() ? "-" : f.state;
      if (f.measured) {
        c = j.training ? fmt::format("{:.1f} s", f.seconds)
                       : fmt::format("{:.3f} ms", f.seconds * 1e3);
        if (f.usd) c += ", " + usd_text(*f.usd);
        if (f.time_vs_base) c += fmt::format(", {:.2f}x", *f.time_vs_base);
      }
      out += " " + c + " |";
    }
    out += "\n";
  }
  return out +
         "\nTimes: median per step (per run for training); cost per "
         "10,000 samples (per run); then the time over the baseline "
         "machine's. Intervals are across processes and machines.\n";
}

nlohmann::json to_json(const MachineAnswer& a) {
  const auto opt = [](const std::optional<double>& v) {
    return v ? json(*v) : json();
  };
  json machines = json::array();
  for (const auto& m : a.machines)
    machines.push_back(
        {{"label", m.label},
         {"key", m.key},
         {"usd_per_hour",
          m.instance ? json(m.instance->usd_per_hour) : json()}});
  const auto ranking = [](const std::optional<Ranking>& r) -> json {
    if (!r) return nullptr;
    json j = {{"first", r->first}, {"tie", r->tie}, {"why", r->why}};
    if (r->second.empty()) return j;
    j["second"] = r->second;
    j["factor"] = r->factor;
    j["ci"] = {r->ci.lo, r->ci.hi};
    return j;
  };
  json jobs = json::array();
  for (const auto& j : a.jobs) {
    json on = json::array();
    for (const auto& f : j.on)
      on.push_back({{"measured", f.measured},
                    {"state", f.state},
                    {"seconds", f.measured ? json(f.seconds) : json()},
                    {"samples_per_second",
                     f.measured && !j.training ? json(f.per_second) : json()},
                    {"usd", opt(f.usd)},
                    {"price", f.price},
                    {"threads", f.measured ? json(f.threads) : json()},
                    {"time_vs_baseline", opt(f.time_vs_base)},
                    {"cost_vs_baseline", opt(f.usd_vs_base)}});
    jobs.push_back({{"model", j.model},
                    {"job", j.name},
                    {"training", j.training},
                    {"usd_per", j.training ? "run" : "10000 samples"},
                    {"on", on},
                    {"fastest", ranking(j.fastest)},
                    {"cheapest", ranking(j.cheapest)}});
  }
  json verdicts = json::array();
  for (const auto& [m, line] : a.verdicts)
    verdicts.push_back({{"model", m}, {"verdict", line}});
  return {{"machines", machines}, {"jobs", jobs}, {"verdicts", verdicts}};
}

}  // namespace nnbench::compare
