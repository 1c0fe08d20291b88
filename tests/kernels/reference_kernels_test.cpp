// No reference kernel unnoticed: every primitive the oneDNN engine creates
// for the zoo, as oneDNN itself reports it (ONEDNN_VERBOSE=2), against the
// engine's record. Run natively and with oneDNN capped to AVX2, so that an
// AVX-512 machine checks the AVX2 paths too (the pool has AVX2-only CPUs).
#include <gtest/gtest.h>

#include <cstdio>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace {

struct Case {
  std::string name;            // "mnist-cnn train fp32"
  std::set<std::string> slow;  // "convolution ref:any", from oneDNN
  std::string record;          // the engine's reference_kernels
  bool refused = false;
};

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> out;
  std::stringstream in(s);
  for (std::string f; std::getline(in, f, sep);) out.push_back(f);
  return out;
}

// Runs the survey under `env` and parses its output into cases.
std::vector<Case> survey(const std::string& env, bool* done) {
  const std::string cmd =
      "env ONEDNN_VERBOSE=2 " + env + " " NNBENCH_SURVEY_EXE;
  FILE* p = popen(cmd.c_str(), "r");
  if (p == nullptr) return {};
  std::vector<Case> cases;
  char buf[8192];
  std::string text;
  while (fgets(buf, sizeof buf, p) != nullptr) text += buf;
  EXPECT_EQ(pclose(p), 0) << cmd;
  *done = false;
  for (const auto& l : split(text, '\n')) {
    if (l.rfind("CASE ", 0) == 0) {
      cases.push_back({l.substr(5)});
    } else if (l.rfind("RECORD ", 0) == 0 && !cases.empty()) {
      cases.back().record = l.substr(7);
    } else if (l.rfind("REFUSED ", 0) == 0 && !cases.empty()) {
      cases.back().refused = true;
    } else if (l == "DONE") {
      *done = true;
    } else if (l.find(",create:") != std::string::npos && !cases.empty()) {
      // onednn_verbose,create:cache_miss,cpu,KIND,IMPL,PROP,...
      const auto f = split(l, ',');
      // Reference kernels: ref:any, ref_int8:any, lrn_ref:any.
      if (f.size() > 4 &&
          (f[4].rfind("ref", 0) == 0 || f[4].find("_ref") != std::string::npos))
        cases.back().slow.insert(f[3] + " " + f[4]);
    }
  }
  return cases;
}

void check(const std::string& env) {
  bool done = false;
  const auto cases = survey(env, &done);
  ASSERT_TRUE(done) << "the survey did not finish under '" << env << "'";
  int built = 0;
  for (const auto& c : cases) {
    if (c.refused) continue;
    ++built;
    // Every reference kernel oneDNN created is named in the record, and
    // the record names none that oneDNN did not create.
    for (const auto& s : c.slow)
      EXPECT_NE(c.record.find(s), std::string::npos)
          << c.name << " (" << env << "): oneDNN created " << s
          << ", the record says: " << c.record;
    if (c.slow.empty())
      EXPECT_EQ(c.record, "none") << c.name << " (" << env << ")";
    // fp32 has an optimised kernel for every zoo layer on every ISA but
    // the LSTM: oneDNN 2.6's only fp32 LSTM training kernel, and its only
    // LSTM kernel below AVX-512, is the one it calls `ref` (GEMM-based,
    // docs/backends.md).
    if (c.name.find(" fp32") != std::string::npos)
      for (const auto& s : c.slow)
        EXPECT_EQ(s.rfind("rnn ", 0), 0u)
            << c.name << " (" << env << ") runs " << s;
  }
  // Every zoo model builds for training and inference in fp32 at least.
  EXPECT_GE(built, 30) << env;
}

TEST(ReferenceKernels, NoneUnnamedOnThisCpu) { check(""); }

TEST(ReferenceKernels, NoneUnnamedOnTheAvx2Paths) {
  check("ONEDNN_MAX_CPU_ISA=AVX2");
}

}  // namespace
