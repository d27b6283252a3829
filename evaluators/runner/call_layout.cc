#include "evaluators/runner/call_layout.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "evaluators/runner/inputs.h"

namespace kestrel::runner {
namespace {

constexpr std::uint64_t kAlign = 64;
constexpr std::uint64_t kStagger = 3 * kAlign;

std::uint64_t Padded(std::uint64_t bytes) { return std::max(kAlign, (bytes + kAlign - 1) / kAlign * kAlign); }

constexpr std::uint64_t kStreamBytes = 1 << 20;

// `count` copies of `value` at `data`. Large buffers are written with
// streaming stores (no read of the old contents, no cache pollution): the
// poison of a large output costs about one write of it.
template <class T>
void Fill(std::byte* data, std::int64_t count, T value) {
#if defined(__SSE2__)
  const std::uint64_t bytes = static_cast<std::uint64_t>(count) * sizeof(T);
  if (bytes >= kStreamBytes && reinterpret_cast<std::uintptr_t>(data) % 16 == 0) {
    alignas(16) T pattern[16 / sizeof(T)];
    std::fill_n(pattern, 16 / sizeof(T), value);
    const __m128i block = _mm_load_si128(reinterpret_cast<const __m128i*>(pattern));
    auto* out = reinterpret_cast<__m128i*>(data);
    const std::uint64_t blocks = bytes / 16;
    for (std::uint64_t i = 0; i < blocks; ++i) _mm_stream_si128(out + i, block);
    _mm_sfence();
    std::fill_n(reinterpret_cast<T*>(data + blocks * 16), count - static_cast<std::int64_t>(blocks * 16 / sizeof(T)),
                value);
    return;
  }
#endif
  std::fill_n(reinterpret_cast<T*>(data), count, value);
}

}  // namespace

bool IsInputRole(ArgRole role) { return role == ArgRole::kInput || role == ArgRole::kInOut; }
bool IsResultRole(ArgRole role) { return role == ArgRole::kOutput || role == ArgRole::kInOut; }

std::uint64_t ArgBytes(const JobArg& arg) {
  switch (arg.role) {
    case ArgRole::kDim: return sizeof(std::int64_t);
    case ArgRole::kScalar: return SizeOf(arg.type);
    default: return static_cast<std::uint64_t>(arg.count) * SizeOf(arg.type);
  }
}

Placement Place(const JobShape& shape, bool (*keep)(ArgRole)) {
  Placement placement;
  placement.offsets.assign(shape.args.size(), 0);
  std::uint64_t at = 0;
  int placed = 0;
  for (std::size_t a = 0; a < shape.args.size(); ++a) {
    if (!keep(shape.args[a].role)) continue;
    const std::uint64_t bytes = ArgBytes(shape.args[a]);
    if (bytes >= 4096 && placed > 0) at += kStagger * static_cast<std::uint64_t>(placed % 8);
    placement.offsets[a] = at;
    at += Padded(bytes);
    ++placed;
  }
  placement.bytes = Padded(at);
  return placement;
}

void WriteValues(const JobShape& shape, std::byte* base, const Placement& placement) {
  for (std::size_t a = 0; a < shape.args.size(); ++a) {
    const JobArg& arg = shape.args[a];
    if (arg.role == ArgRole::kDim || arg.role == ArgRole::kScalar) WriteValue(arg, base + placement.offsets[a]);
  }
}

namespace {

bool IsFloat(ScalarType type) {
  return type == ScalarType::kF32 || type == ScalarType::kF64 || type == ScalarType::kF16 || type == ScalarType::kBF16;
}

// `count` elements of `arg` (whose elements are `width` bytes) at `data`,
// filled with the poison of `variant`.
void Poison(const JobArg& arg, std::byte* data, std::int64_t count, std::uint64_t width, int variant) {
  if (arg.type == ScalarType::kF32) {
    Fill<std::uint32_t>(data, count, 0x7FC01234u + static_cast<std::uint32_t>(variant));
  } else if (arg.type == ScalarType::kF64) {
    Fill<std::uint64_t>(data, count, 0x7FF8000000001234ULL + static_cast<std::uint64_t>(variant));
  } else if (arg.type == ScalarType::kF16 || arg.type == ScalarType::kBF16) {
    Fill<std::uint16_t>(data, count,
                        static_cast<std::uint16_t>((arg.type == ScalarType::kF16 ? 0x7E12u : 0x7FC1u) + variant));
  } else {
    std::memset(data, variant == 0 ? 0xA5 : 0x5A, static_cast<std::size_t>(count) * width);
  }
}

}  // namespace

void PoisonOutputs(const JobShape& shape, std::byte* base, const Placement& placement, int variant) {
  for (std::size_t a = 0; a < shape.args.size(); ++a) {
    const JobArg& arg = shape.args[a];
    if (arg.role != ArgRole::kOutput || arg.count <= 0) continue;
    Poison(arg, base + placement.offsets[a], arg.count, ArgBytes(arg) / static_cast<std::uint64_t>(arg.count), variant);
  }
}

std::string UnwrittenOutput(const JobShape& shape, const std::byte* base, const Placement& placement, int variant,
                            std::uint64_t places) {
  for (std::size_t a = 0; a < shape.args.size(); ++a) {
    const JobArg& arg = shape.args[a];
    if (arg.role != ArgRole::kOutput || arg.count <= 0) continue;
    const std::uint64_t width = ArgBytes(arg) / static_cast<std::uint64_t>(arg.count);
    const std::byte* data = base + placement.offsets[a];
    if (width == 0 || width > 8) continue;
    std::byte poison[8];
    Poison(arg, poison, 1, width, variant);
    if (width == 1) {
      if (std::all_of(data, data + arg.count, [&](std::byte b) { return b == poison[0]; })) return arg.name;
      continue;
    }
    const auto poisoned = [&](std::int64_t i) { return std::memcmp(data + i * width, poison, width) == 0; };
    const bool first = poisoned(0);
    const bool last = poisoned(arg.count - 1);
    if (!IsFloat(arg.type)) {
      if (first && last) return arg.name;
      continue;
    }
    if (first || last) return arg.name;
    // A call that returned with its edges written and its middle not (work
    // left to a thread, or to a hook on the worker's reply): found at places
    // drawn afresh for each look (from `places`).
    for (int probe = 0; probe < kUnwrittenProbes && places != 0; ++probe) {
      if (poisoned(static_cast<std::int64_t>(NextRandom(places) % static_cast<std::uint64_t>(arg.count)))) return arg.name;
    }
  }
  return "";
}

}  // namespace kestrel::runner
