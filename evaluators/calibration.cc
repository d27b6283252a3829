#include "evaluators/calibration.h"

#include <chrono>
#include <cstdlib>
#include <stdlib.h>
#include <fstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/hash.h"
#include "evaluators/compiler.h"
#include "evaluators/subprocess.h"

namespace kestrel {
namespace {

// The calibration program. argv: threads, L1, L2, L3 bytes. Prints one JSON
// object: the peak, the four levels' bandwidths and the curve ([bytes,
// GB/s]). Each figure is the best of four repetitions of about 20 ms; each
// bandwidth the faster of a read stream and a triad (Triad below).
constexpr char kProgram[] = R"cpp(
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <stdlib.h>
#include <sys/mman.h>
#include <thread>
#include <vector>

using Clock = std::chrono::steady_clock;
constexpr int kLanes = 128;  // independent FMA chains: enough to hide FMA latency
constexpr int kSumLanes = 128;

__attribute__((noinline)) float Fma(long iters, float m, float c) {
  float acc[kLanes];
  for (int j = 0; j < kLanes; ++j) acc[j] = 1e-3f * static_cast<float>(j);
  for (long i = 0; i < iters; ++i) {
    for (int j = 0; j < kLanes; ++j) acc[j] = acc[j] * m + c;
  }
  float s = 0;
  for (int j = 0; j < kLanes; ++j) s += acc[j];
  return s;
}

__attribute__((noinline)) float Sum(const float* x, long n, long passes) {
  float acc[kSumLanes] = {};
  for (long p = 0; p < passes; ++p) {
    for (long i = 0; i + kSumLanes <= n; i += kSumLanes) {
      for (int j = 0; j < kSumLanes; ++j) acc[j] += x[i + j];
    }
  }
  float s = 0;
  for (int j = 0; j < kSumLanes; ++j) s += acc[j];
  return s;
}

// z = a*x + y over n floats, `passes` times: two read streams and one write
// stream, as most memory-bound kernels have (12 bytes an element counted, as a
// task's bytes formula counts them; the hardware also reads z's lines first).
__attribute__((noinline)) void Triad(const float* x, const float* y, float* z, long n, long passes) {
  for (long p = 0; p < passes; ++p) {
    for (long i = 0; i < n; ++i) z[i] = 1.0001f * x[i] + y[i];
    asm volatile("" : : "r"(z) : "memory");  // each pass really writes z
  }
}

volatile float sink;

// Runs work(thread) on `threads` threads at once; seconds of the slowest.
template <class Work>
double Parallel(int threads, Work work) {
  const auto start = Clock::now();
  std::vector<std::thread> pool;
  for (int t = 1; t < threads; ++t) pool.emplace_back([&work, t] { work(t); });
  work(0);
  for (auto& thread : pool) thread.join();
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// Best rate (units per second) over repetitions of `run(count)`, with count
// grown until one repetition takes ~40 ms.
template <class Run>
double BestRate(Run run, double units_per_count) {
  long count = 1;
  while (run(count) < 0.02 && count < (1L << 40)) count *= 2;
  double best = 0;
  for (int rep = 0; rep < 4; ++rep) best = std::max(best, units_per_count * static_cast<double>(count) / run(count));
  return best;
}

// Per thread, one buffer for every working set measured: allocated once, in
// 2 MiB huge pages where the kernel gives them, and first touched by its
// thread. Fresh buffers for each size cost a 2-core VM 20-22 s a
// calibration, 9-11 s of it in page faults; one buffer in huge pages, 4.5-5 s.
// Huge pages also let this VM's cores (Zen 5) read L1 at their two 64-byte
// loads a cycle: 860 GB/s for two threads, where 4 KiB pages gave 420.
std::vector<float*> Buffers(int threads, long floats) {
  constexpr std::size_t kHuge = std::size_t{2} << 20;
  const std::size_t bytes = (static_cast<std::size_t>(floats) * sizeof(float) + kHuge - 1) / kHuge * kHuge;
  std::vector<float*> buffers(threads);
  for (float*& buffer : buffers) {
    buffer = static_cast<float*>(std::aligned_alloc(kHuge, bytes));
    if (buffer == nullptr) std::exit(3);
    madvise(buffer, bytes, MADV_HUGEPAGE);
  }
  Parallel(threads, [&](int t) { std::fill(buffers[t], buffers[t] + floats, 1.0f); });
  return buffers;
}

int main(int argc, char** argv) {
  if (argc != 5) return 2;
  const int threads = std::max(1, std::atoi(argv[1]));
  const long levels[3] = {std::atol(argv[2]), std::atol(argv[3]), std::atol(argv[4])};
  const double peak = BestRate([&](long iters) {
    return Parallel(threads, [&](int t) { sink = Fma(iters, 0.9999999f, 1e-7f * static_cast<float>(t + 1)); });
  }, 2.0 * kLanes * threads);
  const long l1 = levels[0] > 0 ? levels[0] : 32L << 10;
  const long l2 = levels[1] > 0 ? levels[1] : 1L << 20;
  const long l3 = levels[2] > 0 ? levels[2] : 8L << 20;
  // The working sets (bytes per thread): half of each private level; for L3
  // from twice L2 to half of the thread's share of L3 (a large L3 made of
  // slices, one per core complex, is fast only up to a slice, and the
  // kernel's working set may fit one); DRAM at 4x L3, at least 128 MiB and
  // at most 1 GiB in all; and the curve, doubling from twice L2 to 1 GiB in
  // all. The L3 sizes and the DRAM size are also points of the curve.
  std::vector<long> l3_sizes;
  for (long bytes = 2 * l2; bytes <= std::min(l3 / 2 / threads, 256L << 20); bytes *= 4) l3_sizes.push_back(bytes);
  if (l3_sizes.empty()) l3_sizes.push_back(std::max(l3 / 2 / threads, 2 * l2));
  const long dram = std::min(std::max(4 * l3, 128L << 20), 1L << 30) / threads;
  std::vector<long> curve;
  for (long bytes = 2 * l2; bytes * threads <= (1L << 30); bytes *= 2) curve.push_back(bytes);
  long most = std::max({l1 / 2, l2 / 2, dram, *std::max_element(l3_sizes.begin(), l3_sizes.end())});
  if (!curve.empty()) most = std::max(most, curve.back());
  const long most_floats = most / static_cast<long>(sizeof(float)) + 2 * kSumLanes;
  const std::vector<float*> buffers = Buffers(threads, most_floats);
  // Bandwidth over a working set of `bytes` per thread: the faster of one
  // read stream and a triad's three streams (two read, one written). One
  // stream alone reads well below what a core moves with several: this VM's
  // single stream reads 1 GiB at about 26 GB/s, a triad moves 36 GB/s, and a
  // roofline must not call an honest triad kernel impossible.
  const auto measure = [&](long bytes) {
    const long n = std::max<long>(kSumLanes, bytes / static_cast<long>(sizeof(float)) / kSumLanes * kSumLanes);
    const double read = BestRate([&](long passes) {
      return Parallel(threads, [&](int t) { sink = Sum(buffers[t], n, passes); });
    }, static_cast<double>(n) * sizeof(float) * threads);
    const long third = std::max<long>(16, n / 3);
    const double triad = BestRate([&](long passes) {
      return Parallel(threads, [&](int t) {
        float* x = buffers[t];
        Triad(x, x + third, x + 2 * third, third, passes);
        sink = x[2 * third];
      });
    }, 3.0 * static_cast<double>(third) * sizeof(float) * threads);
    return std::max(read, triad) / 1e9;
  };
  // Each size measured once.
  std::map<long, double> measured;
  const auto bandwidth = [&](long bytes) {
    const auto known = measured.find(bytes);
    return known != measured.end() ? known->second : measured[bytes] = measure(bytes);
  };
  double gbps[4] = {};
  gbps[0] = bandwidth(l1 / 2);
  gbps[1] = bandwidth(l2 / 2);
  for (long bytes : l3_sizes) gbps[2] = std::max(gbps[2], bandwidth(bytes));
  gbps[3] = bandwidth(dram);
  std::printf("{\"peak_gflops\": %.6g, \"l1_gbps\": %.6g, \"l2_gbps\": %.6g, \"l3_gbps\": %.6g, \"dram_gbps\": %.6g, "
              "\"curve\": [",
              peak / 1e9, gbps[0], gbps[1], gbps[2], gbps[3]);
  const char* comma = "";
  for (long bytes : curve) {
    std::printf("%s[%ld, %.6g]", comma, bytes * threads, bandwidth(bytes));
    comma = ", ";
  }
  std::printf("]}\n");
  return 0;
}
)cpp";

// The figures of a calibration program's output or of a cached file.
Calibration FromJson(const nlohmann::json& document, int threads) {
  Calibration calibration;
  calibration.threads = threads;
  calibration.peak_gflops = document.at("peak_gflops").get<double>();
  calibration.l1_gbps = document.at("l1_gbps").get<double>();
  calibration.l2_gbps = document.at("l2_gbps").get<double>();
  calibration.l3_gbps = document.at("l3_gbps").get<double>();
  calibration.dram_gbps = document.at("dram_gbps").get<double>();
  for (const auto& point : document.at("curve")) {  // [bytes, gbps]
    calibration.curve.push_back({point.at(0).get<double>(), point.at(1).get<double>()});
  }
  calibration.seconds = document.value("seconds", 0.0);
  return calibration;
}

std::filesystem::path CacheFile(const HostInfo& host, int threads) {
  const char* xdg = std::getenv("XDG_CACHE_HOME");
  const char* home = std::getenv("HOME");
  std::filesystem::path dir = xdg && *xdg ? std::filesystem::path(xdg) / "kestrel"
                              : home && *home ? std::filesystem::path(home) / ".cache" / "kestrel"
                                              : std::filesystem::temp_directory_path() / "kestrel-cache";
  return dir / ("calibration-" + Sha256Hex(host.Key()).substr(0, 16) + "-t" + std::to_string(threads) + ".json");
}

}  // namespace

Result<Calibration> CachedCalibration(const std::string& compiler, int threads, const HostInfo& host) {
  const auto file = CacheFile(host, threads);
  try {
    std::ifstream in(file);
    if (in) {
      const auto document = nlohmann::json::parse(in);
      // A file from before the curve ("curve" missing) is measured again.
      const Calibration calibration = FromJson(document, threads);
      if (calibration.ok()) return calibration;
    }
  } catch (const nlohmann::json::exception&) {
    // A damaged cache file is measured again and replaced.
  }
  std::string pattern = (std::filesystem::temp_directory_path() / "kestrel-calibration-XXXXXX").string();
  if (::mkdtemp(pattern.data()) == nullptr) return Fail(Error::Io("calibration: cannot create a directory like " + pattern));
  auto measured = MeasureCalibration(compiler, threads, host, pattern);
  std::error_code ignored;
  std::filesystem::remove_all(pattern, ignored);
  if (!measured) return measured;
  std::error_code error;
  std::filesystem::create_directories(file.parent_path(), error);
  std::ofstream out(file);
  out << nlohmann::json{{"host", host.Key()},
                        {"threads", threads},
                        {"peak_gflops", measured->peak_gflops},
                        {"l1_gbps", measured->l1_gbps},
                        {"l2_gbps", measured->l2_gbps},
                        {"l3_gbps", measured->l3_gbps},
                        {"dram_gbps", measured->dram_gbps},
                        {"curve", nlohmann::json::parse(CurveJson(measured->curve))},
                        {"seconds", measured->seconds}}
             .dump(2)
      << "\n";
  return measured;
}

Result<Calibration> MeasureCalibration(const std::string& compiler, int threads, const HostInfo& host,
                                       const std::filesystem::path& work_dir, const Executor& build,
                                       const Executor& run_on) {
  const auto start = std::chrono::steady_clock::now();
  std::error_code error;
  std::filesystem::create_directories(work_dir, error);
  const auto source = work_dir / "calibrate.cpp";
  const auto binary = work_dir / "calibrate";
  {
    std::ofstream out(source);
    out << kProgram;
    if (!out) return Fail(Error::Io("calibration: cannot write " + source.string()));
  }
  // The hardware's peak: native code, FMA contraction, full-width vectors.
  std::vector<std::string> flags = {"-O3", "-march=native", "-ffp-contract=fast", "-pthread"};
  if (host.isa.find("avx512f") != std::string::npos) flags.push_back("-mprefer-vector-width=512");
  SubprocessOptions compile;
  compile.argv = {compiler};
  compile.argv.insert(compile.argv.end(), flags.begin(), flags.end());
  compile.argv.insert(compile.argv.end(), {source.string(), "-o", binary.string()});
  compile.timeout_s = 120;
  compile.cwd = work_dir;
  // -march=native: on the node that runs it, when builds are Slurm jobs.
  auto compiled = build.Run(compile, "calibration-build");
  if (!compiled) return Fail(compiled.error().WithContext("calibration"));
  if (!compiled->Succeeded()) {
    return Fail(Error::Io("calibration: " + compiler + " failed: " + FirstErrorLine(compiled->log)));
  }
  SubprocessOptions run;
  run.argv = {binary.string(), std::to_string(threads), std::to_string(host.l1d_bytes > 0 ? host.l1d_bytes : 32 << 10),
              std::to_string(host.l2_bytes > 0 ? host.l2_bytes : 1 << 20),
              std::to_string(host.l3_bytes > 0 ? host.l3_bytes : 8 << 20)};
  run.timeout_s = 120;
  run.cwd = work_dir;
  auto ran = run_on.Run(run, "calibration");
  if (!ran) return Fail(ran.error().WithContext("calibration"));
  if (!ran->Succeeded()) return Fail(Error::Io("calibration program: " + ran->Describe(run.timeout_s)));
  Calibration calibration;
  try {
    calibration = FromJson(nlohmann::json::parse(ran->log), threads);
  } catch (const nlohmann::json::exception& what) {
    return Fail(Error::Io(std::string("calibration program: unexpected output: ") + what.what()));
  }
  if (!calibration.ok()) return Fail(Error::Io("calibration program: measured no throughput"));
  calibration.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::filesystem::remove(binary, error);
  return calibration;
}

}  // namespace kestrel
