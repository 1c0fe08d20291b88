// The baseline for the harness-overhead benchmark (docs/performance.md): the
// MNIST MLP trained with a bare, hand-written LibTorch loop, timed per step
// the same way a user would write it. No nnbench code is involved.
//
//   bare_torch_mlp [threads=2] [batch=128] [iterations=300]
#include <torch/torch.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

struct Mlp : torch::nn::Module {
  torch::nn::Linear fc1{784, 512}, fc2{512, 512}, fc3{512, 10};
  torch::nn::Dropout drop1{0.2}, drop2{0.2};
  Mlp() {
    register_module("fc1", fc1);
    register_module("drop1", drop1);
    register_module("fc2", fc2);
    register_module("drop2", drop2);
    register_module("fc3", fc3);
  }
  torch::Tensor forward(torch::Tensor x) {
    x = drop1(torch::relu(fc1(x)));
    x = drop2(torch::relu(fc2(x)));
    return fc3(x);
  }
};

int main(int argc, char** argv) {
  const int threads = argc > 1 ? std::atoi(argv[1]) : 2;
  const int batch = argc > 2 ? std::atoi(argv[2]) : 128;
  const int iterations = argc > 3 ? std::atoi(argv[3]) : 300;
  torch::set_num_threads(threads);
  torch::manual_seed(1);
  auto net = std::make_shared<Mlp>();
  torch::optim::SGD opt(net->parameters(),
                        torch::optim::SGDOptions(0.01).momentum(0.9));
  std::vector<torch::Tensor> xs, ys;
  for (int i = 0; i < 4; ++i) {
    xs.push_back(torch::randn({batch, 784}));
    ys.push_back(torch::randint(0, 10, {batch}, torch::kInt64));
  }
  auto step = [&](int i) {
    opt.zero_grad();
    auto loss = torch::cross_entropy_loss(net->forward(xs[i % 4]), ys[i % 4]);
    loss.backward();
    opt.step();
  };
  using Clock = std::chrono::steady_clock;
  const auto w0 = Clock::now();
  int i = 0;
  while (i < 5 || Clock::now() - w0 < std::chrono::seconds(1)) step(i++);
  std::vector<double> ms;
  for (int k = 0; k < iterations; ++k) {
    const auto t = Clock::now();
    step(i++);
    ms.push_back(
        std::chrono::duration<double, std::milli>(Clock::now() - t).count());
  }
  std::sort(ms.begin(), ms.end());
  std::printf(
      "bare LibTorch MNIST MLP: batch %d, %d threads, median %.4f ms "
      "over %d steps (min %.4f)\n",
      batch, threads, ms[ms.size() / 2], iterations, ms.front());
}
