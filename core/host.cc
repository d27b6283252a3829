#include "core/host.h"

#include <sys/utsname.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <sstream>
#include <vector>

namespace kestrel {
namespace {

std::string Trim(std::string text) {
  const auto begin = text.find_first_not_of(" \t\n");
  if (begin == std::string::npos) return "";
  const auto end = text.find_last_not_of(" \t\n");
  return text.substr(begin, end - begin + 1);
}

std::string ReadLine(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  return Trim(line);
}

// "48K" / "2048K" / "32M" -> bytes.
std::int64_t ParseCacheSize(const std::string& text) {
  if (text.empty()) return 0;
  std::int64_t value = 0;
  std::size_t pos = 0;
  while (pos < text.size() && std::isdigit(static_cast<unsigned char>(text[pos]))) {
    value = value * 10 + (text[pos] - '0');
    ++pos;
  }
  if (pos < text.size() && (text[pos] == 'K' || text[pos] == 'k')) value *= 1024;
  if (pos < text.size() && (text[pos] == 'M' || text[pos] == 'm')) value *= 1024 * 1024;
  return value;
}

void ReadCaches(HostInfo& host) {
  for (int index = 0; index < 8; ++index) {
    const std::string dir = "/sys/devices/system/cpu/cpu0/cache/index" + std::to_string(index) + "/";
    const std::string level = ReadLine(dir + "level");
    if (level.empty()) break;
    const std::string type = ReadLine(dir + "type");
    const std::int64_t size = ParseCacheSize(ReadLine(dir + "size"));
    if (level == "1" && type == "Data") host.l1d_bytes = size;
    if (level == "2") host.l2_bytes = size;
    if (level == "3") host.l3_bytes = size;
  }
}

void ReadCpuInfo(HostInfo& host) {
  static const std::vector<std::string> kIsaFlags = {"sse4_2", "avx", "avx2", "fma", "avx512f", "avx512bw",
                                                     "avx512vl", "avx512_bf16", "avx512_fp16", "amx_tile",
                                                     "asimd", "sve"};
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  std::string flags;
  while (std::getline(in, line)) {
    const auto colon = line.find(':');
    if (colon == std::string::npos) continue;
    const std::string key = Trim(line.substr(0, colon));
    const std::string value = Trim(line.substr(colon + 1));
    if (host.cpu_model.empty() && (key == "model name" || key == "Model")) host.cpu_model = value;
    if (flags.empty() && (key == "flags" || key == "Features")) flags = " " + value + " ";
  }
  for (const auto& flag : kIsaFlags) {
    if (flags.find(" " + flag + " ") != std::string::npos) {
      if (!host.isa.empty()) host.isa += ' ';
      host.isa += flag;
    }
  }
}

}  // namespace

HostInfo DetectHost() {
  HostInfo host;
  char name[256] = {};
  if (gethostname(name, sizeof(name) - 1) == 0) host.name = name;
  ReadCpuInfo(host);
  if (host.cpu_model.empty()) host.cpu_model = "unknown cpu";
  host.cores = static_cast<int>(sysconf(_SC_NPROCESSORS_ONLN));
  host.memory_bytes = static_cast<std::int64_t>(sysconf(_SC_PHYS_PAGES)) * sysconf(_SC_PAGE_SIZE);
  ReadCaches(host);
  // Some virtual machines hide sysfs cache info; glibc may still know it.
  if (host.l1d_bytes == 0) host.l1d_bytes = std::max<long>(0, sysconf(_SC_LEVEL1_DCACHE_SIZE));
  if (host.l2_bytes == 0) host.l2_bytes = std::max<long>(0, sysconf(_SC_LEVEL2_CACHE_SIZE));
  if (host.l3_bytes == 0) host.l3_bytes = std::max<long>(0, sysconf(_SC_LEVEL3_CACHE_SIZE));
  utsname uts{};
  if (uname(&uts) == 0) host.os = std::string(uts.sysname) + " " + uts.release + " " + uts.machine;
  return host;
}

}  // namespace kestrel
