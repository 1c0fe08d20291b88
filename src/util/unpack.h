#pragma once
// A .tar.gz unpacked with libarchive: for datasets fetched as archives
// (data/fetch.h), after their SHA-256 matched.
#include <cstdint>
#include <string>

namespace nnbench::util {

// Unpacks `archive` into the existing folder `into`: regular files and
// folders only, none outside `into` (no absolute names, no "..", no links
// followed or made). Returns the number of files written. Throws
// nnbench::Error naming the archive and entry on any problem.
int64_t unpack_tar_gz(const std::string& archive, const std::string& into);

}  // namespace nnbench::util
