#include "tensor/tensor_file.h"

#include <cstdint>
#include <cstring>
#include <fstream>
#include <iterator>
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

std::map<std::string, host::Tensor> read_tensors(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error("cannot read tensor file " + path);
  const std::string all((std::istreambuf_iterator<char>(in)), {});
  uint64_t n = 0;
  if (all.size() < 8) throw Error("tensor file " + path + " is truncated");
  std::memcpy(&n, all.data(), 8);
  if (n > all.size() - 8) throw Error("tensor file " + path + " is truncated");
  std::map<std::string, host::Tensor> out;
  try {
    const auto header = nlohmann::json::parse(all.substr(8, n));
    const size_t base = 8 + n;
    for (const auto& e : header.at("tensors")) {
      host::Tensor t;
      t.shape = e.at("shape").get<std::vector<int64_t>>();
      size_t count = 1;
      for (int64_t d : t.shape) count *= static_cast<size_t>(d);
      const size_t at = base + e.at("offset").get<size_t>();
      const bool ints = e.at("dtype") == "int64";
      const size_t bytes = count * (ints ? 8 : 4);
      if (at + bytes > all.size())
        throw Error("tensor '" + e.at("name").get<std::string>() +
                    "' runs past the end");
      if (ints) {
        t.dtype = model::DType::kInt64;
        t.i.resize(count);
        std::memcpy(t.i.data(), all.data() + at, bytes);
      } else {
        t.f.resize(count);
        std::memcpy(t.f.data(), all.data() + at, bytes);
      }
      out[e.at("name")] = std::move(t);
    }
  } catch (const nlohmann::json::exception& e) {
    throw Error("tensor file " + path + ": malformed header: " + e.what());
  } catch (const Error& e) {
    throw Error("tensor file " + path + ": " + e.what());
  }
  return out;
}

}  // namespace nnbench::host
