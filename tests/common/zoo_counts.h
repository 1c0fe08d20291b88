#pragma once
// What every zoo model must be: its trainable parameter count and output
// shape, from the reference frameworks or worked out by hand (the sources
// and the arithmetic are beside each), never from model::analyze or a
// backend, which the tests check against these numbers.
#include <cstdint>
#include <map>
#include <string>

#include "model/model.h"

namespace nnbench::test {

struct ZooExpected {
  int64_t params;
  model::Shape output;
};

// Sources of the counts:
// - torchvision 0.14 (sum of p.numel() over parameters()): resnet-50,
//   inception-v3 (aux_logits=False, init_weights=False).
// - Keras 2 model.summary() of the example scripts, reproduced by hand:
//   mnist-mlp 784*512+512 + 512*512+512 + 512*10+10; mnist-cnn 320 + 18496
//   + 9216*128+128 + 1290; cifar10-cnn 896 + 9248 + 18496 + 36928 +
//   2304*512+512 + 5130; imdb-fasttext 20000*50 + 51; imdb-bilstm
//   20000*128 + 2*4*(64*(128+64)+64) + 129 (not 2,659,073 as sometimes
//   quoted: that is 128 more than any LSTM bias convention gives);
//   lstm-text-gen 4*(128*(57+128)+128) + 128*57+57.
// - Caffe prototxt shapes, checked against an equivalent torch.nn module:
//   alexnet (groups 2 in conv2/4/5), googlenet.
// - By hand from the papers: fcn-s, fcn-r, alexnet-r (2432 + 25632 + 51264
//   + 1024*10+10), resnet-56 (below), lstm-ptb (below).
inline const std::map<std::string, ZooExpected>& zoo_expected() {
  static const std::map<std::string, ZooExpected> table = {
      {"fcn-s", {117'997'696, {26752}}},
      {"fcn-r", {14'205'962, {10}}},
      // Caffe's bvlc_alexnet, groups 2 in conv2/4/5 (weights + biases):
      // conv1 96*3*121+96 = 34,944; conv2 256*48*25+256 = 307,456; conv3
      // 384*256*9+384 = 885,120; conv4 384*192*9+384 = 663,936; conv5
      // 256*192*9+256 = 442,624; fc6 9216*4096+4096 = 37,752,832; fc7
      // 4096*4096+4096 = 16,781,312; fc8 4096*1000+1000 = 4,097,000.
      {"alexnet", {60'965'224, {1000}}},
      // DLBench's AlexNet-S, no groups: conv2 256*96*25+256 = 614,656;
      // conv4 384*384*9+384 = 1,327,488; conv5 256*384*9+256 = 884,992;
      // the other layers as alexnet (34,944 + 885,120 + 37,752,832 +
      // 16,781,312 + 4,097,000). The "~62 millions" of DLBench's table.
      {"alexnet-s", {62'378'344, {1000}}},
      {"alexnet-r", {89'578, {10}}},
      {"resnet-50", {25'557'032, {1000}}},
      // conv1+bn 432+32; stage 1: 9 x 2 x (2304+32) = 42,048; stage 2:
      // 4608+64 + 9216+64 + 8 x 2 x (9216+64) = 162,432; stage 3: 18432+128
      // + 36864+128 + 8 x 2 x (36864+128) = 647,424; fc 650. Option A
      // shortcuts add nothing: 853,018.
      {"resnet-56", {853'018, {10}}},
      // Stem 9472 + 4160 + 110784 = 124,416; inception modules
      // (in*c1 + in*r3 + 9*r3*c3 + in*r5 + 25*r5*c5 + in*pool_proj + biases):
      // 3a 163,696; 3b 388,736; 4a 376,176; 4b 449,160; 4c 510,104;
      // 4d 605,376; 4e 868,352; 5a 1,043,456; 5b 1,444,080; classifier
      // 1,025,000. Total 6,998,552, the figure usually given for Caffe's
      // bvlc_googlenet without its auxiliary heads.
      {"googlenet", {6'998'552, {1000}}},
      {"inception-v3", {23'834'568, {1000}}},
      {"mnist-mlp", {669'706, {10}}},
      {"mnist-cnn", {1'199'882, {10}}},
      {"cifar10-cnn", {1'250'858, {10}}},
      {"imdb-fasttext", {1'000'051, {1}}},
      {"imdb-bilstm", {2'658'945, {1}}},
      {"lstm-text-gen", {102'585, {57}}},
      // 10000*256 + 2 x (4*256*(256+256) + 4*256) + 256*10000+10000.
      {"lstm-ptb", {6'180'624, {32, 10000}}},
      {"lstm-ptb-64", {6'180'624, {64, 10000}}},
      // 288 + 64 (BN) + 18,432 + 128 (BN) + 3136*128+128 + 128*10+10.
      {"fmnist-cnn", {421'738, {10}}},
      // GPT-2 small as published (Hugging Face's gpt2, tied output):
      // wte 50257*768 = 38,597,376; wpe 1024*768 = 786,432; per block
      // ln_1 1,536 + attn (768*2304+2304) + (768*768+768) = 2,362,368 +
      // ln_2 1,536 + c_fc 768*3072+3072 = 2,362,368 + c_proj 3072*768+768
      // = 2,360,064, i.e. 7,087,872, times 12; ln_f 1,536.
      {"gpt2-small", {124'439'808, {128, 50257}}},
      // 512*64 + 64*64 + 2 x (128 + 4*64*64+4*64 + 128 + 64*256+256 +
      // 256*64+64) + 128.
      {"gpt2-tiny", {136'960, {32, 512}}},
      // BertModel as published, 109,482,240 (embeddings 30522*768 +
      // 512*768 + 2*768 token types + 1,536 layer norm; 12 blocks of
      // 7,087,872 as GPT-2's, norms placed after; pooler 768*768+768),
      // less the 1,536 token-type parameters (one segment), plus the
      // classifier 768*2+2.
      {"bert-base", {109'482'242, {2}}},
      {"bert-base-384", {109'482'242, {2}}},
      // 512*64 + 64*64 + 128 + 2 x 49,984 (as gpt2-tiny's blocks) + pooler
      // 64*64+64 + classifier 64*2+2.
      {"bert-tiny", {141'250, {2}}},
  };
  return table;
}

}  // namespace nnbench::test
