// `nnbench data list` and `nnbench data fetch` as a user meets them: an
// unknown name is a usage error, a host that cannot be reached exits 3
// naming the URL and the --data alternative and leaves no folder, and a
// fetched copy is where training looks when no path is given. The
// download itself is tested against a local server in
// tests/unit/data/fetch_test.cpp.
#include "cli_util.h"

namespace nnbench_cli_test {
namespace {

TEST_F(Cli, DataFetchNamesTheUrlAndTheAlternativeWhenOffline) {
  const std::string env = "XDG_DATA_HOME=" + path("xdg") + " ";
  expect_usage_error(nnbench("data fetch imagenet"),
                     "unknown dataset 'imagenet'");
  expect_usage_error(nnbench("data fetch text"), "nothing to download");

  // Port 9 (discard) on the loopback: nothing listens there in a test box.
  const Outcome o = shell(env + "NNBENCH_DATA_MIRROR=http://127.0.0.1:9/m " +
                          NNBENCH_EXE + " data fetch mnist");
  EXPECT_EQ(o.code, 3) << o.output;
  EXPECT_NE(o.output.find("http://127.0.0.1:9/m/train-images-idx3-ubyte.gz: "),
            std::string::npos)
      << o.output;
  EXPECT_NE(o.output.find("--data synthetic"), std::string::npos) << o.output;
  EXPECT_FALSE(fs::exists(path("xdg/nnbench/datasets/mnist")));

  // A completed fetch (its record) is where `data list` and training look.
  fs::create_directories(path("xdg/nnbench/datasets/mnist"));
  write("xdg/nnbench/datasets/mnist/nnbench-fetch.json", "{}");
  const Outcome l = shell(env + NNBENCH_EXE + " data list");
  EXPECT_EQ(l.code, 0) << l.output;
  EXPECT_NE(l.output.find(path("xdg/nnbench/datasets/mnist")),
            std::string::npos)
      << l.output;
  // The record without the files: training reads there and says what is
  // missing.
  const Outcome t = shell(env + NNBENCH_EXE +
                          " train --task keras-mnist-mlp --backend reference");
  EXPECT_EQ(t.code, 2) << t.output;
  EXPECT_NE(t.output.find(path("xdg/nnbench/datasets/mnist") +
                          "/train-images-idx3-ubyte.gz: missing"),
            std::string::npos)
      << t.output;
}

}  // namespace
}  // namespace nnbench_cli_test
