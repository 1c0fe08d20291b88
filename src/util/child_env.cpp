#include "util/child_env.h"

#include <mutex>

namespace nnbench::util {
namespace {

std::mutex& lock() {
  static std::mutex m;
  return m;
}

std::map<std::string, std::string>& vars() {
  static std::map<std::string, std::string> v;
  return v;
}

}  // namespace

void set_child_env(const std::string& name, const std::string& value) {
  std::lock_guard<std::mutex> g(lock());
  vars()[name] = value;
}

std::map<std::string, std::string> child_env() {
  std::lock_guard<std::mutex> g(lock());
  return vars();
}

}  // namespace nnbench::util
