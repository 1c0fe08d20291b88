#pragma once
// Model descriptions as JSON files, so users can benchmark their own models.
#include <nlohmann/json.hpp>
#include <string>

#include "model/model.h"

namespace nnbench::model {

inline constexpr int kModelFormatVersion = 1;

nlohmann::json to_json(const Model& m);
// Throws nnbench::Error naming `where` (a file name) and the offending field.
Model from_json(const nlohmann::json& j, const std::string& where);

Model load_model_file(const std::string& path);
void save_model_file(const Model& m, const std::string& path);

// SHA-256 of the canonical JSON of the model: identifies the exact model.
std::string model_hash(const Model& m);

}  // namespace nnbench::model
