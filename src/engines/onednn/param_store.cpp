#include "engines/onednn/param_store.h"

#include <algorithm>
#include <cstring>

#include "util/error.h"

namespace nnbench::engines::onednn {
namespace {

// Keeps every parameter 64-byte aligned inside the flat buffers.
constexpr size_t kAlignFloats = 16;

size_t floats(const Md& md) { return md.get_size() / sizeof(float); }

memory at(const memory& flat, const Md& md, size_t offset) {
  return memory(md, flat.get_engine(),
                static_cast<float*>(flat.get_data_handle()) + offset);
}

void copy(dnnl::stream& s, const memory& src, const memory& dst) {
  make_reorder(src, dst).execute(s, {{DNNL_ARG_FROM, src}, {DNNL_ARG_TO, dst}});
  s.wait();
}

}  // namespace

ParamStore::Ref ParamStore::add(const std::string& name, const Md& canonical,
                                const Md& weights, const Md& grad) {
  if (states_->count(name) == 0)
    throw Error("oneDNN backend: no initial value for parameter " + name);
  if (grad.data_type() != Dt::f32)
    throw Error("oneDNN backend: gradient of " + name + " must be fp32");
  Slot slot;
  slot.name = name;
  slot.canonical = canonical;
  slot.master_md = grad;
  slot.offset = total_;
  total_ += (floats(grad) + kAlignFloats - 1) / kAlignFloats * kAlignFloats;
  slot.master = memory(grad, eng_, DNNL_MEMORY_NONE);
  slot.grad = memory(grad, eng_, DNNL_MEMORY_NONE);
  // Bound in finalize (place_weights): nothing reads them before.
  slot.weights =
      weights == grad ? slot.master : memory(weights, eng_, DNNL_MEMORY_NONE);
  slots_.push_back(slot);
  return {slot.weights, slot.grad};
}

memory ParamStore::shared(const std::string& name, const Md& weights) const {
  for (const auto& slot : slots_)
    if (slot.name == name) {
      if (slot.weights.get_desc() != weights)
        throw Error("oneDNN backend: parameter " + name +
                    " is shared in another layout");
      return slot.weights;
    }
  throw Error("oneDNN backend: parameter " + name +
              " is read before its layer");
}

void ParamStore::contribute(const std::string& name, const memory& grad) {
  contributions_[name].push_back(grad);
}

void ParamStore::place_weights() {
  // Weights in another type or layout than their master (bf16, blocked)
  // in one buffer on 2 MiB pages too: a bf16 token's step streams them.
  constexpr size_t kAlign = 64;
  size_t bytes = 0;
  std::vector<size_t> offsets;
  for (const auto& slot : slots_) {
    offsets.push_back(bytes);
    if (slot.weights.get() != slot.master.get())
      bytes +=
          (slot.weights.get_desc().get_size() + kAlign - 1) / kAlign * kAlign;
  }
  if (bytes == 0) return;
  weight_pages_ = util::HugeBuffer(bytes);
  auto* base = static_cast<char*>(weight_pages_.data());
  // Zero, so that blocked layouts' padding stays zero; touched by the
  // threads that stream the weights, so that their pages sit near them.
  constexpr size_t kChunk = size_t{2} << 20;
  const auto chunks = static_cast<int64_t>((bytes + kChunk - 1) / kChunk);
#pragma omp parallel for schedule(static)
  for (int64_t i = 0; i < chunks; ++i) {
    const size_t at = static_cast<size_t>(i) * kChunk;
    std::memset(base + at, 0, std::min(kChunk, bytes - at));
  }
  for (size_t i = 0; i < slots_.size(); ++i)
    if (slots_[i].weights.get() != slots_[i].master.get())
      slots_[i].weights.set_data_handle(base + offsets[i]);
}

void ParamStore::finalize(dnnl::stream& s, int state_arrays) {
  const Md flat({static_cast<memory::dim>(std::max<size_t>(total_, 1))},
                Dt::f32, Tag::a);
  master_pages_ = util::HugeBuffer(flat.get_size());
  flat_master_ = memory(flat, eng_, master_pages_.data());
  flat_grad_ = memory(flat, eng_);
  flat_state_.clear();
  for (int k = 0; k < state_arrays; ++k) flat_state_.emplace_back(flat, eng_);
  for (auto& slot : slots_) {
    // set_data_handle, not new objects: the ops hold copies of these.
    slot.master.set_data_handle(
        at(flat_master_, slot.master_md, slot.offset).get_data_handle());
    slot.grad.set_data_handle(
        at(flat_grad_, slot.master_md, slot.offset).get_data_handle());
    slot.state.clear();
    for (const auto& f : flat_state_)
      slot.state.push_back(at(f, slot.master_md, slot.offset));
    if (slot.weights.get() != slot.master.get())
      slot.sync = make_reorder(slot.master, slot.weights);
  }
  place_weights();
  // Padding inside blocked layouts and between parameters stays zero: the
  // gradients there are zero, so every rule's update keeps it so.
  for (memory* m : {&flat_master_, &flat_grad_})
    std::fill_n(static_cast<float*>(m->get_data_handle()), floats(flat), 0.f);
  for (auto& f : flat_state_)
    std::fill_n(static_cast<float*>(f.get_data_handle()), floats(flat), 0.f);
  load(s);
}

void ParamStore::step(dnnl::stream& s, const backend::HostOptimizer& rule) {
  s.wait();  // the backward primitives have written the gradients
  auto* p = static_cast<float*>(flat_master_.get_data_handle());
  const auto* g = static_cast<const float*>(flat_grad_.get_data_handle());
  float* s1 = flat_state_.empty()
                  ? nullptr
                  : static_cast<float*>(flat_state_[0].get_data_handle());
  float* s2 = flat_state_.size() < 2
                  ? nullptr
                  : static_cast<float*>(flat_state_[1].get_data_handle());
  const auto n = static_cast<int64_t>(total_);
  constexpr int64_t kChunk = 1 << 14;
#pragma omp parallel for schedule(static)
  for (int64_t b = 0; b < n; b += kChunk)
    rule.update(p + b, g + b, s1 ? s1 + b : nullptr, s2 ? s2 + b : nullptr,
                std::min(kChunk, n - b));
  sync_all(s);
}

void ParamStore::sync_all(dnnl::stream& s) {
  for (const auto& slot : slots_)
    if (slot.sync)
      slot.sync.execute(
          s, {{DNNL_ARG_FROM, slot.master}, {DNNL_ARG_TO, slot.weights}});
}

void ParamStore::save(dnnl::stream& s) {
  for (const auto& slot : slots_) {
    ParamState& st = states_->at(slot.name);
    copy(s, slot.master, memory(slot.canonical, eng_, st.value.data()));
    st.state.resize(slot.state.size());
    for (size_t k = 0; k < slot.state.size(); ++k) {
      st.state[k].resize(st.value.size());
      copy(s, slot.state[k], memory(slot.canonical, eng_, st.state[k].data()));
    }
  }
}

void ParamStore::load(dnnl::stream& s) {
  for (auto& slot : slots_) {
    ParamState& st = states_->at(slot.name);
    copy(s, memory(slot.canonical, eng_, st.value.data()), slot.master);
    for (size_t k = 0; k < slot.state.size() && k < st.state.size(); ++k)
      copy(s, memory(slot.canonical, eng_, st.state[k].data()), slot.state[k]);
  }
  sync_all(s);
}

const ParamState& ParamStore::state(const std::string& name) const {
  const auto it = states_->find(name);
  if (it == states_->end())
    throw Error("oneDNN backend: no initial value for parameter " + name);
  return it->second;
}

int64_t ParamStore::count() const {
  int64_t n = 0;
  for (const auto& slot : slots_)
    n += static_cast<int64_t>(floats(slot.canonical));
  return n;
}

std::map<std::string, host::Tensor> ParamStore::export_canonical(
    dnnl::stream& s, memory Slot::*which) {
  std::map<std::string, host::Tensor> out;
  for (const auto& slot : slots_) {
    host::Tensor& t = out[slot.name];
    t.shape = states_->at(slot.name).shape;
    t.f.resize(floats(slot.canonical));
    copy(s, slot.*which, memory(slot.canonical, eng_, t.f.data()));
  }
  return out;
}

std::map<std::string, host::Tensor> ParamStore::values(dnnl::stream& s) {
  return export_canonical(s, &Slot::master);
}

std::map<std::string, host::Tensor> ParamStore::grads(dnnl::stream& s) {
  return export_canonical(s, &Slot::grad);
}

backend::GradientBuffer ParamStore::flat_grad() {
  return {static_cast<float*>(flat_grad_.get_data_handle()),
          static_cast<int64_t>(total_)};
}

}  // namespace nnbench::engines::onednn
