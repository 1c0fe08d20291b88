#include "engines/worker/manifest.h"

#include <toml++/toml.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <stdexcept>

#include "util/paths.h"

namespace nnbench::engines::worker {
namespace {

namespace fs = std::filesystem;

// A manifest's mistake, with the file, line and column it is at.
struct Bad : std::runtime_error {
  using std::runtime_error::runtime_error;
};

class Reader {
 public:
  Reader(std::string file, const toml::table& t)
      : file_(std::move(file)), t_(t) {}

  [[noreturn]] void fail(const toml::source_region& at,
                         const std::string& what) const {
    throw Bad(file_ + ":" + std::to_string(at.begin.line) + ":" +
              std::to_string(at.begin.column) + ": " + what);
  }

  void only(const toml::table& t, std::initializer_list<const char*> keys,
            const std::string& where) const {
    for (const auto& [k, v] : t)
      if (std::find_if(keys.begin(), keys.end(), [&](const char* x) {
            return k.str() == x;
          }) == keys.end())
        fail(v.source(),
             "unknown field '" + std::string(k.str()) + "' in " + where);
  }

  std::string text(const char* key, bool required) const {
    const toml::node* n = t_.get(key);
    if (!n) {
      if (required)
        fail(t_.source(), "missing field '" + std::string(key) + "'");
      return "";
    }
    const auto v = n->value<std::string>();
    if (!v || v->empty() || v->size() > 400)
      fail(n->source(), "'" + std::string(key) +
                            "' must be a string of 1 to 400 characters");
    return *v;
  }

  std::vector<std::string> texts(const char* key) const {
    std::vector<std::string> out;
    const toml::node* n = t_.get(key);
    if (!n) return out;
    const toml::array* a = n->as_array();
    if (!a)
      fail(n->source(), "'" + std::string(key) + "' must be a list of strings");
    for (const auto& x : *a) {
      const auto v = x.value<std::string>();
      if (!v || v->empty())
        fail(x.source(),
             "'" + std::string(key) + "' must be a list of strings");
      out.push_back(*v);
    }
    return out;
  }

  bool flag(const toml::table& t, const char* key, bool otherwise) const {
    const toml::node* n = t.get(key);
    if (!n) return otherwise;
    const auto v = n->value<bool>();
    if (!v)
      fail(n->source(), "'" + std::string(key) + "' must be true or false");
    return *v;
  }

  int order() const {
    const toml::node* n = t_.get("order");
    if (!n) fail(t_.source(), "missing field 'order'");
    const auto v = n->value<int64_t>();
    if (!v || *v < 1 || *v > 1000)
      fail(n->source(), "'order' must be an integer from 1 to 1000");
    return static_cast<int>(*v);
  }

 private:
  std::string file_;
  const toml::table& t_;
};

bool plain_name(const std::string& n) {
  if (n.empty() || n.size() > 40 || !(n[0] >= 'a' && n[0] <= 'z')) return false;
  return std::all_of(n.begin(), n.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' ||
           c == '-';
  });
}

Listed parse(const std::string& file, const std::string& name) {
  toml::table root;
  try {
    root = toml::parse_file(file);
  } catch (const toml::parse_error& e) {
    Reader(file, root).fail(e.source(), std::string(e.description()));
  }
  const Reader r(file, root);
  r.only(root,
         {"summary", "order", "python", "setup", "setup_by_default", "debian",
          "unavailable", "capabilities"},
         "the manifest");
  Listed l;
  Framework& f = l.framework;
  f.name = name;
  f.folder = name;
  l.order = r.order();
  r.text("summary", true);  // for readers and scripts/setup's messages
  f.impossible = r.text("unavailable", false);
  for (const auto& p : r.texts("python")) {
    if (p == "venv")
      f.pythons.push_back("venv:" + name);
    else if (p[0] == '/')
      f.pythons.push_back(p);
    else
      r.fail(root.get("python")->source(),
             "'python' lists \"venv\" (the framework's own environment) or "
             "absolute paths, not '" +
                 p + "'");
  }
  if (f.pythons.empty() && f.impossible.empty())
    r.fail(root.source(),
           "'python' is missing: a framework that runs names its "
           "interpreters (\"venv\" for its own environment); one that "
           "cannot says why in 'unavailable'");
  f.setup = r.text("setup", false);
  if (f.setup.empty() && f.impossible.empty())
    f.setup = "scripts/setup " + name;
  r.flag(root, "setup_by_default", true);  // read by scripts/setup
  r.texts("debian");                       // read by scripts/setup
  if (const toml::node* c = root.get("capabilities")) {
    const toml::table* t = c->as_table();
    if (!t) r.fail(c->source(), "'capabilities' must be a table");
    r.only(*t, {"training", "lr_schedules", "running_stats"}, "[capabilities]");
    f.can.training = r.flag(*t, "training", true);
    f.can.lr_schedules = r.flag(*t, "lr_schedules", false);
    f.can.running_stats = r.flag(*t, "running_stats", false);
  }
  if (!f.impossible.empty()) f.can = {};
  return l;
}

}  // namespace

std::string frameworks_dir() {
  if (const char* d = std::getenv("NNBENCH_FRAMEWORKS"); d && *d) return d;
  return util::shipped_path("frameworks", "frameworks");
}

Listed read_manifest(const std::string& dir, const std::string& name) {
  const std::string file = dir + "/" + name + "/framework.toml";
  if (!plain_name(name)) {
    Listed l;
    l.framework.name = name;
    l.framework.folder = name;
    l.framework.impossible =
        file +
        ": a framework's folder name is 1 to 40 lowercase letters, "
        "digits, '_' or '-', starting with a letter";
    l.order = 1000;
    return l;
  }
  try {
    return parse(file, name);
  } catch (const Bad& e) {
    Listed l;
    l.framework.name = name;
    l.framework.folder = name;
    l.framework.impossible = std::string("its manifest is wrong: ") + e.what();
    l.order = 1000;
    return l;
  }
}

std::vector<Listed> list_frameworks(const std::string& dir) {
  std::vector<Listed> out;
  std::error_code ec;
  if (dir.empty()) return out;
  for (const auto& e : fs::directory_iterator(dir, ec))
    if (e.is_directory() && fs::exists(e.path() / "framework.toml"))
      out.push_back(read_manifest(dir, e.path().filename().string()));
  std::sort(out.begin(), out.end(), [](const Listed& a, const Listed& b) {
    return a.order != b.order ? a.order < b.order
                              : a.framework.name < b.framework.name;
  });
  return out;
}

}  // namespace nnbench::engines::worker
