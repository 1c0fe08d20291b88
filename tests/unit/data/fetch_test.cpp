// `nnbench data fetch` (data/fetch.h) against a local HTTP server: a good
// download lands whole, and a truncated, oversized, wrong or unreachable
// one is an error naming the URL and the --data alternative, leaving
// nothing behind. Expected hashes come from sha256sum or FIPS 180-2, never
// from the code under test.
#include "data/fetch.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include "data/dataset.h"
#include "data/manifest.h"
#include "http_server.h"
#include "util/unpack.h"

namespace nnbench::data {
namespace {

namespace fs = std::filesystem;

// FIPS 180-2's first SHA-256 example: the message "abc".
const char* kAbcSha =
    "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad";

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

std::string run(const std::string& cmd) {
  FILE* p = popen(cmd.c_str(), "r");
  std::string out;
  char buf[256];
  while (size_t n = fread(buf, 1, sizeof buf, p)) out.append(buf, n);
  pclose(p);
  return out;
}

std::string path_of(const std::string& request) {
  const auto a = request.find(' ') + 1;
  return request.substr(a, request.find(' ', a) - a);
}

class DataFetch : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("nnbench_fetch_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  // What fetch_dataset threw, "" when it did not.
  std::string fetch_error(const DatasetSource& s, const FetchOptions& o) {
    try {
      fetch_dataset(s, o);
    } catch (const DataError& e) {
      return e.what();
    }
    return "";
  }
  // Nothing but the named entries in the test's folder: no staging left.
  std::vector<std::string> entries() const {
    std::vector<std::string> v;
    for (const auto& e : fs::directory_iterator(dir_))
      v.push_back(e.path().filename().string());
    std::sort(v.begin(), v.end());
    return v;
  }
  fs::path dir_;
};

DatasetSource abc_source(int64_t bytes = 3) {
  return {"ptb",
          {{"https://example.invalid/data/abc.txt", bytes, kAbcSha}},
          "FIPS 180-2"};
}

TEST_F(DataFetch, GoodFilesAndAnArchiveLandWhole) {
  // An archive made by tar, hashed by sha256sum.
  fs::create_directories(dir_ / "src/set");
  std::ofstream(dir_ / "src/set/a.txt") << "seven\n";
  run("tar -C " + (dir_ / "src").string() + " -czf " +
      (dir_ / "set.tar.gz").string() + " set");
  const std::string tgz = slurp(dir_ / "set.tar.gz");
  const std::string tgz_sha =
      run("sha256sum " + (dir_ / "set.tar.gz").string()).substr(0, 64);
  fs::remove_all(dir_ / "src");
  fs::remove(dir_ / "set.tar.gz");
  ASSERT_EQ(tgz_sha.size(), 64u);

  DatasetSource s = abc_source();
  s.files.push_back({"https://example.invalid/data/set.tar.gz",
                     static_cast<int64_t>(tgz.size()), tgz_sha, true});
  Server server(2, [&](const std::string& req) {
    return path_of(req) == "/m/abc.txt" ? http_ok("abc") : http_ok(tgz);
  });
  FetchOptions o;
  o.dir = (dir_ / "ptb").string();
  o.mirror = server.url() + "/m";
  std::vector<std::string> told;
  o.progress = [&](const std::string& url) { told.push_back(url); };
  const FetchResult r = fetch_dataset(s, o);
  EXPECT_FALSE(r.already_present);
  EXPECT_EQ(r.downloaded_bytes, 3 + static_cast<int64_t>(tgz.size()));
  EXPECT_EQ(told, (std::vector<std::string>{server.url() + "/m/abc.txt",
                                            server.url() + "/m/set.tar.gz"}));
  EXPECT_EQ(slurp(dir_ / "ptb/abc.txt"), "abc");
  EXPECT_EQ(slurp(dir_ / "ptb/set/a.txt"), "seven\n");
  EXPECT_FALSE(fs::exists(dir_ / "ptb/set.tar.gz"));  // unpacked, then gone
  EXPECT_TRUE(is_fetched(o.dir));
  EXPECT_EQ(entries(), std::vector<std::string>{"ptb"});

  // Again: already there, the server is not asked.
  Server silent(0, [](const std::string&) { return std::string(); });
  o.mirror = silent.url();
  const FetchResult again = fetch_dataset(s, o);
  EXPECT_TRUE(again.already_present);
  EXPECT_EQ(again.downloaded_bytes, 0);
}

TEST_F(DataFetch, TruncatedWrongOrOversizedFilesLeaveNothing) {
  struct Case {
    std::string body, expect;
  } cases[] = {
      {"ab", "2 bytes, expected 3 (truncated)"},
      {"abd", "SHA-256 "},
      {"abcdefghij", "larger than the 3 bytes expected"},
  };
  for (const auto& c : cases) {
    Server server(1, [&](const std::string&) { return http_ok(c.body); });
    FetchOptions o;
    o.dir = (dir_ / "ptb").string();
    o.mirror = server.url();
    const std::string e = fetch_error(abc_source(), o);
    EXPECT_NE(e.find(server.url() + "/abc.txt"), std::string::npos) << e;
    EXPECT_NE(e.find(c.expect), std::string::npos) << e;
    EXPECT_NE(e.find("--data synthetic"), std::string::npos) << e;
    EXPECT_EQ(entries(), std::vector<std::string>{}) << c.body;
  }
  // The wrong file's hash is named with the expected one: sha256sum of
  // "abd" computed apart.
  Server server(1, [&](const std::string&) { return http_ok("abd"); });
  FetchOptions o;
  o.dir = (dir_ / "ptb").string();
  o.mirror = server.url();
  const std::string want =
      run("printf abd | sha256sum").substr(0, 64) + ", expected " + kAbcSha;
  const std::string e = fetch_error(abc_source(), o);
  EXPECT_NE(e.find(want), std::string::npos) << e;
}

TEST_F(DataFetch, UnreachableOrMissingIsAnErrorNamingTheUrl) {
  int port = 0;
  {  // a port nobody listens on once this server is gone
    Server gone(0, [](const std::string&) { return std::string(); });
    port = std::stoi(gone.url().substr(gone.url().rfind(':') + 1));
  }
  FetchOptions o;
  o.dir = (dir_ / "ptb").string();
  o.mirror = "http://127.0.0.1:" + std::to_string(port);
  o.connect_seconds = 5;
  std::string e = fetch_error(abc_source(), o);
  EXPECT_NE(e.find(o.mirror + "/abc.txt: "), std::string::npos) << e;
  EXPECT_NE(e.find("--data PATH"), std::string::npos) << e;
  EXPECT_NE(e.find("--data synthetic"), std::string::npos) << e;

  Server missing(1, [](const std::string&) {
    return std::string(
        "HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n"
        "Connection: close\r\n\r\n");
  });
  o.mirror = missing.url();
  e = fetch_error(abc_source(), o);
  EXPECT_NE(e.find(missing.url() + "/abc.txt: "), std::string::npos) << e;
  EXPECT_NE(e.find("404"), std::string::npos) << e;
  EXPECT_EQ(entries(), std::vector<std::string>{});

  // A folder that is there but not a fetch is not overwritten.
  fs::create_directories(dir_ / "ptb");
  std::ofstream(dir_ / "ptb/mine.txt") << "mine";
  e = fetch_error(abc_source(), o);
  EXPECT_NE(e.find("exists and is not a completed fetch"), std::string::npos)
      << e;
  EXPECT_EQ(slurp(dir_ / "ptb/mine.txt"), "mine");
}

TEST_F(DataFetch, ArchivesCannotWriteOutsideTheirFolder) {
  // Python's tarfile writes the name as given, "../evil.txt" included.
  const fs::path tgz = dir_ / "evil.tar.gz";
  run("cd " + dir_.string() +
      " && printf x > evil.txt && python3 -c \"import tarfile; "
      "t = tarfile.open('evil.tar.gz', 'w:gz'); "
      "t.add('evil.txt', arcname='../evil.txt'); t.close()\"");
  fs::remove(dir_ / "evil.txt");
  ASSERT_TRUE(fs::exists(tgz));
  fs::create_directories(dir_ / "into");
  try {
    util::unpack_tar_gz(tgz.string(), (dir_ / "into").string());
    ADD_FAILURE() << "unpacked";
  } catch (const nnbench::Error& e) {
    EXPECT_NE(
        std::string(e.what()).find(tgz.string() + ": cannot write ../evil.txt"),
        std::string::npos)
        << e.what();
  }
  EXPECT_FALSE(fs::exists(dir_ / "evil.txt"));
}

TEST_F(DataFetch, TrainingReadsTheFetchedCopyWhenNoPathIsGiven) {
  const char* old = std::getenv("XDG_DATA_HOME");
  const std::string saved = old ? old : "";
  setenv("XDG_DATA_HOME", dir_.c_str(), 1);
  const std::string e = [] {
    try {
      dataset_path("ptb", "");
    } catch (const DataError& e) {
      return std::string(e.what());
    }
    return std::string();
  }();
  EXPECT_NE(e.find("nnbench data fetch ptb"), std::string::npos) << e;
  EXPECT_EQ(fetched_dir("ptb"), dir_.string() + "/nnbench/datasets/ptb");
  fs::create_directories(fetched_dir("ptb"));
  std::ofstream(fetched_dir("ptb") + "/nnbench-fetch.json") << "{}";
  EXPECT_EQ(dataset_path("ptb", ""), fetched_dir("ptb"));
  EXPECT_EQ(dataset_path("ptb", "/elsewhere"), "/elsewhere");
  if (old) {
    setenv("XDG_DATA_HOME", saved.c_str(), 1);
  } else {
    unsetenv("XDG_DATA_HOME");
  }
}

TEST_F(DataFetch, EveryDownloadHasAHashAndFashionMnistTwoCopies) {
  for (const auto& s : dataset_sources()) {
    EXPECT_NO_THROW(dataset_help(s.dataset)) << s.dataset;
    for (const auto& f : s.files) {
      EXPECT_EQ(f.sha256.size(), 64u) << f.url;
      EXPECT_EQ(f.url.rfind("http", 0), 0u) << f.url;
    }
  }
  // Fashion-MNIST's download differs from Debian's copy in its gzip
  // header: either is accepted on load, and a file of the download's size
  // but other bytes is refused naming the download's hash.
  const fs::path f = dir_ / "t10k-labels-idx1-ubyte.gz";
  try {
    verify_file("fashion-mnist", f, std::string(5148, 'x'));
    ADD_FAILURE() << "accepted";
  } catch (const DataError& e) {
    EXPECT_NE(std::string(e.what()).find(
                  "expected "
                  "67da17c76eaffca5446c3361aaab5c3cd6d1c2608764d35dfb1850b086bf"
                  "8dd5"),
              std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace nnbench::data
