// A study's split over machines (study/shard.h): the shares are disjoint,
// cover the plan, are as even as can be, and do not depend on the order
// the plan was made in; the shard comes from --shard or the job's engine.
#include "study/shard.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <set>

#include "util/error.h"

namespace nnbench::study {
namespace {

std::vector<PlannedCase> plan_of(int n) {
  std::vector<PlannedCase> plan(n);
  // Keys in an order unlike their sorted one.
  for (int i = 0; i < n; ++i) plan[i].key = std::to_string((i * 7919) % 1009);
  return plan;
}

std::set<std::string> keys(const std::vector<PlannedCase>& v) {
  std::set<std::string> out;
  for (const auto& c : v) out.insert(c.key);
  return out;
}

TEST(Shard, SharesAreDisjointCoverThePlanAndAreEven) {
  const auto plan = plan_of(10);
  std::set<std::string> all;
  std::vector<size_t> sizes;
  for (int i = 0; i < 3; ++i) {
    const auto s = share(plan, {i, 3, "s", ""});
    sizes.push_back(s.size());
    for (const auto& k : keys(s)) EXPECT_TRUE(all.insert(k).second) << k;
  }
  EXPECT_EQ(all, keys(plan));
  std::sort(sizes.begin(), sizes.end());
  EXPECT_EQ(sizes, (std::vector<size_t>{3, 3, 4}));  // 10 = 4 + 3 + 3
}

TEST(Shard, TheSplitDoesNotDependOnThePlansOrder) {
  auto plan = plan_of(17);
  auto reversed = plan;
  std::reverse(reversed.begin(), reversed.end());
  for (int i = 0; i < 4; ++i) {
    const auto a = share(plan, {i, 4, "s", ""});
    EXPECT_EQ(keys(a), keys(share(reversed, {i, 4, "s", ""})));
    // Within a share, the plan's own order.
    for (size_t j = 1; j < a.size(); ++j) {
      const auto at = [&](const std::string& k) {
        return std::find_if(plan.begin(), plan.end(),
                            [&](const PlannedCase& c) { return c.key == k; }) -
               plan.begin();
      };
      EXPECT_LT(at(a[j - 1].key), at(a[j].key));
    }
  }
}

TEST(Shard, FromTheCommandLineOrTheJobsEngine) {
  const auto s = resolve_shard("1/4", "demo", {});
  ASSERT_TRUE(s);
  EXPECT_EQ(s->index, 1);
  EXPECT_EQ(s->count, 4);
  EXPECT_FALSE(resolve_shard("", "", {}));
  // A Slurm array numbered from 4: task 6 is the third of three.
  const auto slurm = resolve_shard("auto", "",
                                   {{"SLURM_ARRAY_TASK_ID", "6"},
                                    {"SLURM_ARRAY_TASK_MIN", "4"},
                                    {"SLURM_ARRAY_TASK_COUNT", "3"},
                                    {"SLURM_ARRAY_JOB_ID", "812"}});
  ASSERT_TRUE(slurm);
  EXPECT_EQ(slurm->index, 2);
  EXPECT_EQ(slurm->count, 3);
  EXPECT_EQ(slurm->study, "slurm-812");
  const auto k8s =
      resolve_shard("auto/5", "job-a", {{"JOB_COMPLETION_INDEX", "4"}});
  ASSERT_TRUE(k8s);
  EXPECT_EQ(k8s->index, 4);
  EXPECT_EQ(k8s->count, 5);
}

TEST(Shard, BadValuesAreRefusedNamingThem) {
  const auto refused = [](const std::string& spec, const std::string& study,
                          const std::map<std::string, std::string>& env,
                          const std::string& words) {
    try {
      resolve_shard(spec, study, env);
      ADD_FAILURE() << spec << " was accepted";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(words), std::string::npos)
          << e.what();
    }
  };
  refused("3/3", "s", {}, "the index must be from 0 to 2");
  refused("0/0", "s", {}, "--shard's count is '0'");
  refused("0/10001", "s", {}, "from 1 to 10000");
  refused("x/2", "s", {}, "--shard's index is 'x'");
  refused("2", "s", {}, "I/N (0 <= I < N)");
  refused("0/2", "", {}, "--shard needs --study");
  refused("0/2", "a b", {}, "--study is 'a b'");
  refused("", "s", {}, "give --shard too");
  refused("auto", "s", {}, "neither a Slurm job array");
  refused("auto/3", "s", {}, "JOB_COMPLETION_INDEX is not set");
  refused("auto/3", "s", {{"JOB_COMPLETION_INDEX", "3"}},
          "the index must be from 0 to 2");
  refused("auto", "s",
          {{"SLURM_ARRAY_TASK_ID", "1"}, {"SLURM_ARRAY_TASK_COUNT", "-2"}},
          "SLURM_ARRAY_TASK_COUNT is '-2'");
}

}  // namespace
}  // namespace nnbench::study
