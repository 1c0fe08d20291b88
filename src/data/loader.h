#pragma once
// Batches from a Split held in memory: seeded shuffling per epoch, optional
// CIFAR-style augmentation, and a background thread that prepares the next
// batches while the caller computes. The time the caller spends waiting for
// data is measured, so a result can say how much of an epoch was data.
#include <cstdint>
#include <memory>
#include <optional>

#include "data/dataset.h"
#include "host/host.h"

namespace nnbench::data {

struct LoaderOptions {
  int64_t batch = 128;
  uint64_t seed = 1;
  bool shuffle = true;
  bool drop_last = false;  // else the last batch of an epoch may be smaller
  // Random crop back to [H,W] from the image zero-padded by crop_padding
  // on every side, then a horizontal flip with probability 1/2 (the usual
  // CIFAR-10 recipe: torchvision RandomCrop(32, padding=4) and
  // RandomHorizontalFlip). Float [C,H,W] splits only.
  bool augment = false;
  int64_t crop_padding = 4;
  // Batches prepared ahead on the background thread; 0 prepares each batch
  // in next() on the caller's thread (no thread at all).
  int prefetch = 2;
};

class Loader {
 public:
  // `split` must outlive the loader. Throws nnbench::Error for invalid
  // options (batch < 1, augment on non-image data).
  Loader(const Split& split, LoaderOptions o);
  ~Loader();  // stops and joins the thread; safe mid-epoch
  Loader(const Loader&) = delete;
  Loader& operator=(const Loader&) = delete;

  // Starts (or restarts) an epoch: the order is a permutation drawn from
  // (seed, epoch), so the same seed gives the same sequence of epochs and
  // every epoch a different order. Augmentation draws from (seed, epoch,
  // batch index): batches do not depend on thread timing.
  void start_epoch(int epoch);
  // The next batch of the current epoch; nullopt at its end. Rethrows an
  // exception raised while preparing. Throws nnbench::Error before the
  // first start_epoch.
  std::optional<host::Batch> next();

  int64_t batches_per_epoch() const;
  // Samples in the current epoch's order (indices into the split).
  const std::vector<int64_t>& order() const;
  // Seconds next() blocked waiting for a batch, over all epochs: what data
  // costs the training loop. With prefetch 0 it is the whole preparation.
  double wait_seconds() const;
  // Seconds spent building batches (gather, augmentation), over all epochs.
  double prepare_seconds() const;

 private:
  struct State;
  std::unique_ptr<State> s_;
};

// Builds batch `index` of an epoch from the samples `order[first, last)`:
// shapes {n, ...input} and {n, ...label_shape}. Exposed for tests and for
// callers that want batches without a thread.
host::Batch gather_batch(const Split& split, const std::vector<int64_t>& order,
                         int64_t first, int64_t last);

// Random crop with zero padding (the value black takes after
// standardisation, per channel) and horizontal flip, in place, for every
// sample of a float [N,C,H,W] batch.
void augment_crop_flip(host::Tensor& images, const Split& split,
                       int64_t padding, uint64_t seed);

}  // namespace nnbench::data
