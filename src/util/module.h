#pragma once
// Shared modules built beside the binaries: <bin>/../lib/nnbench/NAME.so,
// both in the build tree (build/<preset>/lib/nnbench) and installed. A
// module holds code whose libraries are costly to load (LibTorch's static
// initialisers, docs/design.md), so that only the processes that use it
// load them. Its nnbench symbols resolve against the executable that loads
// it (src/CMakeLists.txt: the executables export their copy of nnbench's
// libraries), so a module carries no second copy of nnbench's globals.
#include <string>

namespace nnbench::util {

// Where module `name` is looked for; "" when this program's path is
// unreadable.
std::string module_path(const std::string& name);

// The module loaded once per process (thread-safe) and never unloaded
// (LibTorch cannot be). Null when it cannot be loaded, with dlerror's text
// (the path, the missing file or symbol) in `*why`.
void* load_module(const std::string& name, std::string* why);

// Symbol `symbol` of module `name`, loading it on first use; null with the
// reason in `*why` when the module or the symbol is missing.
void* module_symbol(const std::string& name, const char* symbol,
                    std::string* why);

}  // namespace nnbench::util
