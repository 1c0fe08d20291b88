// The loader: seeded orders, complete epochs, drop_last, augmentation, the
// background thread overlapping a slow consumer, and shutdown mid-epoch.
#include "data/loader.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <thread>

namespace nnbench::data {
namespace {
using Ids = std::vector<int64_t>;

// n samples of [1,2,2]; sample k holds the value k everywhere, label k.
Split numbered(int64_t n) {
  Split s;
  s.input.shape = {1, 2, 2};
  s.size = n;
  for (int64_t k = 0; k < n; ++k) {
    s.f.insert(s.f.end(), 4, static_cast<float>(k));
    s.labels.push_back(k);
  }
  s.classes = n;
  return s;
}

// n standardised-looking RGB images of side x side.
Split images(int64_t n, int64_t side) {
  Split s;
  s.input.shape = {3, side, side};
  s.size = n;
  s.classes = 10;
  s.f.resize(n * 3 * side * side);
  for (size_t k = 0; k < s.f.size(); ++k) s.f[k] = float(k % 251) / 100.f - 1;
  for (int64_t k = 0; k < n; ++k) s.labels.push_back(k % 10);
  s.channel_mean = {0.49f, 0.48f, 0.45f};
  s.channel_std = {0.25f, 0.24f, 0.26f};
  return s;
}

// Labels of one epoch in delivery order, checking every batch's shapes.
Ids epoch_labels(Loader& l, int epoch, std::vector<int64_t>* sizes = nullptr) {
  l.start_epoch(epoch);
  Ids out;
  while (auto b = l.next()) {
    const int64_t n = b->input.shape[0];
    EXPECT_EQ(b->input.shape, (model::Shape{n, 1, 2, 2}));
    EXPECT_EQ(b->labels.shape, model::Shape{n});
    EXPECT_EQ(b->input.f.size(), size_t(n) * 4);
    for (int64_t k = 0; k < n; ++k) {
      EXPECT_EQ(b->input.f[k * 4 + 3], float(b->labels.i[k]));  // pairs kept
    }
    out.insert(out.end(), b->labels.i.begin(), b->labels.i.end());
    if (sizes) sizes->push_back(n);
  }
  return out;
}

TEST(DataLoader, SeededOrdersAndCompleteEpochs) {
  const Split s = numbered(103);
  Loader a(s, {.batch = 10, .seed = 7});
  Loader b(s, {.batch = 10, .seed = 7, .prefetch = 0});  // no thread
  Loader c(s, {.batch = 10, .seed = 8});
  EXPECT_EQ(a.batches_per_epoch(), 11);
  std::vector<int64_t> sizes;
  const Ids e0 = epoch_labels(a, 0, &sizes);
  EXPECT_EQ(sizes.size(), 11u);
  EXPECT_EQ(sizes.back(), 3);
  EXPECT_EQ(epoch_labels(b, 0), e0);  // same seed, same order
  EXPECT_NE(epoch_labels(c, 0), e0);  // another seed, another order
  const Ids e1 = epoch_labels(a, 1);
  EXPECT_NE(e1, e0);                  // every epoch reshuffles
  EXPECT_EQ(epoch_labels(a, 0), e0);  // and is reproducible
  for (const Ids& e : {e0, e1}) {
    Ids sorted = e;
    std::sort(sorted.begin(), sorted.end());
    Ids all(103);
    for (int64_t k = 0; k < 103; ++k) all[k] = k;
    EXPECT_EQ(sorted, all);  // every sample exactly once
  }
  Loader plain(s, {.batch = 10, .shuffle = false});
  const Ids in_order = epoch_labels(plain, 3);
  EXPECT_EQ(in_order, plain.order());
  EXPECT_EQ(plain.order()[42], 42);
}

TEST(DataLoader, DropLastAndEdgeCases) {
  const Split s = numbered(103);
  Loader l(s, {.batch = 10, .drop_last = true});
  EXPECT_EQ(l.batches_per_epoch(), 10);
  std::vector<int64_t> sizes;
  EXPECT_EQ(epoch_labels(l, 0, &sizes).size(), 100u);
  EXPECT_TRUE(std::all_of(sizes.begin(), sizes.end(),
                          [](int64_t n) { return n == 10; }));
  EXPECT_FALSE(l.next().has_value());  // stays at the end
  Loader fresh(s, {});
  EXPECT_THROW(fresh.next(), nnbench::Error);  // no epoch started
  EXPECT_THROW(Loader(s, {.batch = 0}), nnbench::Error);
  Split flat;
  flat.input.shape = {4};
  EXPECT_THROW(Loader(flat, {.augment = true}), nnbench::Error);  // not CHW
  Split tokens;
  tokens.input = {{4}, model::DType::kInt64, 9};
  EXPECT_THROW(Loader(tokens, {.augment = true}), nnbench::Error);
}

TEST(DataLoader, TokenInputsAndSequenceLabels) {
  Split s;
  s.input = {{3}, model::DType::kInt64, 50};
  s.label_shape = {3};
  s.size = 5;
  for (int64_t k = 0; k < 15; ++k) s.i.push_back(k), s.labels.push_back(k + 1);
  Loader l(s, {.batch = 2, .shuffle = false});
  l.start_epoch(0);
  auto b = l.next();
  ASSERT_TRUE(b.has_value());
  EXPECT_EQ(b->input.dtype, model::DType::kInt64);
  EXPECT_EQ(b->input.shape, (model::Shape{2, 3}));
  EXPECT_EQ(b->labels.shape, (model::Shape{2, 3}));
  EXPECT_EQ(b->input.i, (Ids{0, 1, 2, 3, 4, 5}));
  EXPECT_EQ(b->labels.i, (Ids{1, 2, 3, 4, 5, 6}));
}

TEST(DataLoader, AugmentationCropsAndFlipsDeterministically) {
  const Split s = images(64, 8);
  LoaderOptions o{.batch = 16, .seed = 3};
  Loader plain(s, o);
  o.augment = true;
  Loader aug(s, o), again(s, o);
  plain.start_epoch(0), aug.start_epoch(0), again.start_epoch(0);
  int changed = 0, samples = 0;
  while (auto p = plain.next()) {
    auto a = aug.next();
    auto b = again.next();
    ASSERT_TRUE(a && b);
    EXPECT_EQ(a->input.shape, p->input.shape);
    EXPECT_EQ(a->labels.i, p->labels.i);  // same order
    EXPECT_EQ(a->input.f, b->input.f);    // same seed, same crops
    for (int64_t n = 0; n < p->input.shape[0]; ++n, ++samples) {
      changed += !std::equal(a->input.f.begin() + n * 192,
                             a->input.f.begin() + (n + 1) * 192,
                             p->input.f.begin() + n * 192);
    }
  }
  // 81 crop offsets x 2 flips: nearly every sample moves.
  EXPECT_GT(changed, samples * 3 / 4);
  // Padding is black after standardisation: -mean / std per channel.
  Split one = images(1, 8);
  host::Tensor t{{1, 3, 8, 8}, model::DType::kFloat32, one.f, {}};
  augment_crop_flip(t, one, 8, 5);  // padding 8 on 8x8: mostly fill
  int fill = 0;
  for (int c = 0; c < 3; ++c) {
    const float v = -one.channel_mean[c] / one.channel_std[c];
    fill += std::count(t.f.begin() + c * 64, t.f.begin() + (c + 1) * 64, v);
  }
  EXPECT_GT(fill, 0);
}

TEST(DataLoader, BackgroundThreadOverlapsASlowConsumer) {
  // Batches that take measurable time to gather and augment (about 1 ms
  // optimised, tens of ms under sanitizers).
  const Split s = images(12 * 128, 32);
  LoaderOptions o{.batch = 128, .augment = true, .prefetch = 0};
  // Without the thread the caller waits for every batch, preparation
  // included.
  Loader sync(s, o);
  sync.start_epoch(0);
  while (sync.next()) {
  }
  EXPECT_GT(sync.prepare_seconds(), 0.0);
  EXPECT_GE(sync.wait_seconds(), sync.prepare_seconds());

  // A consumer slower than preparation, whatever the build's speed.
  const double step = std::max(0.02, 3 * sync.prepare_seconds() / 12);
  o.prefetch = 2;
  Loader l(s, o);
  l.start_epoch(0);
  // The first batch is waited for (the thread starts and builds it); after
  // that the thread works while the consumer "computes", so the consumer
  // should hardly wait again. The bound leaves room for a loaded machine:
  // the thread would have to be starved for most of a step to miss it.
  ASSERT_TRUE(l.next().has_value());
  const double first_wait = l.wait_seconds();
  int batches = 1;
  std::this_thread::sleep_for(std::chrono::duration<double>(step));
  while (auto b = l.next()) {
    ++batches;
    std::this_thread::sleep_for(std::chrono::duration<double>(step));
  }
  EXPECT_EQ(batches, 12);
  EXPECT_GT(l.prepare_seconds(), 0.0);
  const double later_wait = l.wait_seconds() - first_wait;
  EXPECT_LT(later_wait, 0.1 * 11 * step)
      << "waited " << later_wait << " s for 11 batches that took "
      << l.prepare_seconds() << " s to prepare, step " << step << " s";
}

TEST(DataLoader, DestroyingOrRestartingMidEpochDoesNotHang) {
  const Split s = images(40 * 32, 8);
  for (int prefetch : {1, 2, 4}) {
    Loader l(s, {.batch = 32, .prefetch = prefetch});
    l.start_epoch(0);
    ASSERT_TRUE(l.next().has_value());
    l.start_epoch(1);  // abandons epoch 0 with a full queue
    int n = 0;
    while (l.next()) ++n;
    EXPECT_EQ(n, 40);
    l.start_epoch(2);
    ASSERT_TRUE(l.next().has_value());
  }  // destroyed with the producer blocked on a full queue
  Loader never_read(s, {.batch = 1});
  never_read.start_epoch(0);
}

}  // namespace
}  // namespace nnbench::data
