#pragma once
// The start-up check of a data-parallel run: ranks exchange their resolved
// configuration and refuse to start when it differs, naming the field. A
// rank started with another seed or batch would otherwise train a
// different model and still average its gradients with the others.
#include <string>
#include <vector>

#include "distributed/group.h"

namespace nnbench::distributed {

struct Field {
  std::string name, value;
};

// FNV-1a, 32 bits: exact in a double, so fields travel through allgather.
double hash32(const std::string& s);

// Collective. Throws nnbench::Error naming every field whose value differs
// from rank 0's and the ranks that differ, with this rank's own value.
void check_same_config(Group& g, const std::vector<Field>& fields);

}  // namespace nnbench::distributed
