#pragma once
// One function per zoo model; zoo.cpp registers them by name.
#include <cstdint>

#include "model/model.h"

namespace nnbench::model::zoo {

// Study labels, matching the sections of docs/studies.md.
inline constexpr char kStudyCloudGpu[] = "cloud-gpu-2017";
inline constexpr char kStudyDlbench[] = "dlbench";
inline constexpr char kStudyCpuVsGpu[] = "cpu-vs-gpu-2017";
inline constexpr char kStudyNnbench[] = "nnbench-recipe";
inline constexpr char kStudyTransformers[] = "transformers";

// fcn.cpp
Model fcn_s();
Model fcn_r();
// alexnet.cpp
Model alexnet();
Model alexnet_s();
Model alexnet_r();
// resnet.cpp
Model resnet50();
Model resnet56();
// googlenet.cpp
Model googlenet();
// inception_v3.cpp
Model inception_v3();
// keras_vision.cpp
Model mnist_mlp();
Model mnist_cnn();
// recipes.cpp
Model fmnist_cnn();
Model cifar10_cnn();
// keras_text.cpp
Model imdb_fasttext();
Model imdb_bilstm();
Model lstm_text_gen();
// lstm_lm.cpp
Model lstm_ptb(int64_t seq_len);
// transformers.cpp
Model gpt2_small();
Model gpt2_tiny();
Model bert_base(int64_t sequence);
Model bert_tiny();

}  // namespace nnbench::model::zoo
