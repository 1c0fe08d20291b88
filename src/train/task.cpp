#include "train/task.h"

#include "util/error.h"

namespace nnbench::train {
namespace {

backend::Options sgd(double momentum, bool nesterov, double weight_decay) {
  backend::Options o;
  o.optimizer = "sgd";
  o.momentum = momentum;
  o.nesterov = nesterov;
  o.weight_decay = weight_decay;
  return o;
}

// Keras 2 defaults, in PyTorch's terms (Keras' rho is RMSprop's alpha).
backend::Options keras_rmsprop() {
  backend::Options o;
  o.optimizer = "rmsprop";
  o.alpha = 0.9;
  o.momentum = 0;
  return o;
}

backend::Options keras_adam() {
  backend::Options o;
  o.optimizer = "adam";
  return o;
}

backend::Options keras_adadelta() {
  backend::Options o;
  o.optimizer = "adadelta";
  o.rho = 0.95;
  return o;
}

Schedule constant(double lr) { return {"constant", lr}; }

Schedule one_cycle(double lr, double warmup) {
  Schedule s;
  s.kind = "one-cycle";
  s.lr = lr;
  s.warmup_fraction = warmup;
  s.final_fraction = 0.02;
  return s;
}

Task keras(const std::string& name, const std::string& dataset,
           const std::string& model, int64_t batch, int epochs,
           backend::Options opt, double lr, const std::string& file) {
  Task t;
  t.name = name;
  t.description = "The CPU-vs-GPU study's " + file + ": " +
                  std::to_string(epochs) + " epochs, batch " +
                  std::to_string(batch);
  t.source = "keras-team/keras 2.x examples/" + file;
  t.dataset = dataset;
  t.model = model;
  t.batch = batch;
  t.epochs = epochs;
  t.optimizer = opt;
  t.schedule = constant(lr);
  return t;
}

std::vector<Task> make_tasks() {
  std::vector<Task> v;
  Task f;
  f.name = "fashion-mnist-92";
  f.description =
      "Time to 92% test accuracy on Fashion-MNIST (the Debian package's "
      "files), nnbench's tuned reference recipe";
  f.source = "nnbench recipe (docs/training.md)";
  f.dataset = "fashion-mnist";
  f.model = "fmnist-cnn";
  f.batch = 128;
  f.optimizer = sgd(0.9, true, 5e-4);
  f.schedule = one_cycle(0.05, 0.25);
  f.target = 0.92;
  f.epochs = 6;
  v.push_back(f);

  Task c;
  c.name = "cifar10-94";
  c.description =
      "DAWNBench's CIFAR-10 target: time to 94% test accuracy (needs the "
      "CIFAR-10 binary files)";
  c.source =
      "DAWNBench CIFAR-10 training task; recipe: ResNet-56, SGD "
      "nesterov, one-cycle, crop+flip augmentation";
  c.dataset = "cifar10";
  c.model = "resnet-56";
  c.batch = 128;
  c.eval_batch = 1000;
  c.optimizer = sgd(0.9, true, 5e-4);
  c.schedule = one_cycle(0.2, 0.15);
  c.target = 0.94;
  c.epochs = 60;
  c.augment = true;
  v.push_back(c);

  Task m = keras("fashion-mnist-mlp", "fashion-mnist", "mnist-mlp", 128, 3,
                 sgd(0.9, false, 0), 0.01, "mnist_mlp.py");
  m.description =
      "A short whole run: the Keras MNIST MLP for 3 epochs of "
      "Fashion-MNIST with SGD momentum (seconds on 2 cores)";
  v.push_back(m);
  v.push_back(keras("keras-mnist-mlp", "mnist", "mnist-mlp", 128, 20,
                    keras_rmsprop(), 0.001, "mnist_mlp.py"));
  v.push_back(keras("keras-mnist-cnn", "mnist", "mnist-cnn", 128, 12,
                    keras_adadelta(), 1.0, "mnist_cnn.py"));
  Task cnn = keras("keras-cifar10-cnn", "cifar10", "cifar10-cnn", 32, 100,
                   keras_rmsprop(), 1e-4, "cifar10_cnn.py");
  cnn.augment = true;
  v.push_back(cnn);
  Task ft = keras("keras-imdb-fasttext", "imdb", "imdb-fasttext", 32, 5,
                  keras_adam(), 1e-3, "imdb_fasttext.py");
  ft.seq_len = 400;
  v.push_back(ft);
  Task bl = keras("keras-imdb-bilstm", "imdb", "imdb-bilstm", 32, 4,
                  keras_adam(), 1e-3, "imdb_bidirectional_lstm.py");
  bl.seq_len = 100;
  v.push_back(bl);
  Task tg = keras("keras-lstm-text-gen", "text", "lstm-text-gen", 128, 60,
                  keras_rmsprop(), 0.01, "lstm_text_generation.py");
  tg.seq_len = 40;
  v.push_back(tg);
  return v;
}

}  // namespace

const std::vector<Task>& tasks() {
  static const std::vector<Task> all = make_tasks();
  return all;
}

const Task& task(const std::string& name) {
  std::string known;
  for (const auto& t : tasks()) {
    if (t.name == name) return t;
    known += " " + t.name;
  }
  throw Error("unknown task '" + name + "'; known:" + known);
}

std::string time_to_accuracy_needs_real_data(const std::string& task) {
  return "--data synthetic: " + task +
         " trains to an accuracy target, which synthetic data never "
         "measures; synthetic data time fixed-epoch tasks (--target 0, or "
         "the keras-* tasks)";
}

}  // namespace nnbench::train
