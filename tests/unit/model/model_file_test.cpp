// Model files: every zoo model survives a save/load round trip unchanged,
// and malformed files fail with the file, layer and field named.
#include "model/model_file.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <tuple>

#include "model/analysis.h"
#include "model/zoo/zoo.h"
#include "util/error.h"

namespace nnbench::model {
namespace {

std::string error_of(const nlohmann::json& j) {
  try {
    from_json(j, "m.json");
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(ModelFile, EveryZooModelRoundTrips) {
  for (const auto& name : zoo::names()) {
    SCOPED_TRACE(name);
    const Model m = zoo::get(name);
    const Model back = from_json(to_json(m), "memory");
    EXPECT_EQ(to_json(back), to_json(m));
    EXPECT_EQ(model_hash(back), model_hash(m));
    EXPECT_EQ(analyze(back).params, analyze(m).params);
  }
}

TEST(ModelFile, SaveAndLoadThroughAFile) {
  const auto path = std::filesystem::temp_directory_path() / "nnbench_m.json";
  const Model m = zoo::get("resnet-56");
  save_model_file(m, path);
  EXPECT_EQ(model_hash(load_model_file(path)), model_hash(m));
  std::filesystem::remove(path);
}

TEST(ModelFile, HashChangesWithAnyAttribute) {
  Model m = zoo::get("mnist-mlp");
  const std::string before = model_hash(m);
  m.layers[0].out = 513;
  EXPECT_NE(model_hash(m), before);
  EXPECT_EQ(before.rfind("sha256:", 0), 0u);
  EXPECT_EQ(before.size(), 7u + 64u);
}

TEST(ModelFile, ErrorsNameTheProblem) {
  const auto good = to_json(zoo::get("mnist-cnn"));
  auto j = good;
  j.erase("loss");
  EXPECT_NE(error_of(j).find("m.json: missing field 'loss'"),
            std::string::npos);
  j = good;
  j["layers"][0]["op"] = "conv3d";
  EXPECT_NE(error_of(j).find("layers[0]: field 'op': unknown op 'conv3d'"),
            std::string::npos);
  j = good;
  j["layers"][0]["out"] = "many";
  EXPECT_NE(error_of(j).find("layers[0]: field 'out': wrong type"),
            std::string::npos);
  j = good;
  j["format_version"] = 99;
  EXPECT_NE(error_of(j).find("format_version 99"), std::string::npos);
  j = good;
  j["layers"][1]["name"] = j["layers"][0]["name"];
  EXPECT_NE(error_of(j).find("duplicate layer name"), std::string::npos);
  j = good;
  j["layers"][0]["kernel"] = {40, 40};  // larger than the 28x28 input
  const std::string e = error_of(j);
  EXPECT_NE(e.find("layer '" + good["layers"][0]["name"].get<std::string>()),
            std::string::npos)
      << e;
  EXPECT_NE(e.find("larger than padded input"), std::string::npos) << e;
}

// Issue 29: a negative conv pad was reported as "kernel and stride must be
// > 0"; each window field's message names that field, its value and the
// layer.
TEST(ModelFile, WindowFieldsAreEachNamedWithTheirValue) {
  const auto good = to_json(zoo::get("mnist-cnn"));
  const std::string layer =
      "layer '" + good["layers"][0]["name"].get<std::string>() + "'";
  for (const auto& [field, value, want] :
       {std::tuple{"pad", -1, "field 'pad': -1 (dimension 0) must be >= 0"},
        std::tuple{"stride", 0, "field 'stride': 0 (dimension 0) must be > 0"},
        std::tuple{"kernel", -3,
                   "field 'kernel': -3 (dimension 0) must be > 0"}}) {
    auto j = good;
    j["layers"][0][field] = {value, value};
    const std::string e = error_of(j);
    EXPECT_NE(e.find("m.json: "), std::string::npos) << e;
    EXPECT_NE(e.find(layer), std::string::npos) << e;
    EXPECT_NE(e.find(want), std::string::npos) << e;
  }
}

TEST(ModelFile, MissingFileIsAnError) {
  EXPECT_THROW(load_model_file("/nonexistent/model.json"), Error);
}

}  // namespace
}  // namespace nnbench::model
