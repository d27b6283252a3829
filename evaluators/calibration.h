#pragma once
// Calibration of a CPU host: its peak FP32 FMA throughput and the read
// bandwidth of L1, L2, L3 and DRAM, measured by a small program compiled for
// this machine (-O3 -march=native, whatever the run's flags, so that the bound
// is the hardware's) and run with the evaluator's thread count. Takes about
// ten seconds; RunSearch does it once per host and thread count and keeps the
// result in the store.

#include <filesystem>
#include <string>

#include "core/error.h"
#include "core/host.h"
#include "core/roofline.h"
#include "evaluators/executor.h"

namespace kestrel {

// `work_dir` receives the program's source and binary. A compiler or run
// failure, or output that is not the expected JSON, is an Error saying so.
// The program is compiled by `build` and run by `run_on` (a Slurm executor:
// work_dir must then be under its shared folder): the compute node's
// figures, for a `host` probed on a node.
Result<Calibration> MeasureCalibration(const std::string& compiler, int threads, const HostInfo& host,
                                       const std::filesystem::path& work_dir, const Executor& build = *LocalExecutor(),
                                       const Executor& run_on = *LocalExecutor());

// For `kestrel eval` without a database: the calibration kept in the user's
// cache ($XDG_CACHE_HOME/kestrel or ~/.cache/kestrel, one file per host and
// thread count), measured (in a temporary directory) and written there when
// missing or damaged.
Result<Calibration> CachedCalibration(const std::string& compiler, int threads, const HostInfo& host);

}  // namespace kestrel
