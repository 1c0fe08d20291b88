// The tensor file reader against hostile files (issue 29): a negative or
// huge dimension, a folder, a device that never ends. Each is refused with
// the file and the tensor named, before anything the file's real size
// could not hold is allocated. Files are written here byte by byte from
// the documented layout (an 8-byte little-endian header length, the JSON
// header, the data), not by the writer under test.
#include "host/tensor_file.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "util/error.h"

namespace nnbench::host {
namespace {

namespace fs = std::filesystem;

class TensorFile : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("nnbench_tensor_" + std::to_string(::getpid()));
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  // One float32 tensor "w" of `shape` at offset 0, followed by `data_bytes`
  // zero bytes.
  std::string file(const nlohmann::json& shape, size_t data_bytes) {
    const std::string head = nlohmann::json{
        {"tensors",
         {{{"name", "w"},
           {"dtype", "float32"},
           {"shape", shape},
           {"offset", 0}}}}}.dump();
    const uint64_t n = head.size();
    const std::string p = dir_ / "t.bin";
    std::ofstream out(p, std::ios::binary);
    out.write(reinterpret_cast<const char*>(&n), 8);
    out << head << std::string(data_bytes, '\0');
    return p;
  }

  static std::string error_of(const std::string& path) {
    try {
      read_tensors(path);
    } catch (const Error& e) {
      return e.what();
    }
    return "";
  }

  fs::path dir_;
};

TEST_F(TensorFile, AWellFormedFileReads) {
  const auto t = read_tensors(file({2, 3}, 24));
  ASSERT_EQ(t.count("w"), 1u);
  EXPECT_EQ(t.at("w").shape, (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(t.at("w").f, std::vector<float>(6, 0.0f));
}

// Was "vector::_M_default_append" (the dimension cast to a huge size_t).
TEST_F(TensorFile, ANegativeDimensionIsNamed) {
  const std::string p = file({-1, 3}, 24);
  const std::string e = error_of(p);
  EXPECT_NE(e.find(p), std::string::npos) << e;
  EXPECT_NE(e.find("tensor 'w'"), std::string::npos) << e;
  EXPECT_NE(e.find("negative dimension -1"), std::string::npos) << e;
}

// A shape whose elements overflow or exceed the file: refused before the
// allocation (the file holds 24 bytes of data).
TEST_F(TensorFile, AShapeLargerThanTheFileIsRefusedBeforeAllocating) {
  for (const auto& shape :
       {nlohmann::json{1000000000000LL, 1000000000000LL},
        nlohmann::json{4611686018427387904LL, 4}, nlohmann::json{7}}) {
    const std::string p = file(shape, 24);
    const std::string e = error_of(p);
    EXPECT_NE(e.find(p), std::string::npos) << shape << ": " << e;
    EXPECT_NE(e.find("tensor 'w'"), std::string::npos) << shape << ": " << e;
  }
}

// Was "basic_filebuf::underflow ... Is a directory".
TEST_F(TensorFile, AFolderIsNamedAsOne) {
  const std::string e = error_of(dir_.string());
  EXPECT_NE(e.find(dir_.string() + " is a folder"), std::string::npos) << e;
}

// /dev/zero never ends: reading it grew memory without bound.
TEST_F(TensorFile, ADeviceIsRefusedUnread) {
  const std::string e = error_of("/dev/zero");
  EXPECT_NE(e.find("/dev/zero is not a regular file"), std::string::npos) << e;
}

TEST_F(TensorFile, AMissingFileIsNamed) {
  const std::string e = error_of((dir_ / "none.bin").string());
  EXPECT_NE(e.find("none.bin"), std::string::npos) << e;
}

}  // namespace
}  // namespace nnbench::host
