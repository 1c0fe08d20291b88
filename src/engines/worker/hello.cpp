#include "engines/worker/hello.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <stdexcept>
#include <vector>

#include "engines/worker/contract.h"
#include "engines/worker/manifest.h"
#include "engines/worker/start.h"
#include "util/atomic_file.h"
#include "util/paths.h"

namespace nnbench::engines::worker {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

std::string stamp(const std::string& path) {
  std::error_code ec;
  const auto t = fs::last_write_time(path, ec);
  return path + "@" +
         (ec ? "missing" : std::to_string(t.time_since_epoch().count()));
}

// Every .py file directly in `dir`, sorted (a directory iterator's order
// is unspecified); none of __pycache__, which Python writes on import.
std::string stamp_python_files(const fs::path& dir) {
  std::vector<std::string> files;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec))
    if (e.path().extension() == ".py" && e.is_regular_file(ec))
      files.push_back(e.path().string());
  std::sort(files.begin(), files.end());
  std::string out = ec ? dir.string() + "@unreadable" : "";
  for (const auto& f : files) out += " " + stamp(f);
  return out;
}

}  // namespace

std::string hello_key(const Framework& f, const std::string& python) {
  const std::string dir = frameworks_dir();
  const fs::path env = fs::path(python).parent_path().parent_path();
  std::string key = stamp(python) + stamp_python_files(dir + "/common") +
                    stamp_python_files(dir + "/" + f.folder) + " " +
                    stamp(dir + "/" + f.folder + "/engine.py");
  // oneDNN's cap: a framework whose kernels are oneDNN's (PyTorch) tries
  // what runs under it when it says hello.
  for (const char* cap : {"ONEDNN_MAX_CPU_ISA", "DNNL_MAX_CPU_ISA"})
    if (const char* v = std::getenv(cap))
      key += std::string(" ") + cap + "=" + v;
  // The environment's packages (pip and apt touch these folders).
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(env / "lib", ec))
    if (e.path().filename().string().rfind("python", 0) == 0)
      for (const char* sub : {"site-packages", "dist-packages"})
        if (fs::exists(e.path() / sub))
          key += " " + stamp((e.path() / sub).string());
  return key;
}

namespace {

// Each gap hello declares, of the kinds supports() reads (the contract
// says "objects" only): a malformed hello makes the engine unavailable
// naming the field, never a JSON library's exception in every command.
void check_gaps(const json& r) {
  for (const auto& gap : r.value("unsupported", json::array()))
    for (const char* k : {"op", "attribute", "precision", "why"})
      if (gap.contains(k) && !gap[k].is_string())
        throw std::runtime_error(std::string("its hello reply's "
                                             "'unsupported[].") +
                                 k + "' is not a string");
}

json cached_hello(const Framework& f, const std::string& key) {
  std::ifstream in(util::cache_dir() + "/hello-" + f.name + ".json");
  if (!in) return nullptr;
  try {
    const json j = json::parse(in);
    if (j.value("key", "") == key) {
      contract::check_reply("hello", j.at("reply"));  // a cache on disk
      check_gaps(j.at("reply"));
      return j.at("reply");
    }
  } catch (const std::exception&) {
  }
  return nullptr;
}

void keep_hello(const Framework& f, const std::string& key, const json& reply) {
  try {
    fs::create_directories(util::cache_dir());
    util::write_file_atomically(
        util::cache_dir() + "/hello-" + f.name + ".json",
        json{{"key", key}, {"reply", reply}}.dump());
  } catch (const std::exception&) {
    // A cache that cannot be written costs the next command a second.
  }
}

}  // namespace

const Hello& hello(const Framework& f) {
  static std::mutex mu;
  static std::map<std::string, Hello> cache;
  std::lock_guard<std::mutex> lock(mu);
  if (const auto it = cache.find(f.name); it != cache.end()) return it->second;
  Hello h;
  h.python = f.impossible.empty() ? python_of(f) : "";
  if (!f.impossible.empty()) {
    h.unavailable = "cannot be installed here: " + f.impossible;
  } else if (h.python.empty()) {
    h.unavailable = "no Python environment for " + f.name + ": run " + f.setup;
  } else {
    try {
      const std::string key = hello_key(f, h.python);
      h.reply = cached_hello(f, key);
      if (h.reply.is_null()) {
        Scratch s;
        auto p = start(f, h.python, s);
        h.reply = p->request("hello", {}, start_timeout_seconds());
        check_gaps(h.reply);  // Process::request checked the rest
        keep_hello(f, key, h.reply);
      }
    } catch (const std::exception& e) {
      h.unavailable = f.name + " does not start in " + h.python + " (" +
                      e.what() + "): run " + f.setup;
    }
  }
  return cache.emplace(f.name, std::move(h)).first->second;
}

}  // namespace nnbench::engines::worker
