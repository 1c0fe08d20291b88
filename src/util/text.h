#pragma once
// Words for counted things in messages: "1 thread", "2 threads",
// "3 losses".
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

namespace nnbench::util {

// The plural of an English noun as nnbench's messages use them: "es" after
// s, x, z, ch and sh ("losses"), else "s".
inline std::string plural_of(const std::string& noun) {
  const auto ends = [&](const char* e) {
    const std::string s(e);
    return noun.size() >= s.size() &&
           noun.compare(noun.size() - s.size(), s.size(), s) == 0;
  };
  if (ends("s") || ends("x") || ends("z") || ends("ch") || ends("sh"))
    return noun + "es";
  return noun + "s";
}

// A whole string read as a finite number ("0.02", "1e-3"); false for
// "", "0.02x", "nan", "inf".
inline bool parse_number(const std::string& text, double& out) {
  char* end = nullptr;
  const double x = std::strtod(text.c_str(), &end);
  if (text.empty() || *end != '\0' || !std::isfinite(x)) return false;
  out = x;
  return true;
}

// "1 thread", "2 threads", "0 threads".
inline std::string count(int64_t n, const std::string& noun) {
  return std::to_string(n) + " " + (n == 1 ? noun : plural_of(noun));
}

// A size in binary units, about three significant digits: "512 B",
// "1.50 GiB", "26.9 PiB", "1000 MiB".
inline std::string bytes_text(double bytes) {
  static const char* const units[] = {"B",   "KiB", "MiB", "GiB",
                                      "TiB", "PiB", "EiB"};
  int u = 0;
  while (bytes >= 1024 && u < 6) bytes /= 1024, ++u;
  char buf[32];
  const int decimals = u == 0 || bytes >= 100 ? 0 : bytes >= 10 ? 1 : 2;
  std::snprintf(buf, sizeof buf, "%.*f %s", decimals, bytes, units[u]);
  return buf;
}

// What another program printed, made safe to show on a terminal: control
// characters (escape sequences that retitle or recolour the terminal, a
// carriage return that hides the line before) and bytes that are not
// UTF-8 become visible escapes ("\x1b"); newlines and tabs stay unless
// `one_line`, printable text (UTF-8 included) stays as it is.
std::string printable(const std::string& text, bool one_line = false);

}  // namespace nnbench::util
