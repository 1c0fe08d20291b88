#include "engines/worker/contract.h"

#include <stdexcept>

#include "backend/backend.h"
#include "util/error.h"

namespace nnbench::engines::worker::contract {
namespace {

using nlohmann::json;

const json& contract() {
  static const json c = json::parse(
#include "contract_json.inc"
  );
  return c;
}

const json& op_entry(const std::string& op) {
  const json& ops = contract().at("ops");
  const auto it = ops.find(op);
  if (it == ops.end())
    throw std::logic_error("the worker contract has no op '" + op + "'");
  return *it;
}

struct Kind {
  std::string name;  // as the contract writes it, without '?'
  bool optional = false;
};

Kind kind_of(const json& k) {
  std::string s = k.get<std::string>();
  Kind out;
  if (!s.empty() && s.back() == '?') {
    out.optional = true;
    s.pop_back();
  }
  out.name = s;
  return out;
}

bool all_of(const json& v, bool (json::*is)() const noexcept) {
  if (!v.is_array()) return false;
  for (const auto& x : v)
    if (!(x.*is)()) return false;
  return true;
}

bool is(const json& v, const std::string& kind) {
  if (kind == "string" || kind == "path") return v.is_string();
  if (kind == "integer") return v.is_number_integer();
  if (kind == "number") return v.is_number();
  if (kind == "boolean") return v.is_boolean();
  if (kind == "object") return v.is_object();
  if (kind == "strings") return all_of(v, &json::is_string);
  if (kind == "numbers") return all_of(v, &json::is_number);
  if (kind == "objects") return all_of(v, &json::is_object);
  if (kind == "number or null") return v.is_number() || v.is_null();
  throw std::logic_error("the worker contract has no kind '" + kind + "'");
}

// "a list of numbers" for the messages.
std::string described(const std::string& kind) {
  if (kind == "strings") return "list of strings";
  if (kind == "numbers") return "list of numbers";
  if (kind == "objects") return "list of objects";
  if (kind == "path") return "file name";
  return kind;
}

}  // namespace

json request(const std::string& op, json fields) {
  const json& spec = op_entry(op).at("request");
  for (const auto& [key, value] : fields.items()) {
    if (!spec.contains(key))
      throw std::logic_error("the worker contract's '" + op +
                             "' has no field '" + key + "'");
    if (!is(value, kind_of(spec[key]).name))
      throw std::logic_error("the worker contract's '" + op + "' field '" +
                             key + "' is a " +
                             described(kind_of(spec[key]).name));
  }
  for (const auto& [key, k] : spec.items())
    if (!kind_of(k).optional && !fields.contains(key))
      throw std::logic_error("the worker contract's '" + op +
                             "' needs the field '" + key + "'");
  fields["op"] = op;
  return fields;
}

void check_reply(const std::string& op, const json& reply) {
  const json& spec = op_entry(op).at("reply");
  if (!spec.is_object()) return;
  for (const auto& [key, k] : spec.items()) {
    const Kind kind = kind_of(k);
    const auto it = reply.find(key);
    if (it == reply.end() && kind.optional) continue;
    if (it == reply.end() || !is(*it, kind.name))
      throw std::runtime_error("the worker's reply to '" + op + "' has no " +
                               described(kind.name) + " '" + key +
                               "': " + reply.dump().substr(0, 200));
  }
}

void throw_failure(const std::string& state, const std::string& message,
                   const std::string& tail) {
  if (state == "unimplemented") throw backend::Unimplemented(message);
  if (state == "oom") throw backend::OutOfMemory(message);
  if (state == "invalid_args") throw Error(message);
  throw std::runtime_error(message + tail);
}

std::vector<std::string> ops() {
  std::vector<std::string> out;
  for (const auto& [k, v] : contract().at("ops").items()) out.push_back(k);
  return out;
}

std::vector<std::string> states() {
  std::vector<std::string> out;
  for (const auto& [k, v] : contract().at("states").items()) out.push_back(k);
  return out;
}

}  // namespace nnbench::engines::worker::contract
