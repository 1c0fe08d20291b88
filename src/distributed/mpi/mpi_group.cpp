// Open MPI as a distributed::Group. Errors return instead of aborting the job
// (MPI_ERRORS_RETURN), so that a failure becomes the run's state; a peer
// that dies is still mpirun's to handle: it ends the job.
#include <mpi.h>

#include <cstdlib>
#include <functional>
#include <memory>

#include "distributed/comm_engines.h"
#include "util/error.h"

namespace nnbench::distributed {
namespace {

void check(int code, const char* what) {
  if (code == MPI_SUCCESS) return;
  char text[MPI_MAX_ERROR_STRING];
  int len = 0;
  MPI_Error_string(code, text, &len);
  throw CommError(std::string("MPI ") + what + ": " + std::string(text, len));
}

class MpiGroup : public Group {
 public:
  MpiGroup() {
    int ready = 0;
    MPI_Initialized(&ready);
    if (!ready) check(MPI_Init(nullptr, nullptr), "init");
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
    MPI_Comm_size(MPI_COMM_WORLD, &size_);
  }
  ~MpiGroup() override {
    int done = 0;
    MPI_Finalized(&done);
    if (!done) MPI_Finalize();
  }
  std::string engine() const override { return "mpi"; }
  std::string engine_version() const override {
    char text[MPI_MAX_LIBRARY_VERSION_STRING];
    int len = 0;
    MPI_Get_library_version(text, &len);
    std::string s(text, len);
    const auto end = s.find_first_of(",\n");
    return end == std::string::npos ? s : s.substr(0, end);
  }
  void abandon(int exit_code) override { MPI_Abort(MPI_COMM_WORLD, exit_code); }
  int rank() const override { return rank_; }
  int size() const override { return size_; }
  void allreduce_sum(float* data, int64_t n) override {
    check(MPI_Allreduce(MPI_IN_PLACE, data, static_cast<int>(n), MPI_FLOAT,
                        MPI_SUM, MPI_COMM_WORLD),
          "allreduce");
  }
  std::function<void()> allreduce_sum_async(float* data, int64_t n) override {
    auto request = std::make_shared<MPI_Request>();
    check(MPI_Iallreduce(MPI_IN_PLACE, data, static_cast<int>(n), MPI_FLOAT,
                         MPI_SUM, MPI_COMM_WORLD, request.get()),
          "iallreduce");
    return [request] {
      check(MPI_Wait(request.get(), MPI_STATUS_IGNORE), "wait");
    };
  }
  void allreduce_max(double* data, int64_t n) override {
    check(MPI_Allreduce(MPI_IN_PLACE, data, static_cast<int>(n), MPI_DOUBLE,
                        MPI_MAX, MPI_COMM_WORLD),
          "allreduce");
  }
  std::vector<std::vector<double>> allgather(
      const std::vector<double>& mine) override {
    const int n = static_cast<int>(mine.size());
    std::vector<double> all(static_cast<size_t>(n) * size_);
    check(MPI_Allgather(mine.data(), n, MPI_DOUBLE, all.data(), n, MPI_DOUBLE,
                        MPI_COMM_WORLD),
          "allgather");
    std::vector<std::vector<double>> out;
    for (int r = 0; r < size_; ++r)
      out.emplace_back(all.begin() + r * n, all.begin() + (r + 1) * n);
    return out;
  }

 private:
  int rank_ = 0, size_ = 1;
};

}  // namespace

std::unique_ptr<Group> make_mpi_group(const GroupOptions&) {
  // Open MPI copies through buffers it allocates and frees: the kept-memory
  // fix (machine/env_fixes.h) must be in place before MPI_Init.
  return std::make_unique<MpiGroup>();
}

}  // namespace nnbench::distributed
