#include "machine/instance.h"

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <iterator>

#include "util/error.h"
#include "util/http.h"

namespace nnbench::machine {
namespace {

std::string read_small(const std::string& path) {
  std::ifstream in(path);
  std::string s((std::istreambuf_iterator<char>(in)), {});
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
  return s;
}

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(),
                 [](unsigned char c) { return std::tolower(c); });
  return s;
}

// The cloud the firmware names, "" for none.
std::string firmware_cloud() {
  std::string id;
  for (const char* f :
       {"sys_vendor", "product_name", "bios_vendor", "bios_version"})
    id += " " + lower(read_small(std::string("/sys/class/dmi/id/") + f));
  if (id.find("amazon") != std::string::npos) return "aws";
  if (id.find("google") != std::string::npos) return "gce";
  if (id.find("microsoft") != std::string::npos) return "azure";
  return "";
}

struct Endpoint {
  std::string provider, host = "169.254.169.254";
  int port = 80;
};

std::optional<Endpoint> endpoint() {
  const char* v = std::getenv("NNBENCH_METADATA");
  if (v && std::string(v) == "none") return std::nullopt;
  if (v && *v) {
    const std::string s = v;
    const size_t eq = s.find('='), colon = s.rfind(':');
    if (eq == std::string::npos || colon == std::string::npos || colon < eq)
      return std::nullopt;
    return Endpoint{s.substr(0, eq), s.substr(eq + 1, colon - eq - 1),
                    std::atoi(s.c_str() + colon + 1)};
  }
  const std::string cloud = firmware_cloud();
  if (cloud.empty()) return std::nullopt;
  return Endpoint{cloud};
}

std::string trimmed(std::string s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back())))
    s.pop_back();
  return s;
}

// The provider's name of this machine's type, "" when it did not answer.
std::string instance_type(const Endpoint& e) {
  util::HttpRequest r;
  r.host = e.host;
  r.port = e.port;
  r.deadline_ms = kMetadataDeadlineMs;
  if (e.provider == "aws") {
    // IMDSv2 first (a session token), then v1 where v2 is not required.
    r.method = "PUT";
    r.path = "/latest/api/token";
    r.headers = {"X-aws-ec2-metadata-token-ttl-seconds: 60",
                 "Content-Length: 0"};
    const auto token = util::http_body(r);
    r.method = "GET";
    r.path = "/latest/meta-data/instance-type";
    r.headers.clear();
    if (token) r.headers.push_back("X-aws-ec2-metadata-token: " + *token);
    return trimmed(util::http_body(r).value_or(""));
  }
  if (e.provider == "gce") {
    r.path = "/computeMetadata/v1/instance/machine-type";
    r.headers = {"Metadata-Flavor: Google"};
    // "projects/123/machineTypes/n1-standard-8"
    const std::string t = trimmed(util::http_body(r).value_or(""));
    return t.substr(t.rfind('/') + 1);
  }
  if (e.provider == "azure") {
    r.path =
        "/metadata/instance/compute/vmSize?api-version=2021-02-01"
        "&format=text";
    r.headers = {"Metadata: true"};
    return trimmed(util::http_body(r).value_or(""));
  }
  return "";
}

std::string catalog_path() {
  const char* p = std::getenv("NNBENCH_PRICES");
  return p && *p ? p : cost::default_catalog_path();
}

std::optional<cost::Instance> in_catalog(const std::string& name) {
  try {
    for (const auto& i : cost::load_catalog(catalog_path()))
      if (i.name == name) return i;
  } catch (const Error&) {
    // An unreadable catalog prices nothing; the commands that price say so.
  }
  return std::nullopt;
}

}  // namespace

std::string catalog_name(const std::string& provider, const std::string& type) {
  return provider + "-" + type;
}

std::optional<MachineInstance> detect_instance() {
  if (const char* n = std::getenv("NNBENCH_INSTANCE"); n && *n)
    return MachineInstance{n, "--instance", in_catalog(n)};
  const auto e = endpoint();
  if (!e) return std::nullopt;
  const std::string type = instance_type(*e);
  if (type.empty()) return std::nullopt;
  const std::string name = catalog_name(e->provider, type);
  return MachineInstance{name, e->provider + " metadata", in_catalog(name)};
}

nlohmann::json to_json(const std::optional<MachineInstance>& i) {
  if (!i) return nullptr;
  nlohmann::json j = {{"name", i->name}, {"source", i->source}};
  if (!i->catalog) {
    j["usd_per_hour"] = nullptr;  // not in the catalog: no price, never 0
    return j;
  }
  const cost::Instance& c = *i->catalog;
  j["provider"] = c.provider;
  j["usd_per_hour"] = c.usd_per_hour;
  j["pricing"] = c.pricing;
  j["price_date"] = c.date;
  j["price_source"] = c.source;
  j["vcpus"] = c.vcpus;
  j["gpus"] = c.gpus;
  j["pro_rata_vcpus"] = c.pro_rata_vcpus;
  return j;
}

void name_instance(const std::string& name, const std::string& catalog) {
  const std::string path =
      catalog.empty() ? cost::default_catalog_path() : catalog;
  cost::find_instance(cost::load_catalog(path), name);
  setenv("NNBENCH_INSTANCE", name.c_str(), 1);
  if (!catalog.empty()) setenv("NNBENCH_PRICES", catalog.c_str(), 1);
}

}  // namespace nnbench::machine
