#include "model/model_file.h"

#include <openssl/evp.h>

#include <fstream>
#include <set>
#include <sstream>

#include "model/analysis.h"
#include "util/atomic_file.h"
#include "util/error.h"

namespace nnbench::model {
namespace {

using nlohmann::json;

// Writes attribute `key` of layer `l` into `j`.
void put_attr(json& j, const Layer& l, std::string_view key) {
  const std::string k(key);
  if (key == "out") j[k] = l.out;
  if (key == "kernel") j[k] = l.kernel;
  if (key == "stride") j[k] = l.stride;
  if (key == "pad") j[k] = l.pad;
  if (key == "groups") j[k] = l.groups;
  if (key == "bias") j[k] = l.bias;
  if (key == "ceil_mode") j[k] = l.ceil_mode;
  if (key == "num_layers") j[k] = l.num_layers;
  if (key == "bidirectional") j[k] = l.bidirectional;
  if (key == "sequences") j[k] = l.sequences;
  if (key == "lstm_biases") j[k] = l.lstm_biases;
  if (key == "vocab") j[k] = l.vocab;
  if (key == "p") j[k] = l.p;
  if (key == "eps") j[k] = l.eps;
  if (key == "momentum") j[k] = l.momentum;
  if (key == "size") j[k] = l.size;
  if (key == "alpha") j[k] = l.alpha;
  if (key == "beta") j[k] = l.beta;
  if (key == "k") j[k] = l.k;
  if (key == "heads") j[k] = l.heads;
  if (key == "causal") j[k] = l.causal;
  if (key == "approximate") j[k] = l.approximate;
  if (key == "tied") j[k] = l.tied;
}

// Reads attribute `key` from `v` into layer `l`; nlohmann throws on a type
// mismatch and the caller adds the context.
void get_attr(const json& v, Layer& l, std::string_view key) {
  if (key == "out") l.out = v.get<int64_t>();
  if (key == "kernel") l.kernel = v.get<std::array<int64_t, 2>>();
  if (key == "stride") l.stride = v.get<std::array<int64_t, 2>>();
  if (key == "pad") l.pad = v.get<std::array<int64_t, 2>>();
  if (key == "groups") l.groups = v.get<int64_t>();
  if (key == "bias") l.bias = v.get<bool>();
  if (key == "ceil_mode") l.ceil_mode = v.get<bool>();
  if (key == "num_layers") l.num_layers = v.get<int64_t>();
  if (key == "bidirectional") l.bidirectional = v.get<bool>();
  if (key == "sequences") l.sequences = v.get<bool>();
  if (key == "lstm_biases") l.lstm_biases = v.get<int64_t>();
  if (key == "vocab") l.vocab = v.get<int64_t>();
  if (key == "p") l.p = v.get<double>();
  if (key == "eps") l.eps = v.get<double>();
  if (key == "momentum") l.momentum = v.get<double>();
  if (key == "size") l.size = v.get<int64_t>();
  if (key == "alpha") l.alpha = v.get<double>();
  if (key == "beta") l.beta = v.get<double>();
  if (key == "k") l.k = v.get<double>();
  if (key == "heads") l.heads = v.get<int64_t>();
  if (key == "causal") l.causal = v.get<bool>();
  if (key == "approximate") l.approximate = v.get<bool>();
  if (key == "tied") l.tied = v.get<int64_t>();
}

json layer_json(const Layer& l) {
  json j;
  j["name"] = l.name;
  j["op"] = std::string(op_name(l.op));
  if (!l.inputs.empty()) j["inputs"] = l.inputs;
  for (auto key : op_attributes(l.op)) put_attr(j, l, key);
  return j;
}

Layer parse_layer(const json& j, const std::string& where) {
  if (!j.is_object()) throw Error(where + ": expected an object");
  if (!j.contains("op") || !j["op"].is_string())
    throw Error(where + ": missing string field 'op'");
  Layer l;
  try {
    l.op = op_from_name(j["op"].get<std::string>());
  } catch (const Error& e) {
    throw Error(where + ": field 'op': " + e.what());
  }
  const auto& allowed = op_attributes(l.op);
  for (const auto& [key, value] : j.items()) {
    const std::string field = where + ": field '" + key + "'";
    try {
      if (key == "name") {
        l.name = value.get<std::string>();
      } else if (key == "inputs") {
        l.inputs = value.get<std::vector<int>>();
      } else if (key == "op") {
      } else if (std::find(allowed.begin(), allowed.end(), key) !=
                 allowed.end()) {
        get_attr(value, l, key);
      } else {
        throw Error(field + " is not an attribute of op '" +
                    std::string(op_name(l.op)) + "'");
      }
    } catch (const json::exception& e) {
      throw Error(field + ": wrong type (" + e.what() + ")");
    }
  }
  if (l.name.empty()) throw Error(where + ": missing field 'name'");
  return l;
}

template <typename T>
T field(const json& j, const char* key, const std::string& where) {
  if (!j.contains(key)) throw Error(where + ": missing field '" + key + "'");
  try {
    return j.at(key).get<T>();
  } catch (const json::exception& e) {
    throw Error(where + ": field '" + key + "': wrong type (" + e.what() + ")");
  }
}

InputSpec parse_input(const json& j, const std::string& where) {
  InputSpec in;
  in.shape = field<Shape>(j, "shape", where + ": input");
  in.dtype = dtype_from_name(field<std::string>(j, "dtype", where + ": input"));
  if (j.contains("vocab")) in.vocab = field<int64_t>(j, "vocab", where);
  return in;
}

}  // namespace

json to_json(const Model& m) {
  json j;
  j["format_version"] = kModelFormatVersion;
  j["name"] = m.name;
  j["study"] = m.study;
  j["source"] = m.source;
  j["notes"] = m.notes;
  j["input"] = {{"shape", m.input.shape},
                {"dtype", dtype_name(m.input.dtype)},
                {"vocab", m.input.vocab}};
  j["loss"] = loss_name(m.loss);
  j["layers"] = json::array();
  for (const auto& l : m.layers) j["layers"].push_back(layer_json(l));
  return j;
}

Model from_json(const json& j, const std::string& where) {
  if (!j.is_object()) throw Error(where + ": expected a JSON object");
  const int version = field<int>(j, "format_version", where);
  if (version != kModelFormatVersion)
    throw Error(where + ": format_version " + std::to_string(version) +
                " is not supported (this nnbench reads " +
                std::to_string(kModelFormatVersion) + ")");
  Model m;
  m.name = field<std::string>(j, "name", where);
  m.study = j.value("study", "");
  m.source = j.value("source", "");
  m.notes = j.value("notes", "");
  if (!j.contains("input")) throw Error(where + ": missing field 'input'");
  m.input = parse_input(j["input"], where);
  try {
    m.loss = loss_from_name(field<std::string>(j, "loss", where));
  } catch (const Error& e) {
    throw Error(where + ": field 'loss': " + e.what());
  }
  const auto layers = field<json>(j, "layers", where);
  if (!layers.is_array()) throw Error(where + ": 'layers' must be an array");
  std::set<std::string> names;
  for (size_t i = 0; i < layers.size(); ++i) {
    m.layers.push_back(
        parse_layer(layers[i], where + ": layers[" + std::to_string(i) + "]"));
    if (!names.insert(m.layers.back().name).second)
      throw Error(where + ": layers[" + std::to_string(i) +
                  "]: duplicate layer name '" + m.layers.back().name + "'");
  }
  try {
    infer_shapes(m);
  } catch (const Error& e) {
    throw Error(where + ": " + e.what());
  }
  return m;
}

Model load_model_file(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw Error(path + ": cannot open model file");
  json j;
  try {
    j = json::parse(in);
  } catch (const json::parse_error& e) {
    throw Error(path + ": not valid JSON: " + e.what());
  }
  return from_json(j, path);
}

void save_model_file(const Model& m, const std::string& path) {
  util::write_file_atomically(path, to_json(m).dump(2) + "\n");
}

std::string model_hash(const Model& m) {
  // nlohmann::json keeps object keys sorted, so dump() is canonical.
  const std::string text = to_json(m).dump();
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  EVP_Digest(text.data(), text.size(), digest, &len, EVP_sha256(), nullptr);
  std::ostringstream hex;
  for (unsigned int i = 0; i < len; ++i) {
    static const char* kHex = "0123456789abcdef";
    hex << kHex[digest[i] >> 4] << kHex[digest[i] & 15];
  }
  return "sha256:" + hex.str();
}

}  // namespace nnbench::model
