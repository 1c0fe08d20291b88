#pragma once
// oneDNN's allocation failures and unsupported cases become result states.
#include <dnnl.hpp>
#include <new>
#include <stdexcept>
#include <string>

#include "backend/backend.h"

namespace nnbench::engines::onednn {

template <typename F>
auto translate_errors(F&& f) {
  try {
    return f();
  } catch (const std::bad_alloc& e) {
    throw backend::OutOfMemory(e.what());
  } catch (const dnnl::error& e) {
    if (e.status == dnnl_out_of_memory) throw backend::OutOfMemory(e.what());
    if (e.status == dnnl_unimplemented) throw backend::Unimplemented(e.what());
    throw std::runtime_error(std::string("oneDNN: ") + e.what());
  }
}

}  // namespace nnbench::engines::onednn
