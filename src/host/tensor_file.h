#pragma once
// Tensors to and from a framework worker, through files: an 8-byte
// little-endian header length, a JSON header {"tensors": [{"name", "dtype"
// ("float32" | "int64"), "shape", "offset"}]}, then the raw little-endian
// data (frameworks/common/tensors.py is the Python side).
#include <map>
#include <string>

#include "host/host.h"

namespace nnbench::host {

// Written atomically; throws nnbench::Error naming the file.
void write_tensors(const std::string& path,
                   const std::map<std::string, host::Tensor>& tensors);
// Throws nnbench::Error for a short or malformed file, naming it.
std::map<std::string, host::Tensor> read_tensors(const std::string& path);

}  // namespace nnbench::host
