// A suite where one engine is slow on purpose ("sluggish" in
// nnbench_faulty: the reference's arithmetic 20 ms later each step, its
// record naming a reference kernel, no embedding layers): the verdict
// under the suite's table and the report's first screen name it, by the
// factor its records' medians give and with the reason the records give.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

#include "../common/slurp.h"

namespace {

namespace fs = std::filesystem;

const char* kSuite = R"(
description = "verdict test"
[grid]
models = ["mnist-mlp", "imdb-fasttext"]
backends = ["faulty", "sluggish"]
modes = ["train"]
batches = [2]
threads = [1]
[warmup]
min_iterations = 1
min_seconds = 0.0
[stop]
min_iterations = 5
min_seconds = 0.0
)";

std::string slurp(const fs::path& p) { return nnbench::test::slurp_file(p); }

// The median as the statistics books define it: the middle sample, or the
// mean of the middle two.
double median(std::vector<double> x) {
  std::sort(x.begin(), x.end());
  const size_t n = x.size();
  return n % 2 ? x[n / 2] : (x[n / 2 - 1] + x[n / 2]) / 2;
}

TEST(SuiteVerdict, NamesTheSlowEngineWithItsFactorAndReason) {
  const fs::path dir = fs::temp_directory_path() /
                       ("nnbench-verdict-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  std::ofstream(dir / "v.toml") << kSuite;
  const std::string exe = NNBENCH_FAULTY_EXE;
  const int status = std::system(
      (exe + " suite " + (dir / "v.toml").string() + " --no-store --out " +
       (dir / "v.json").string() + " --on-contention warn > " +
       (dir / "out").string() + " 2> " + (dir / "err").string())
          .c_str());
  const std::string out = slurp(dir / "out");
  // An unimplemented case is a result, not a failure of the suite.
  EXPECT_EQ(WEXITSTATUS(status), 0) << out << slurp(dir / "err");

  const auto file = nlohmann::json::parse(slurp(dir / "v.json"));
  std::map<std::string, nlohmann::json> rec;  // "model backend" -> record
  for (const auto& r : file.at("results"))
    rec[r["model"]["name"].get<std::string>() + " " +
        r["backend"]["name"].get<std::string>()] = r;
  ASSERT_EQ(rec.size(), 4u) << out;
  const auto& fast = rec.at("mnist-mlp faulty");
  const auto& slow = rec.at("mnist-mlp sluggish");
  ASSERT_EQ(fast["state"], "ok") << out;
  ASSERT_EQ(slow["state"], "ok") << out;
  const double factor =
      median(slow["samples_seconds"].get<std::vector<double>>()) /
      median(fast["samples_seconds"].get<std::vector<double>>());
  ASSERT_GT(factor, 2) << out;  // 20 ms more than the reference's MLP step
  char shown[32];
  std::snprintf(shown, sizeof shown, "%.2f", factor);
  const std::string slow_line =
      std::string("sluggish ") + shown +
      "x behind faulty in fp32 train b2 t1: reference kernels: dense_1 "
      "inner_product ref:any";

  const auto& none = rec.at("imdb-fasttext sluggish");
  ASSERT_EQ(none["state"], "unimplemented") << out;
  const std::string message = none["message"];
  const std::string first = message.substr(0, message.find('\n'));
  ASSERT_NE(first, message);  // two lines: the verdict shows the first
  const std::string none_line =
      "sluggish ran no valid time in fp32 train b2 t1: unimplemented (" +
      first + ")";

  const auto at = out.find("Far behind the fastest (median more than 2x");
  ASSERT_NE(at, std::string::npos) << out;
  const std::string behind = out.substr(at);
  EXPECT_NE(behind.find("mnist-mlp      " + slow_line + "\n"),
            std::string::npos)
      << out;
  EXPECT_NE(behind.find("imdb-fasttext  " + none_line + "\n"),
            std::string::npos)
      << out;
  EXPECT_EQ(behind.find("sluggish runs no lookups"), std::string::npos) << out;

  // The report's first screen says the same.
  ASSERT_EQ(std::system((exe + " report " + (dir / "v.json").string() + " -o " +
                         (dir / "v.html").string() + " > /dev/null")
                            .c_str()),
            0);
  const std::string html = slurp(dir / "v.html");
  const auto answer = html.find("<section id=\"answer\">");
  ASSERT_NE(answer, std::string::npos);
  const std::string box =
      html.substr(answer, html.find("</section>", answer) - answer);
  EXPECT_NE(box.find("<li>mnist-mlp: " + slow_line + "</li>"),
            std::string::npos)
      << box;
  EXPECT_NE(box.find("imdb-fasttext: sluggish ran no valid time"),
            std::string::npos)
      << box;
  fs::remove_all(dir);
}

}  // namespace
