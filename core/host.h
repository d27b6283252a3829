#pragma once
// The machine a measurement was taken on. Measurements are kept per host, so
// one database can hold results from several machines.

#include <cstdint>
#include <string>

namespace kestrel {

struct HostInfo {
  std::string name;       // hostname
  std::string cpu_model;  // /proc/cpuinfo "model name"
  int cores = 0;          // online logical CPUs
  std::string isa;        // "avx2 fma avx512f ..." (the vector ISA flags present)
  std::int64_t l1d_bytes = 0;
  std::int64_t l2_bytes = 0;
  std::int64_t l3_bytes = 0;
  std::int64_t memory_bytes = 0;
  std::string os;  // "Linux 6.1.0 x86_64"

  // Stable key: hostname plus CPU model, so a re-imaged machine with the same
  // name and CPU keeps its history.
  std::string Key() const { return name + "|" + cpu_model; }
};

// Reads /proc/cpuinfo, sysfs caches, uname and sysconf. Never fails: unknown
// fields stay empty or zero.
HostInfo DetectHost();

}  // namespace kestrel
