#include "engines/onednn/net.h"

#include <oneapi/dnnl/dnnl_debug.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <stdexcept>
#include <string>

namespace nnbench::engines::onednn {

Tag plain_tag(size_t rank) {
  static const Tag tags[] = {Tag::a, Tag::ab, Tag::abc, Tag::abcd, Tag::abcde};
  if (rank < 1 || rank > 5)
    throw std::invalid_argument("no plain layout for rank " +
                                std::to_string(rank));
  return tags[rank - 1];
}

dnnl::reorder make_reorder(const memory& src, const memory& dst,
                           bool accumulate) {
  dnnl::primitive_attr attr;
  if (accumulate) {
    dnnl::post_ops po;
    po.append_sum(1.f);
    attr.set_post_ops(po);
  }
  return dnnl::reorder(dnnl::reorder::primitive_desc(src, dst, attr));
}

dnnl::reorder make_scaling_reorder(const memory& src, const memory& dst,
                                   int mask, const std::vector<float>& scales) {
  dnnl::primitive_attr attr;
  attr.set_output_scales(mask, scales);
  return dnnl::reorder(dnnl::reorder::primitive_desc(src, dst, attr));
}

memory view(const memory& mem, const Md& md) {
  return memory(md, mem.get_engine(), mem.get_data_handle());
}

Net::Net(dnnl::engine eng, Dt dt, size_t layers)
    : eng_(std::move(eng)),
      stream_(eng_),
      dt_(dt),
      values_(layers + 1),
      backward_(layers) {}

Md Net::plain(int id, Dt dt) const {
  const Dims& d = values_.at(id + 1).dims;
  return Md(d, dt, plain_tag(d.size()));
}

Md Net::md_or_plain(int id) {
  if (value(id).md.is_zero()) src_as(id, plain(id, dt_));
  return value(id).md;
}

void Net::define(int id, const Md& md, float scale) {
  Value& v = value(id);
  v.md = md;
  v.scale = scale;
  // The model input is bound to the current batch's buffer at each step.
  v.mem = id < 0 ? memory(md, eng_, DNNL_MEMORY_NONE) : alloc(md);
  if (v.needs_grad) v.diff = memory(md, eng_, DNNL_MEMORY_NONE);
}

std::function<void()> Net::check_impl(const dnnl::primitive& p,
                                      std::function<void()> run) {
  const char* impl = nullptr;
  dnnl_primitive_desc_query(p.get_primitive_desc(), dnnl_query_impl_info_str, 0,
                            &impl);
  const std::string name = impl == nullptr ? "unknown" : impl;
  const std::string kind =
      dnnl_prim_kind2str(static_cast<dnnl_primitive_kind_t>(p.get_kind()));
  kernels_[kind].insert(name);
  if (!is_reference_name(name)) return run;
  slow_.push_back({layer_name_ + " " + kind + " " + name});
  Slow* slow = &slow_.back();
  return [slow, run = std::move(run)] {
    const auto start = std::chrono::steady_clock::now();
    run();
    slow->seconds +=
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
            .count();
  };
}

std::string Net::kernels() const {
  std::string out;
  for (const auto& [kind, impls] : kernels_) {
    out += (out.empty() ? "" : ", ") + kind + " ";
    bool first = true;
    for (const auto& impl : impls) {
      out += (first ? "" : "/") + impl;
      first = false;
    }
  }
  return out.empty() ? "none" : out;
}

std::string Net::reference_kernels() const {
  std::string out;
  for (const auto& s : slow_) {
    out += (out.empty() ? "" : ", ") + s.what;
    if (runs_ > 0 && run_seconds_ > 0)
      out += " (" +
             std::to_string(std::lround(100 * s.seconds / run_seconds_)) +
             " % of the net's forward and backward time over " +
             std::to_string(runs_) + " steps)";
  }
  return out.empty() ? "none" : out;
}

dnnl::primitive_attr Net::attr() const {
  dnnl::primitive_attr a;
  a.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  return a;
}

std::function<void()> Net::exec(const dnnl::primitive& p, Args args) {
  const dnnl_memory_desc_t* scratch = dnnl_primitive_desc_query_md(
      p.get_primitive_desc(), dnnl_query_scratchpad_md, 0);
  if (scratch != nullptr && dnnl_memory_desc_get_size(scratch) > 0) {
    scratchpads_.push_back(memory(Md(*scratch), eng_, DNNL_MEMORY_NONE));
    args[DNNL_ARG_SCRATCHPAD] = scratchpads_.back();
  }
  return check_impl(
      p, [this, p, args = std::move(args)] { p.execute(stream_, args); });
}

void Net::fwd(When w, std::function<void()> f) {
  forward_.push_back({w, std::move(f)});
}

void Net::fwd(When w, const dnnl::primitive& p, Args args) {
  fwd(w, exec(p, std::move(args)));
}

memory Net::src_as(int id, const Md& want) {
  Value& v = value(id);
  if (v.scale != 1.f)
    throw std::logic_error("an int8 value read as a float one");
  if (v.md.is_zero()) define(id, want);  // the first consumer picks
  if (v.md == want) return v.mem;
  return converted(id, want, 1.f);
}

memory Net::quantized(int id, const Md& want, float scale) {
  md_or_plain(id);
  const Value& v = value(id);
  if (v.scale == scale && v.md == want) return v.mem;
  return converted(id, want, scale / v.scale);
}

memory Net::converted(int id, const Md& want, float scale) {
  for (const auto& c : converted_)
    if (c.id == id && c.md == want && c.scale == scale) return c.mem;
  const memory& from = value(id).mem;
  memory out = alloc(want);
  fwd(When::kAlways,
      scale == 1.f ? make_reorder(from, out)
                   : make_scaling_reorder(from, out, 0, {scale}),
      {{DNNL_ARG_FROM, from}, {DNNL_ARG_TO, out}});
  converted_.push_back({id, want, scale, out});
  return out;
}

void Net::bwd(std::function<void()> f) {
  backward_.at(layer_).push_back({When::kTrain, std::move(f)});
}

void Net::bwd(const dnnl::primitive& p, Args args) {
  bwd(exec(p, std::move(args)));
}

memory Net::bwd_as(const memory& mem, const Md& want) {
  if (mem.get_desc() == want) return mem;
  memory out = alloc(want);
  bwd(make_reorder(mem, out), {{DNNL_ARG_FROM, mem}, {DNNL_ARG_TO, out}});
  return out;
}

memory Net::grad_out(int id, const Md& want) {
  Value& v = value(id);
  if (v.last_consumer == layer_ && !v.written && v.md == want) {
    v.written = true;
    return v.diff;
  }
  return alloc(want);
}

void Net::grad_commit(int id, const memory& written) {
  if (written.get() != value(id).diff.get()) add_grad(id, written);
}

void Net::add_grad(int id, const memory& contribution) {
  Value& v = value(id);
  const bool overwrite = v.last_consumer == layer_ && !v.written;
  if (overwrite) v.written = true;
  bwd(make_reorder(contribution, v.diff, !overwrite),
      {{DNNL_ARG_FROM, contribution}, {DNNL_ARG_TO, v.diff}});
}

bool Net::try_alias_grad(int id, const memory& buffer) {
  Value& v = value(id);
  if (v.consumers != 1 || v.last_consumer != layer_ || v.written ||
      v.md != buffer.get_desc())
    return false;
  v.diff_alias = buffer;
  v.written = true;
  return true;
}

bool Net::try_share_grad(int id, const memory& buffer, int reader_block) {
  Value& v = value(id);
  if (v.last_consumer != layer_ || v.written || v.md != buffer.get_desc() ||
      v.other_consumer >= reader_block)
    return false;
  v.diff_alias = buffer;
  v.written = true;
  return true;
}

void* Net::grad_buffer(int id) {
  Value& v = value(id);
  if (v.diff.get_data_handle() != nullptr) return v.diff.get_data_handle();
  if (v.diff_alias) {
    v.diff.set_data_handle(buffer_of(v.diff_alias));
  } else {
    owned_.push_back(alloc(v.md));
    v.diff.set_data_handle(owned_.back().get_data_handle());
  }
  return v.diff.get_data_handle();
}

// A buffer allocated already, or a value's gradient bound on demand.
void* Net::buffer_of(const memory& diff) {
  if (diff.get_data_handle() != nullptr) return diff.get_data_handle();
  for (int id = -1; id + 1 < static_cast<int>(values_.size()); ++id)
    if (value(id).diff && value(id).diff.get() == diff.get())
      return grad_buffer(id);
  throw std::logic_error("gradient alias to an unknown buffer");
}

memory Net::diff_view(int id, const Md& md) {
  memory out(md, eng_, DNNL_MEMORY_NONE);
  diff_views_.emplace_back(id, out);
  return out;
}

void Net::note(const std::string& key, const std::string& text) {
  notes_.emplace(key, text);
}

void Net::tally(const std::string& key, const std::string& text,
                const std::string& layer) {
  auto& groups = tallies_[key];
  auto it = std::find_if(groups.begin(), groups.end(),
                         [&](const Tally& t) { return t.text == text; });
  if (it == groups.end()) it = groups.insert(groups.end(), {text, layer, 0});
  ++it->layers;
  std::string all;
  for (const Tally& t : groups)
    all += (all.empty() ? "" : "; ") + t.text +
           (t.layers == 1 ? " in " + t.first_layer
                          : " in " + std::to_string(t.layers) +
                                " layers from " + t.first_layer);
  notes_[key] = all;
}

void Net::finalize() {
  for (int id = -1; id + 1 < static_cast<int>(values_.size()); ++id) {
    Value& v = value(id);
    if (!v.diff) continue;
    // No step writes the gradient of an output nothing reads (the loss
    // writes the last one each step): it stays zero.
    if (!v.written && v.diff_alias.get(true) == nullptr)
      std::memset(grad_buffer(id), 0, v.md.get_size());
    grad_buffer(id);
  }
  for (auto& [id, mem] : diff_views_) mem.set_data_handle(grad_buffer(id));
  size_t scratch = 1;
  for (const auto& m : scratchpads_)
    scratch = std::max(scratch, m.get_desc().get_size());
  scratchpad_ = alloc(Md({static_cast<memory::dim>(scratch)}, Dt::u8, Tag::a));
  for (auto& m : scratchpads_) m.set_data_handle(scratchpad_.get_data_handle());
  for (const auto& slot : temporaries_) {
    size_t size = 1;
    for (const auto& m : slot) size = std::max(size, m.get_desc().get_size());
    temporary_buffers_.push_back(
        alloc(Md({static_cast<memory::dim>(size)}, Dt::u8, Tag::a)));
    for (auto m : slot)
      m.set_data_handle(temporary_buffers_.back().get_data_handle());
  }
}

memory Net::temporary(const Md& md, size_t slot) {
  if (temporaries_.size() <= slot) temporaries_.resize(slot + 1);
  temporaries_[slot].push_back(memory(md, eng_, DNNL_MEMORY_NONE));
  return temporaries_[slot].back();
}

void Net::run_forward(bool train) {
  if (!slow_.empty()) ++runs_;
  timed([&] {
    const When skip = train ? When::kInfer : When::kTrain;
    for (const auto& s : forward_)
      if (s.when != skip) s.run();
  });
}

void Net::run_backward() {
  timed([&] {
    for (auto layer = backward_.rbegin(); layer != backward_.rend(); ++layer)
      for (const auto& s : *layer) s.run();
  });
}

}  // namespace nnbench::engines::onednn
