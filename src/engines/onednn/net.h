#pragma once
// The graph an executable runs, built for one batch size: values (layer
// outputs and their gradients), the forward and backward programs, and the
// helpers through which ops meet each other's layouts. Everything is created
// while building; running only executes the recorded steps on one stream.
#include <chrono>
#include <cstdint>
#include <deque>
#include <dnnl.hpp>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

namespace nnbench::engines::onednn {

using dnnl::memory;
using Md = memory::desc;
using Dims = memory::dims;
using Tag = memory::format_tag;
using Dt = memory::data_type;
using Args = std::unordered_map<int, memory>;

// Which forward program a step belongs to.
enum class When { kAlways, kTrain, kInfer };

// A layer's output (or the model input, id -1) and its gradient.
struct Value {
  Dims dims;  // with the batch dim first
  Md md;      // layout chosen by the producer; zero until defined
  memory mem;
  memory diff;  // same layout as mem; its buffer is bound in finalize()
  int consumers = 0;
  int last_consumer = -1;   // runs first backward: writes, others accumulate
  int other_consumer = -1;  // the highest consumer below last_consumer
  int producer = -1;        // the layer whose backward reads the gradient
  bool producer_aliases = false;  // an add: passes its gradient buffer on
  bool written = false;  // the overwriting gradient step has been built
  bool needs_grad = false;
  memory diff_alias;  // a gradient buffer this shares, bound in finalize
  float scale = 1.f;  // int8 values hold value * scale
};

class Net {
 public:
  Net(dnnl::engine eng, Dt dt, size_t layers);

  const dnnl::engine& engine() const { return eng_; }
  // Attributes for primitive descriptors: the scratchpad is the net's (one
  // buffer, sized in finalize, shared by all primitives since they run one
  // at a time), not the library's.
  dnnl::primitive_attr attr() const;
  dnnl::stream& stream() { return stream_; }
  Dt dt() const { return dt_; }
  Value& value(int id) { return values_.at(id + 1); }

  // A buffer owned by the net, allocated now.
  memory alloc(const Md& md) const { return memory(md, eng_); }
  // A step's temporary, which no later step reads: slot k's temporaries
  // all share one buffer, sized and bound in finalize (a step that needs
  // two at once takes two slots). Not for a primitive's own scratchpad.
  memory temporary(const Md& md, size_t slot);
  // Value id's dims in a plain (row-major) layout.
  Md plain(int id, Dt dt) const;
  // Value id's layout, or a plain one for the model input still undefined.
  Md md_or_plain(int id);
  // Declares value id with layout md and allocates its activation; an
  // int8 value holds value * scale.
  void define(int id, const Md& md, float scale = 1.f);

  // Forward program.
  void fwd(When w, std::function<void()> f);
  void fwd(When w, const dnnl::primitive& p, Args args);
  // Value id in layout `want`: the value itself, or a copy a reorder step
  // makes (shared by the consumers that want the same layout).
  memory src_as(int id, const Md& want);
  // Value id * scale in layout `want` of an integer type (int8
  // quantization: rounded to the nearest, saturated), made by a reorder
  // step shared by the consumers that want the same.
  memory quantized(int id, const Md& want, float scale);

  // Backward program of the layer named by begin_layer; layers run in
  // reverse order.
  void begin_layer(int layer) { layer_ = layer; }
  void bwd(std::function<void()> f);
  void bwd(const dnnl::primitive& p, Args args);
  // mem in layout `want`, converted by a backward reorder step if needed.
  memory bwd_as(const memory& mem, const Md& want);
  // Where a backward primitive writes the gradient of input id; pass the
  // result to grad_commit after adding the primitive.
  memory grad_out(int id, const Md& want);
  void grad_commit(int id, const memory& written);
  // Adds a contribution (any layout) to the gradient of value id.
  void add_grad(int id, const memory& contribution);
  // Makes the gradient of value id share `buffer` (another value's gradient
  // or a backward temporary), to save a copy; only when the current layer is
  // id's sole consumer: then no one writes it after, and readers only read.
  bool try_alias_grad(int id, const memory& buffer);
  // Makes the gradient of value id start as `buffer` (a temporary of the
  // current layer) though other consumers add to it later: saves the copy
  // when all blocks that still read `buffer` (the lowest at reader_block)
  // run before those consumers do.
  bool try_share_grad(int id, const memory& buffer, int reader_block);

  // The gradient of value id seen through another descriptor (same
  // buffer); bound in finalize like the gradient itself.
  memory diff_view(int id, const Md& md);
  // Notes for Executable::effective (e.g. the first conv's implementation);
  // the first note under a key wins.
  void note(const std::string& key, const std::string& text);
  // A note that groups layers: each distinct text once, with how many
  // layers share it and the first of them (e.g. which convolutions run
  // Winograd and which direct).
  void tally(const std::string& key, const std::string& text,
             const std::string& layer);
  const std::map<std::string, std::string>& notes() const { return notes_; }
  // Names the layer whose steps follow, for reference_kernels().
  void set_layer_name(const std::string& name) { layer_name_ = name; }
  // The implementations of the net's primitives by kind, e.g.
  // "convolution jit:avx2, eltwise jit:avx2, reorder jit:uni".
  std::string kernels() const;
  // "none", or each reference kernel (layer, kind, implementation) with its
  // share of the time the net's programs ran, measured on every run.
  std::string reference_kernels() const;

  // Allocates gradients; call once after every layer is built.
  void finalize();
  void run_forward(bool train);
  void run_backward();

 private:
  struct Step {
    When when;
    std::function<void()> run;
  };
  struct Converted {
    int id;
    Md md;
    float scale;
    memory mem;
  };
  std::function<void()> exec(const dnnl::primitive& p, Args args);
  // A copy of value id in layout want, times scale, shared.
  memory converted(int id, const Md& want, float scale);
  // A reference kernel and the time its steps ran.
  struct Slow {
    std::string what;
    double seconds = 0;
  };
  // Records p's implementation; a reference one is timed when it runs.
  std::function<void()> check_impl(const dnnl::primitive& p,
                                   std::function<void()> run);
  // Runs a program, timed only when it holds a reference kernel (the
  // denominator of its share).
  template <typename F>
  void timed(F&& program) {
    if (slow_.empty()) return program();
    const auto start = std::chrono::steady_clock::now();
    program();
    run_seconds_ +=
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
            .count();
  }
  void* grad_buffer(int id);
  void* buffer_of(const memory& diff);

  dnnl::engine eng_;
  dnnl::stream stream_;
  Dt dt_;
  std::vector<Value> values_;
  std::vector<Step> forward_;
  std::vector<std::vector<Step>> backward_;  // per layer
  std::vector<Converted> converted_;
  std::vector<memory> owned_;  // gradient buffers bound in finalize
  std::vector<std::pair<int, memory>> diff_views_;
  std::vector<memory> scratchpads_;  // bound to one buffer in finalize
  memory scratchpad_;
  std::vector<std::vector<memory>> temporaries_;  // by slot, as scratchpads_
  std::vector<memory> temporary_buffers_;
  std::map<std::string, std::string> notes_;
  struct Tally {
    std::string text, first_layer;
    int layers = 0;
  };
  std::map<std::string, std::vector<Tally>> tallies_;
  std::map<std::string, std::set<std::string>> kernels_;  // impls by kind
  std::deque<Slow> slow_;   // stable addresses: the timed steps hold them
  double run_seconds_ = 0;  // of run_forward and run_backward, if any slow
  int64_t runs_ = 0;        // forward runs (steps) timed
  int layer_ = 0;
  std::string layer_name_;
};

// oneDNN's reference kernels by implementation name: "ref:any",
// "ref_int8:any", "lrn_ref:any".
inline bool is_reference_name(const std::string& impl) {
  return impl.rfind("ref", 0) == 0 || impl.find("_ref") != std::string::npos;
}

// Row-major tag for a rank.
Tag plain_tag(size_t rank);
// A reorder primitive; with accumulate, dst = src + dst.
dnnl::reorder make_reorder(const memory& src, const memory& dst,
                           bool accumulate = false);
// A reorder writing src * scales (one, or one per index of the dims in
// `mask`, as oneDNN's output scales).
dnnl::reorder make_scaling_reorder(const memory& src, const memory& dst,
                                   int mask, const std::vector<float>& scales);
// memory viewing another's buffer with a different descriptor.
memory view(const memory& mem, const Md& md);

}  // namespace nnbench::engines::onednn
