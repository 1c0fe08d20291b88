// A training suite (the CPU-vs-GPU study's shape) on real data: every
// record reaches the JSON output, and the cost per run is priced from the
// catalog and normalised to the baseline case.
#include <SQLiteCpp/Database.h>
#include <SQLiteCpp/Statement.h>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

#include "../common/slurp.h"

namespace {

namespace fs = std::filesystem;

// One epoch of the MLP at 1 and 2 threads, priced as the CPU-vs-GPU
// study's preemptible n1-highcpu-64 ($0.509/h for 64 vCPUs, pro rata).
const char* kSuite = R"(
description = "cost test"
scenario = "training"
[grid]
tasks = ["fashion-mnist-mlp"]
threads = [1, 2]
[settings]
epochs = 1
[cost]
instance = "gce-n1-highcpu-64-preemptible"
)";

std::string slurp(const fs::path& p) { return nnbench::test::slurp_file(p); }

TEST(TrainingSuite, RecordsWrittenAndCostsPricedPerThreads) {
  const fs::path dir = fs::temp_directory_path() /
                       ("nnbench-training-suite-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  std::ofstream(dir / "t.toml") << kSuite;
  const std::string db = (dir / "r.db").string();
  const std::string exe = NNBENCH_FAULTY_EXE;
  // ctest runs this beside other tests: contention is not what it tests.
  const int status =
      std::system((exe + " suite " + (dir / "t.toml").string() + " --db " + db +
                   " --out " + (dir / "out.json").string() +
                   " --on-contention warn --contention-max-load 4 "
                   "--contention-max-steal 1 > " +
                   (dir / "log").string() + " 2>&1")
                      .c_str());
  ASSERT_EQ(WEXITSTATUS(status), 0) << slurp(dir / "log");
  EXPECT_NE(slurp(dir / "log").find("val accuracy"), std::string::npos);

  // Both training records reach --out, with their kind and epochs.
  const auto j = nlohmann::json::parse(slurp(dir / "out.json"));
  ASSERT_EQ(j["results"].size(), 2u);
  std::map<int, double> seconds;  // by effective threads
  for (const auto& r : j["results"]) {
    EXPECT_EQ(r["kind"], "training");
    EXPECT_EQ(r["state"], "completed");
    EXPECT_EQ(r["epochs"].size(), 1u);
    seconds[r["effective"]["threads"].get<int>()] = r["total_train_seconds"];
  }
  ASSERT_EQ(seconds.size(), 2u);

  // cost = seconds / 3600 x $0.509 x threads / 64; relative to 2 threads.
  SQLite::Database d(db);
  SQLite::Statement q(d, "SELECT name, x, value FROM derived");
  std::map<std::string, std::map<int, double>> v;
  while (q.executeStep())
    v[q.getColumn(0).getString()][q.getColumn(1).getInt()] =
        q.getColumn(2).getDouble();
  const double usd1 = seconds[1] / 3600 * 0.509 * 1 / 64;
  const double usd2 = seconds[2] / 3600 * 0.509 * 2 / 64;
  EXPECT_NEAR(v["cost_usd"][1], usd1, 1e-12);
  EXPECT_NEAR(v["cost_usd"][2], usd2, 1e-12);
  EXPECT_NEAR(v["relative_cost"][1], usd1 / usd2, 1e-9);
  EXPECT_DOUBLE_EQ(v["relative_cost"][2], 1.0);
  EXPECT_NEAR(v["relative_time"][1], seconds[1] / seconds[2], 1e-9);

  // --out holds the figures the store holds, costs and the price they used
  // (before, only the store had them: a report of the file drew no cost).
  std::map<std::string, std::map<int, double>> in_file;
  for (const auto& f : j["derived"])
    in_file[f["name"]][static_cast<int>(f["x"].get<double>())] = f["value"];
  EXPECT_EQ(in_file, v);
  EXPECT_NE(j.value("price_note", "").find("gce-n1-highcpu-64-preemptible"),
            std::string::npos)
      << j.value("price_note", "");
  const std::string html = (dir / "r.html").string();
  ASSERT_EQ(std::system((exe + " report " + (dir / "out.json").string() +
                         " -o " + html + " > /dev/null")
                            .c_str()),
            0);
  EXPECT_NE(slurp(html).find("gce-n1-highcpu-64-preemptible"),
            std::string::npos);

  // The markdown export shows training seconds and the cost table with
  // the price it used.
  const std::string id = d.execAndGet("SELECT id FROM runs").getString();
  const std::string md = (dir / "t.md").string();
  ASSERT_EQ(std::system((exe + " results --db " + db + " export " + id +
                         " --format md --out " + md)
                            .c_str()),
            0);
  const std::string table = slurp(md);
  EXPECT_NE(table.find("seconds per training run"), std::string::npos) << table;
  EXPECT_NE(table.find("cost_usd against threads"), std::string::npos) << table;
  EXPECT_NE(table.find("gce-n1-highcpu-64-preemptible"), std::string::npos)
      << table;
  fs::remove_all(dir);
}

}  // namespace
