// kestrel-cuda-runner JOB.json: runs one job of the CUDA evaluator with the
// protocol of kestrel-runner (evaluators/job.h): exactly one result JSON on
// fd 3 (on stdout when fd 3 is not open), echoing the job's nonce. Whatever
// the kernel prints goes to stdout and stderr, which the engine only logs.
//
// kestrel-cuda-runner --probe: writes {"devices": N, "detail": "...",
// "l2_bytes": B, "host": {HostInfo}} (same fd rule) for DetectCuda /
// `kestrel doctor`, and for the Slurm executor, which probes a compute node.
//
// Exit status: 0 when the result was written (it may carry an error), 2 on a
// bad command line or job, 1 when the result could not be written, 3 when
// there is no usable CUDA device (the result says "no CUDA device: ...";
// for --probe, devices is 0).
//
// Unlike kestrel-runner it installs no seccomp filter: the CUDA driver needs
// ioctls on /dev/nvidia* and threads of its own.

#include <cuda_runtime_api.h>
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <exception>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

#include "evaluators/cuda_runner/cuda_modes.h"
#include "evaluators/job.h"
#include "evaluators/runner/report.h"

namespace {

constexpr int kNoDeviceExit = 3;

// The number of devices, or 0 with `why` set.
int CountDevices(std::string& why) {
  int count = 0;
  const cudaError_t status = cudaGetDeviceCount(&count);
  if (status != cudaSuccess) {
    why = cudaGetErrorString(status);
    return 0;
  }
  if (count <= 0) why = "cudaGetDeviceCount reported 0 devices";
  return count;
}

int Probe() {
  std::string why;
  const int devices = CountDevices(why);
  nlohmann::json out;
  out["devices"] = devices;
  out["host"] = nlohmann::json::parse(kestrel::HostToJson(kestrel::DetectHost()));
  if (devices > 0) {
    cudaDeviceProp prop{};
    if (cudaGetDeviceProperties(&prop, 0) == cudaSuccess) {
      char line[512];
      std::snprintf(line, sizeof line, "%d device(s); device 0: %s, compute capability %d.%d, %.0f MiB L2, %.1f GiB",
                    devices, prop.name, prop.major, prop.minor, prop.l2CacheSize / 1048576.0,
                    static_cast<double>(prop.totalGlobalMem) / (1024.0 * 1024.0 * 1024.0));
      out["detail"] = line;
      out["l2_bytes"] = prop.l2CacheSize;
    } else {
      out["detail"] = std::to_string(devices) + " device(s)";
    }
  } else {
    out["detail"] = "no CUDA device: " + why;
  }
  if (!kestrel::runner::WriteResult(out.dump())) return 1;
  return devices > 0 ? 0 : kNoDeviceExit;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc == 2 && std::strcmp(argv[1], "--probe") == 0) return Probe();
  if (argc != 2) {
    std::fprintf(stderr, "usage: kestrel-cuda-runner JOB.json | --probe\n");
    return 2;
  }
  std::ifstream file;
  if (std::strcmp(argv[1], "-") != 0) file.open(argv[1], std::ios::binary);
  std::istream& in = std::strcmp(argv[1], "-") == 0 ? std::cin : file;
  std::stringstream text;
  text << in.rdbuf();
  auto job = kestrel::ParseJob(text.str());
  if (!job) {
    std::fprintf(stderr, "kestrel-cuda-runner: %s: %s\n", argv[1], job.error().message().c_str());
    return 2;
  }
  kestrel::JobResult result;
  result.nonce = job->nonce;
  std::string why;
  if (CountDevices(why) == 0) {
    result.error = "no CUDA device: " + why;
    std::fflush(stdout);
    return kestrel::runner::WriteResult(kestrel::JobResultToJson(result)) ? kNoDeviceExit : 1;
  }
  try {
    auto done = job->mode == "outputs" ? kestrel::cuda_runner::RunCudaOutputs(*job, result)
                                       : kestrel::cuda_runner::RunCudaTiming(*job, result);
    if (!done) result.error = done.error().message();
  } catch (const std::exception& e) {
    result.error = std::string("cuda runner: ") + e.what();
    result.checks.clear();
    result.timings.clear();
  }
  std::fflush(stdout);
  return kestrel::runner::WriteResult(kestrel::JobResultToJson(result)) ? 0 : 1;
}
