#pragma once
// Which cloud instance a machine is, so that results gathered from several
// machines can be priced and compared by what each one costs. Named by the
// user (`--instance NAME`, a catalog entry) or read from the cloud's
// metadata service; a machine that is neither records none.
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "cost/catalog.h"

namespace nnbench::machine {

struct MachineInstance {
  // The catalog's name ("aws-p3.2xlarge"); from a metadata service, the
  // provider's type prefixed the catalog's way even when the catalog lacks
  // it ("aws-m7i.large").
  std::string name;
  std::string source;  // "--instance" or "aws metadata", "gce metadata" ...
  std::optional<cost::Instance> catalog;  // none: not in the price catalog
};

// Each metadata request's deadline: on a cloud the service answers in a
// few milliseconds; elsewhere it is never asked (see detect_instance).
inline constexpr int kMetadataDeadlineMs = 500;

// NNBENCH_INSTANCE (what --instance sets, looked up in NNBENCH_PRICES or
// the shipped catalog) wins. Otherwise the metadata service of the cloud
// whose name the firmware gives (/sys/class/dmi/id: Amazon, Google,
// Microsoft) is asked, so a bare-metal or laptop run sends nothing.
// NNBENCH_METADATA=none asks nothing; NNBENCH_METADATA=PROVIDER=HOST:PORT
// asks that endpoint as that provider (aws, gce, azure), for tests.
std::optional<MachineInstance> detect_instance();

// The provider's answer for a type: what the catalog would call it.
std::string catalog_name(const std::string& provider, const std::string& type);

nlohmann::json to_json(const std::optional<MachineInstance>& i);

// Sets NNBENCH_INSTANCE (and NNBENCH_PRICES when `catalog` is not the
// shipped one) for this process and the cases and ranks it starts, after
// checking that the catalog has `name`: a name it lacks is an Error naming
// the known ones.
void name_instance(const std::string& name, const std::string& catalog);

}  // namespace nnbench::machine
