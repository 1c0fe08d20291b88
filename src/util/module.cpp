#include "util/module.h"

#include <dlfcn.h>

#include <filesystem>
#include <map>
#include <mutex>

#include "util/paths.h"

namespace nnbench::util {
namespace {

struct Loaded {
  void* handle = nullptr;
  std::string why;
};

}  // namespace

std::string module_path(const std::string& name) {
  const std::string exe = exe_path();
  if (exe.empty()) return "";
  return (std::filesystem::path(exe).parent_path().parent_path() / "lib" /
          "nnbench" / (name + ".so"))
      .string();
}

void* load_module(const std::string& name, std::string* why) {
  static std::mutex mutex;
  static std::map<std::string, Loaded> loaded;
  std::lock_guard<std::mutex> lock(mutex);
  auto [it, first] = loaded.try_emplace(name);
  Loaded& m = it->second;
  if (first) {
    const std::string path = module_path(name);
    if (path.empty()) {
      m.why = "module " + name + ": /proc/self/exe is unreadable";
    } else {
      // Local: LibTorch's symbols stay out of the process's global scope.
      // The module binds its own symbols now (linked with -z now), so a
      // missing one fails here with its name, never in a later call.
      m.handle = dlopen(path.c_str(), RTLD_LAZY | RTLD_LOCAL);
      if (!m.handle) {
        const char* e = dlerror();
        m.why = e ? e : "cannot load " + path;
      }
    }
  }
  if (!m.handle && why) *why = m.why;
  return m.handle;
}

void* module_symbol(const std::string& name, const char* symbol,
                    std::string* why) {
  void* handle = load_module(name, why);
  if (!handle) return nullptr;
  dlerror();
  void* s = dlsym(handle, symbol);
  if (!s && why) {
    const char* e = dlerror();
    *why = e ? e : std::string("no symbol ") + symbol + " in module " + name;
  }
  return s;
}

}  // namespace nnbench::util
