#include "host/tensor_file.h"

#include <sys/stat.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>

#include "util/atomic_file.h"
#include "util/error.h"

namespace nnbench::host {

// The machines are little-endian x86-64 and ARM64; the format says so.
static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__);

void write_tensors(const std::string& path,
                   const std::map<std::string, host::Tensor>& tensors) {
  nlohmann::json header = nlohmann::json::array();
  std::string data;
  for (const auto& [name, t] : tensors) {
    const bool ints = t.dtype == model::DType::kInt64;
    const char* p = ints ? reinterpret_cast<const char*>(t.i.data())
                         : reinterpret_cast<const char*>(t.f.data());
    const size_t bytes = ints ? t.i.size() * 8 : t.f.size() * 4;
    header.push_back({{"name", name},
                      {"dtype", ints ? "int64" : "float32"},
                      {"shape", t.shape},
                      {"offset", data.size()}});
    data.append(p, bytes);
  }
  const std::string head = nlohmann::json{{"tensors", header}}.dump();
  const uint64_t n = head.size();
  std::string out(reinterpret_cast<const char*>(&n), 8);
  util::write_file_atomically(path, out + head + data);
}

namespace {

// The whole file, refused unless it is a regular file: a folder, a device
// (/dev/zero never ends) or a pipe is named, not read.
std::string read_regular_file(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0)
    throw Error("cannot read tensor file " + path + ": " +
                std::strerror(errno));
  if (S_ISDIR(st.st_mode))
    throw Error("tensor file " + path + " is a folder, not a file");
  if (!S_ISREG(st.st_mode))
    throw Error("tensor file " + path +
                " is not a regular file (a device or a pipe)");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error("cannot read tensor file " + path);
  std::string all(static_cast<size_t>(st.st_size), '\0');
  in.read(all.data(), static_cast<std::streamsize>(all.size()));
  // A file that changed size while read: what was read is what counts.
  all.resize(static_cast<size_t>(in.gcount()));
  return all;
}

// Elements of `shape`, each dimension checked, the product bounded by
// `limit` (the elements the file could hold) so that nothing larger than
// the file is ever allocated.
size_t element_count(const std::vector<int64_t>& shape, size_t limit) {
  for (int64_t d : shape)
    if (d < 0)
      throw Error("negative dimension " + std::to_string(d) + " in shape");
  size_t count = 1;
  for (int64_t d : shape) {
    if (d == 0) return 0;
    if (static_cast<uint64_t>(d) > limit / count)
      throw Error("shape holds more elements than the file has bytes for");
    count *= static_cast<size_t>(d);
  }
  return count;
}

}  // namespace

std::map<std::string, host::Tensor> read_tensors(const std::string& path) {
  const std::string all = read_regular_file(path);
  uint64_t n = 0;
  if (all.size() < 8) throw Error("tensor file " + path + " is truncated");
  std::memcpy(&n, all.data(), 8);
  if (n > all.size() - 8) throw Error("tensor file " + path + " is truncated");
  std::map<std::string, host::Tensor> out;
  const size_t base = 8 + n;
  const size_t data = all.size() - base;  // bytes after the header
  std::string name;                       // the tensor being read, for messages
  try {
    const auto header = nlohmann::json::parse(all.substr(8, n));
    for (const auto& e : header.at("tensors")) {
      name = e.at("name").get<std::string>();
      host::Tensor t;
      t.shape = e.at("shape").get<std::vector<int64_t>>();
      const bool ints = e.at("dtype") == "int64";
      if (!ints && e.at("dtype") != "float32")
        throw Error("dtype " + e.at("dtype").dump() +
                    " (float32 or int64 expected)");
      const size_t width = ints ? 8 : 4;
      const size_t count = element_count(t.shape, data / width);
      const size_t bytes = count * width;
      const size_t offset = e.at("offset").get<size_t>();
      if (offset > data || bytes > data - offset)
        throw Error("runs past the end (" + std::to_string(bytes) +
                    " bytes at offset " + std::to_string(offset) + ", " +
                    std::to_string(data) + " after the header)");
      const char* from = all.data() + base + offset;
      if (ints) {
        t.dtype = model::DType::kInt64;
        t.i.resize(count);
        std::memcpy(t.i.data(), from, bytes);
      } else {
        t.f.resize(count);
        std::memcpy(t.f.data(), from, bytes);
      }
      out[name] = std::move(t);
      name.clear();
    }
  } catch (const nlohmann::json::exception& e) {
    throw Error("tensor file " + path + ": malformed header" +
                (name.empty() ? "" : " at tensor '" + name + "'") + ": " +
                e.what());
  } catch (const Error& e) {
    throw Error("tensor file " + path +
                (name.empty() ? "" : ": tensor '" + name + "'") + ": " +
                e.what());
  }
  return out;
}

}  // namespace nnbench::host
