#pragma once
// Small readers of /proc and /sys text files, shared by the environment's
// probes and its warnings. Each returns "" when the file or key is absent.
#include <cctype>
#include <fstream>
#include <string>

namespace nnbench::machine::proc {

// Each probe runs on its own so that one failure leaves the rest captured.
template <class F>
inline void guarded(F&& probe) noexcept {
  try {
    probe();
  } catch (...) {
  }
}

inline std::string trim(const std::string& s) {
  const auto first = s.find_first_not_of(" \t\r\n\"");
  if (first == std::string::npos) return "";
  const auto last = s.find_last_not_of(" \t\r\n\"");
  return s.substr(first, last - first + 1);
}

inline std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(c));
  return s;
}

inline std::string first_line(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  return trim(line);
}

// "key<sep>value" -> value for the first line whose key matches.
inline std::string lookup(const std::string& path, const std::string& key,
                          char sep) {
  std::ifstream in(path);
  for (std::string line; std::getline(in, line);) {
    const auto pos = line.find(sep);
    if (pos != std::string::npos && trim(line.substr(0, pos)) == key) {
      return trim(line.substr(pos + 1));
    }
  }
  return "";
}

}  // namespace nnbench::machine::proc
