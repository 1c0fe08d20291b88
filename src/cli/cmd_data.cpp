// `nnbench data list` and `nnbench data fetch NAME`: the datasets the
// training tasks read, where each comes from, and a checked download of it
// (data/fetch.h).
#include <fmt/core.h>

#include <cstdlib>

#include "cli/app.h"
#include "cli/commands.h"
#include "data/dataset.h"
#include "data/fetch.h"
#include "data/sources.h"
#include "util/error.h"
#include "util/text_table.h"

namespace nnbench::cli {
namespace {

struct DataArgs {
  std::string name, dir;
};

std::string mb(int64_t bytes) {
  return bytes > 0 ? fmt::format("{:.1f}", bytes / 1e6) : "-";
}

int list_data() {
  util::Table t({"dataset", "download MB", "files", "found at"});
  for (const auto& name : data::dataset_names()) {
    const data::DatasetSource* s = data::find_source(name);
    int64_t bytes = 0;
    bool all_sized = s != nullptr;
    if (s)
      for (const auto& f : s->files) {
        bytes += f.bytes;
        all_sized = all_sized && f.bytes > 0;
      }
    std::string at = "-";
    try {
      at = data::dataset_path(name, "");
    } catch (const data::DataError&) {
    }
    t.add({name, s ? mb(bytes) + (all_sized ? "" : "+") : "-",
           s ? std::to_string(s->files.size()) : "-", at});
  }
  fmt::print("{}", t.str());
  fmt::print(
      "'+': a file whose size is not published. `nnbench data fetch NAME` "
      "downloads into {}\n",
      data::fetched_dir("NAME"));
  return kExitOk;
}

int fetch(const DataArgs& a) {
  data::dataset_path(a.name, "synthetic");  // an unknown name names the list
  const data::DatasetSource* s = data::find_source(a.name);
  if (s == nullptr) {
    throw Error("dataset '" + a.name +
                "' has nothing to download: " + data::dataset_help(a.name));
  }
  data::FetchOptions o;
  o.dir = a.dir;
  if (const char* m = std::getenv("NNBENCH_DATA_MIRROR"); m && *m) o.mirror = m;
  o.progress = [](const std::string& url) {
    fmt::print(stderr, "nnbench: downloading {}\n", url);
  };
  try {
    const data::FetchResult r = data::fetch_dataset(*s, o);
    if (r.already_present) {
      fmt::print("{} is already in {} (nothing downloaded)\n", a.name, r.dir);
    } else {
      fmt::print("{}: {} MB downloaded, SHA-256 checked ({}), in {}\n", a.name,
                 mb(r.downloaded_bytes), s->hashes_from, r.dir);
    }
  } catch (const data::DataError& e) {
    // The input could not be read as published: exit 3, as for any file.
    fmt::print(stderr, "nnbench: error: {}\n", e.what());
    return kExitIo;
  }
  return kExitOk;
}

}  // namespace

Action add_data(CLI::App& app) {
  auto a = std::make_shared<DataArgs>();
  app.require_subcommand(1);
  auto* list = app.add_subcommand(
      "list", "The datasets, their download sizes and where each is found");
  auto* get = app.add_subcommand(
      "fetch",
      "Download a dataset from its canonical source, checked against its "
      "published SHA-256 (NNBENCH_DATA_MIRROR=URL: a mirror of the same "
      "files)");
  get->add_option("name", a->name, "Dataset (see `nnbench data list`)")
      ->required();
  get->add_option("--dir", a->dir,
                  "Folder to create for it (default: the one training "
                  "reads when no --data path is given)");
  return [a, list, get]() {
    if (list->parsed()) return list_data();
    return fetch(*a);
  };
}

}  // namespace nnbench::cli
