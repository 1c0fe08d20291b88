#pragma once
// Where nnbench finds the files it ships (suites, the price catalog): an
// installed nnbench reads them beside its binary and never from the
// checkout it was built from; a binary run from its build tree reads the
// source tree's, so that edits show without installing.
#include <string>

namespace nnbench::util {

// nnbench's folders in the user's home, by the XDG base directories:
// $XDG_DATA_HOME/nnbench, else $HOME/.local/share/nnbench (the results
// store, the framework environments); $XDG_CACHE_HOME/nnbench, else
// $HOME/.cache/nnbench (the engines' hello answers). Without HOME, under
// the current folder. scripts/paths says the same for the scripts.
std::string data_dir();
std::string cache_dir();

// This program's path (/proc/self/exe); "" when unreadable.
std::string exe_path();

// A shipped file or folder: <bin>/../share/nnbench/<installed> when it
// exists (an installed nnbench), else the source tree's <source> when this
// binary lies in the build tree it was built in; "" when neither applies.
std::string shipped_path(const std::string& installed,
                         const std::string& source);

}  // namespace nnbench::util
