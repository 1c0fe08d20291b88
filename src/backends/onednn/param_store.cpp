#include "backends/onednn/param_store.h"

#include <algorithm>

#include "util/error.h"

namespace nnbench::backends::onednn {
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
  slot.momentum = memory(grad, eng_, DNNL_MEMORY_NONE);
  slot.weights = weights == grad ? slot.master : memory(weights, eng_);
  slots_.push_back(slot);
  return {slot.weights, slot.grad};
}

void ParamStore::finalize(dnnl::stream& s) {
  const Md flat({static_cast<memory::dim>(std::max<size_t>(total_, 1))},
                Dt::f32, Tag::a);
  flat_master_ = memory(flat, eng_);
  flat_grad_ = memory(flat, eng_);
  flat_momentum_ = memory(flat, eng_);
  for (auto& slot : slots_) {
    slot.master.set_data_handle(
        at(flat_master_, slot.master_md, slot.offset).get_data_handle());
    slot.grad.set_data_handle(
        at(flat_grad_, slot.master_md, slot.offset).get_data_handle());
    slot.momentum.set_data_handle(
        at(flat_momentum_, slot.master_md, slot.offset).get_data_handle());
    ParamState& st = states_->at(slot.name);
    copy(s, memory(slot.canonical, eng_, st.value.data()), slot.master);
    copy(s, memory(slot.canonical, eng_, st.momentum.data()), slot.momentum);
    if (slot.weights.get() != slot.master.get())
      slot.sync = make_reorder(slot.master, slot.weights);
  }
  // Padding inside blocked layouts and between parameters stays zero: the
  // gradients there are zero, so the updates keep it so.
  std::fill_n(static_cast<float*>(flat_grad_.get_data_handle()),
              flat.get_size() / sizeof(float), 0.f);
  sync_all(s);
  momentum_args_ = {{DNNL_ARG_MULTIPLE_SRC, flat_momentum_},
                    {DNNL_ARG_MULTIPLE_SRC + 1, flat_grad_},
                    {DNNL_ARG_DST, flat_momentum_}};
  weight_args_ = {{DNNL_ARG_MULTIPLE_SRC, flat_master_},
                  {DNNL_ARG_MULTIPLE_SRC + 1, flat_momentum_},
                  {DNNL_ARG_DST, flat_master_}};
}

void ParamStore::step(dnnl::stream& s, float lr, float momentum) {
  if (!momentum_update_ || scales_ != std::pair{lr, momentum}) {
    // Built on first use: lr and momentum are fixed per executable.
    const Md flat = flat_master_.get_desc();
    momentum_update_ = dnnl::sum(
        dnnl::sum::primitive_desc(flat, {momentum, 1.f}, {flat, flat}, eng_));
    weight_update_ = dnnl::sum(
        dnnl::sum::primitive_desc(flat, {1.f, -lr}, {flat, flat}, eng_));
    scales_ = {lr, momentum};
  }
  momentum_update_.execute(s, momentum_args_);
  weight_update_.execute(s, weight_args_);
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
    copy(s, slot.momentum, memory(slot.canonical, eng_, st.momentum.data()));
  }
}

std::map<std::string, backend::Tensor> ParamStore::export_canonical(
    dnnl::stream& s, memory Slot::*which) {
  std::map<std::string, backend::Tensor> out;
  for (const auto& slot : slots_) {
    backend::Tensor& t = out[slot.name];
    t.shape = states_->at(slot.name).shape;
    t.f.resize(floats(slot.canonical));
    copy(s, slot.*which, memory(slot.canonical, eng_, t.f.data()));
  }
  return out;
}

std::map<std::string, backend::Tensor> ParamStore::values(dnnl::stream& s) {
  return export_canonical(s, &Slot::master);
}

std::map<std::string, backend::Tensor> ParamStore::grads(dnnl::stream& s) {
  return export_canonical(s, &Slot::grad);
}

}  // namespace nnbench::backends::onednn
