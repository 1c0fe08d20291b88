#pragma once
// Reading a TOML file with every error naming its place: "FILE:LINE:COLUMN:
// why", as nnbench::Error (exit code 2 at the command line). Typed scalars
// with their range checked, lists without repeats, unknown keys refused
// with the known ones listed.
#include <toml++/toml.h>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <set>
#include <sstream>
#include <string>
#include <type_traits>
#include <vector>

#include "util/error.h"

namespace nnbench::util {

namespace detail {
// A listed value as an error message shows it.
template <typename T>
std::string shown(const T& v) {
  if constexpr (std::is_same_v<T, std::string>)
    return "'" + v + "'";
  else
    return std::to_string(v);
}
}  // namespace detail

class TomlReader {
 public:
  explicit TomlReader(std::string file) : file_(std::move(file)) {}

  [[noreturn]] void fail(const toml::source_region& at,
                         const std::string& why) const {
    std::ostringstream s;
    s << file_ << ":" << at.begin.line << ":" << at.begin.column << ": " << why;
    throw Error(s.str());
  }

  // Every key of `t` must be one of `known`.
  void only(const toml::table& t, const std::set<std::string>& known,
            const std::string& where) const {
    for (auto&& [k, v] : t) {
      if (known.count(std::string(k.str()))) continue;
      std::string list;
      for (const auto& n : known) list += (list.empty() ? "" : ", ") + n;
      fail(k.source(), "unknown key '" + std::string(k.str()) + "' in " +
                           where + " (known: " + list + ")");
    }
  }

  template <typename T>
  T scalar(const toml::node& n, const std::string& key) const {
    if constexpr (std::is_same_v<T, std::string>) {
      if (auto v = n.value_exact<std::string>()) return *v;
      fail(n.source(), "'" + key + "' must be a string");
    } else if constexpr (std::is_same_v<T, bool>) {
      if (auto v = n.value_exact<bool>()) return *v;
      fail(n.source(), "'" + key + "' must be true or false");
    } else if constexpr (std::is_integral_v<T>) {
      const auto v = n.value_exact<int64_t>();
      if (!v) fail(n.source(), "'" + key + "' must be an integer");
      if (*v < std::numeric_limits<T>::min() ||
          *v > std::numeric_limits<T>::max())
        fail(n.source(),
             "'" + key + "' " + std::to_string(*v) + " is out of range");
      return static_cast<T>(*v);
    } else {
      if (n.is_integer() || n.is_floating_point())
        return static_cast<T>(*n.value<double>());
      fail(n.source(), "'" + key + "' must be a number");
    }
  }

  template <typename T>
  std::vector<T> list(const toml::node& n, const std::string& key) const {
    const toml::array* a = n.as_array();
    if (!a) fail(n.source(), "'" + key + "' must be a list");
    if (a->empty()) fail(n.source(), "'" + key + "' is an empty list");
    std::vector<T> out;
    for (const auto& x : *a) {
      T v = scalar<T>(x, key);
      const auto same = std::find(out.begin(), out.end(), v);
      if (same != out.end())
        fail(x.source(),
             "'" + key + "' lists " + detail::shown(v) + " twice (also at " +
                 at((*a)[same - out.begin()]) +
                 "): each case runs once per repetition; use repetitions");
      out.push_back(std::move(v));
    }
    return out;
  }

  // Every element of a list with where it is, for checks per element.
  template <typename F>
  void each(const toml::node& n, F&& f) const {
    if (const toml::array* a = n.as_array())
      for (const auto& x : *a) f(x);
  }

  // "line 3, column 12"
  static std::string at(const toml::node& n) {
    return "line " + std::to_string(n.source().begin.line) + ", column " +
           std::to_string(n.source().begin.column);
  }

  std::string where(const toml::node& n) const {
    return file_ + ":" + std::to_string(n.source().begin.line) + ":" +
           std::to_string(n.source().begin.column);
  }

  const toml::table& table(const toml::node& n, const std::string& key) const {
    if (const toml::table* t = n.as_table()) return *t;
    fail(n.source(), "'" + key + "' must be a table");
  }

 private:
  std::string file_;
};

}  // namespace nnbench::util
