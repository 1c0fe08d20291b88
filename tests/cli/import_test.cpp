// `nnbench results import`: runs made on other machines (their stores, or
// one run exported as JSON) brought into one store, whole and once.
#include <nlohmann/json.hpp>

#include "cli_util.h"

namespace nnbench_cli_test {
namespace {

using nlohmann::json;

class Import : public Cli {
 protected:
  // A store holding one small suite run of the oracle; its run id.
  std::string suite_into(const std::string& db) {
    write("tiny.toml",
          std::string("[grid]\nmodels = [\"mnist-mlp\"]\nbackends = "
                      "[\"reference\"]\nbatches = [2, 4]\nthreads = [1]\n") +
              kFastRules);
    const auto o = nnbench("suite " + path("tiny.toml") + " --db " + path(db) +
                           kNoContention);
    EXPECT_EQ(o.code, 0) << o.output;
    return run_ids(db).at(0);
  }
  std::vector<std::string> run_ids(const std::string& db) {
    const auto o = nnbench("results --db " + path(db) + " list");
    std::vector<std::string> ids;
    size_t at = 0;
    while ((at = o.output.find("\n2", at)) != std::string::npos) {
      ++at;
      ids.push_back(o.output.substr(at, o.output.find(' ', at) - at));
    }
    return ids;
  }
  json exported(const std::string& db, const std::string& id) {
    const std::string out = path(db + "-" + id + ".json");
    const auto o = nnbench("results --db " + path(db) + " export " + id +
                           " --format json --out " + out);
    EXPECT_EQ(o.code, 0) << o.output;
    return json::parse(slurp(out));
  }
};

TEST_F(Import, RunsFromAStoreAndAnExportArriveWholeAndOnce) {
  const std::string a = suite_into("a.db");
  const std::string b = suite_into("b.db");
  ASSERT_NE(a, b);
  const json b_export = exported("b.db", b);
  write("b.json", b_export.dump());

  const auto first = nnbench("results --db " + path("all.db") + " import " +
                             path("a.db") + " " + path("b.json"));
  ASSERT_EQ(first.code, 0) << first.output;
  EXPECT_NE(first.output.find("run " + a + ": imported"), std::string::npos)
      << first.output;
  // Each run as it was where it was made: every field, result and record.
  EXPECT_EQ(exported("all.db", a), exported("a.db", a));
  EXPECT_EQ(exported("all.db", b), b_export);

  // Twice adds nothing.
  const auto again = nnbench("results --db " + path("all.db") + " import " +
                             path("a.db") + " " + path("b.json"));
  ASSERT_EQ(again.code, 0) << again.output;
  EXPECT_NE(again.output.find("run " + a + ": already in"), std::string::npos)
      << again.output;
  EXPECT_EQ(run_ids("all.db").size(), 2u);

  // The list names each run's machine (the CPU its environment recorded).
  const auto list = nnbench("results --db " + path("all.db") + " list");
  EXPECT_NE(list.output.find("machine"), std::string::npos) << list.output;
  EXPECT_NE(list.output.find(
                b_export["environment"]["cpu"]["name"].get<std::string>()),
            std::string::npos)
      << list.output;
}

TEST_F(Import, AnIdClashWithOtherContentIsAnErrorAndWritesNothing) {
  const std::string a = suite_into("a.db");
  json changed = exported("a.db", a);
  changed["results"][0]["record"]["state"] = "failed";
  write("changed.json", changed.dump());
  ASSERT_EQ(
      nnbench("results --db " + path("all.db") + " import " + path("a.db"))
          .code,
      0);
  const std::string before = exported("all.db", a).dump();
  const auto clash = nnbench("results --db " + path("all.db") + " import " +
                             path("changed.json"));
  expect_usage_error(clash, "has the id of another run, with other content");
  EXPECT_NE(clash.output.find(path("changed.json")), std::string::npos)
      << clash.output;
  EXPECT_NE(clash.output.find(path("all.db")), std::string::npos)
      << clash.output;
  EXPECT_EQ(exported("all.db", a).dump(), before);

  // Files are imported one at a time, each whole or not at all: the clash
  // in the second file leaves the first file's run in, and says so.
  const auto two = nnbench("results --db " + path("two.db") + " import " +
                           path("a.db") + " " + path("changed.json"));
  expect_usage_error(two, "nothing of " + path("changed.json") +
                              " was imported; the 1 run of the files before "
                              "it were, and stay");
  EXPECT_EQ(run_ids("two.db").size(), 1u);
  EXPECT_EQ(exported("two.db", a).dump(), before);

  write("garbage.json", "{\"run\": {\"id\": \"x\"}}");
  expect_usage_error(nnbench("results --db " + path("all.db") + " import " +
                             path("garbage.json")),
                     "garbage.json: not a run export of nnbench");
  write("text.db", "not a database");
  expect_usage_error(
      nnbench("results --db " + path("all.db") + " import " + path("text.db")),
      "text.db: neither a results store (SQLite) nor JSON");
  EXPECT_EQ(run_ids("all.db").size(), 1u);
}

// Which machine a run was made on, without naming it: the SHA-256 of the
// host name (computed here by sha256sum), or nothing with --anonymous.
TEST_F(Import, RunsRecordTheirHostHashedOrNotAtAll) {
  const auto expected = shell("printf %s \"$(hostname)\" | sha256sum");
  ASSERT_EQ(expected.code, 0);
  const std::string hash = "sha256:" + expected.output.substr(0, 16);
  const auto env = nnbench("env --json --no-peak");
  ASSERT_EQ(env.code, 0) << env.output;
  const auto j = json::parse(env.output.substr(env.output.find('{')));
  EXPECT_EQ(j["environment"]["host"], hash);
  const auto anon = nnbench("env --json --no-peak --anonymous");
  ASSERT_EQ(anon.code, 0) << anon.output;
  EXPECT_TRUE(json::parse(anon.output.substr(
      anon.output.find('{')))["environment"]["host"]
                  .is_null())
      << anon.output;
  // A suite's run keeps it, and the list shows its first digits.
  suite_into("h.db");
  const auto list = nnbench("results --db " + path("h.db") + " list");
  EXPECT_NE(list.output.find("host " + hash.substr(7, 8)), std::string::npos)
      << list.output;
}

}  // namespace
}  // namespace nnbench_cli_test
