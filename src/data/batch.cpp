// Building batches from a split: gather by index and the CIFAR-10
// augmentation. Both run on the loader's background thread.
#include <algorithm>

#include "data/format_util.h"
#include "data/loader.h"
#include "model/analysis.h"

namespace nnbench::data {
namespace {

model::Shape with_batch(int64_t n, const model::Shape& s) {
  model::Shape out{n};
  out.insert(out.end(), s.begin(), s.end());
  return out;
}

}  // namespace

host::Batch gather_batch(const Split& split, const std::vector<int64_t>& order,
                         int64_t first, int64_t last) {
  const int64_t n = last - first;
  const int64_t in = model::numel(split.input.shape);
  const int64_t lab = model::numel(split.label_shape);
  host::Batch b;
  b.input.shape = with_batch(n, split.input.shape);
  b.input.dtype = split.input.dtype;
  b.labels.shape = with_batch(n, split.label_shape);
  b.labels.dtype = model::DType::kInt64;
  b.labels.i.resize(n * lab);
  const bool floats = split.input.dtype == model::DType::kFloat32;
  if (floats) {
    b.input.f.resize(n * in);
  } else {
    b.input.i.resize(n * in);
  }
  for (int64_t k = 0; k < n; ++k) {
    const int64_t s = order[first + k];
    if (floats) {
      std::copy_n(split.f.begin() + s * in, in, b.input.f.begin() + k * in);
    } else {
      std::copy_n(split.i.begin() + s * in, in, b.input.i.begin() + k * in);
    }
    std::copy_n(split.labels.begin() + s * lab, lab,
                b.labels.i.begin() + k * lab);
  }
  return b;
}

void augment_crop_flip(host::Tensor& images, const Split& split,
                       int64_t padding, uint64_t seed) {
  const int64_t n = images.shape[0], channels = images.shape[1];
  const int64_t h = images.shape[2], w = images.shape[3];
  // The data is already standardised: a zero (black) pixel of the padded
  // image is (0 - mean) / std here, as when torchvision pads before
  // Normalize.
  std::vector<float> fill(channels, 0.f);
  for (int64_t c = 0; c < channels; ++c) {
    if (c < static_cast<int64_t>(split.channel_mean.size())) {
      fill[c] = -split.channel_mean[c] / split.channel_std[c];
    }
  }
  std::mt19937_64 rng(seed);
  std::vector<float> plane(h * w);
  for (int64_t s = 0; s < n; ++s) {
    const int64_t dy =
        static_cast<int64_t>(internal::uniform_below(rng, 2 * padding + 1));
    const int64_t dx =
        static_cast<int64_t>(internal::uniform_below(rng, 2 * padding + 1));
    const bool flip = rng() & 1;
    for (int64_t c = 0; c < channels; ++c) {
      float* p = images.f.data() + ((s * channels) + c) * h * w;
      // Crop then flip: out(y, x) = padded(y + dy, x' + dx), x' mirrored.
      for (int64_t y = 0; y < h; ++y) {
        const int64_t sy = y + dy - padding;
        for (int64_t x = 0; x < w; ++x) {
          const int64_t sx = (flip ? w - 1 - x : x) + dx - padding;
          plane[y * w + x] =
              sy >= 0 && sy < h && sx >= 0 && sx < w ? p[sy * w + sx] : fill[c];
        }
      }
      std::copy(plane.begin(), plane.end(), p);
    }
  }
}

}  // namespace nnbench::data
