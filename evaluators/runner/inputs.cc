#include "evaluators/runner/inputs.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <new>

#include <sys/mman.h>
#include <unistd.h>

#include "core/half_float.h"

namespace kestrel::runner {
namespace {

constexpr std::size_t kAlignment = 64;
constexpr std::size_t kHugePage = std::size_t{2} << 20;
constexpr std::uint64_t kGamma = 0x9E3779B97F4A7C15ULL;

std::uint64_t Mix(std::uint64_t x) {
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
  return x ^ (x >> 31);
}

// SplitMix64: small, fast, and the same on every platform (unlike the
// distributions of <random>).
class Generator {
 public:
  explicit Generator(std::uint64_t seed) : state_(seed) {}
  std::uint64_t Next() { return Mix(state_ += kGamma); }
  double Uniform01() { return static_cast<double>(Next() >> 11) * 0x1.0p-53; }  // [0, 1)

 private:
  std::uint64_t state_;
};

std::uint64_t StreamSeed(const InputKey& key, int arg_index) {
  std::uint64_t h = Mix(key.seed + kGamma);
  for (std::uint64_t part : {static_cast<std::uint64_t>(key.shape_index), static_cast<std::uint64_t>(key.input_set),
                             static_cast<std::uint64_t>(arg_index)}) {
    h = Mix(h ^ (part + kGamma));
  }
  return h;
}

template <class T>
void Store(double value, std::byte* out, std::int64_t i) {
  T converted;
  if constexpr (std::is_floating_point_v<T>) {
    converted = static_cast<T>(value);
  } else {
    const double lo = static_cast<double>(std::numeric_limits<T>::lowest());
    const double hi = static_cast<double>(std::numeric_limits<T>::max());
    const double r = std::nearbyint(std::clamp(value, lo, hi));
    converted = r >= hi ? std::numeric_limits<T>::max() : static_cast<T>(r);
  }
  std::memcpy(out + i * static_cast<std::int64_t>(sizeof(T)), &converted, sizeof(T));
}

void StoreAs(ScalarType type, double value, std::byte* out, std::int64_t i) {
  switch (type) {
    case ScalarType::kF32: return Store<float>(value, out, i);
    case ScalarType::kF64: return Store<double>(value, out, i);
    case ScalarType::kI8: return Store<std::int8_t>(value, out, i);
    case ScalarType::kU8: return Store<std::uint8_t>(value, out, i);
    case ScalarType::kI32: return Store<std::int32_t>(value, out, i);
    case ScalarType::kI64: return Store<std::int64_t>(value, out, i);
    case ScalarType::kF16:
    case ScalarType::kBF16: {
      const std::uint16_t bits = type == ScalarType::kF16 ? ToF16Bits(value) : ToBf16Bits(value);
      std::memcpy(out + 2 * i, &bits, 2);
      return;
    }
  }
}

bool IsOutput(ArgRole role) { return role == ArgRole::kOutput; }

// madvise(MADV_HUGEPAGE) over the whole pages inside [data, data + bytes);
// advice only: a kernel without transparent huge pages ignores it.
void AdviseHugePages(std::byte* data, std::size_t bytes) {
  const auto page = static_cast<std::uintptr_t>(::sysconf(_SC_PAGESIZE));
  const auto begin = (reinterpret_cast<std::uintptr_t>(data) + page - 1) / page * page;
  const auto end = (reinterpret_cast<std::uintptr_t>(data) + bytes) / page * page;
  if (end > begin) (void)::madvise(reinterpret_cast<void*>(begin), end - begin, MADV_HUGEPAGE);
}

}  // namespace

void ArgSet::FreeDeleter::operator()(std::byte* p) const { std::free(p); }

namespace {

// Values of `arg`'s init distribution from `generator`, stored at the
// indices `at(0)`, `at(1)`, ... `at(elements - 1)` of `out`.
template <class Index>
void Draw(const JobArg& arg, Generator& generator, std::int64_t elements, Index at, std::byte* out) {
  const InitSpec& init = arg.init;
  switch (init.dist) {
    case InitSpec::Dist::kNormal:
      for (std::int64_t i = 0; i < elements; i += 2) {
        // Box-Muller: two normals from two uniforms.
        const double u1 = 1.0 - generator.Uniform01();  // (0, 1]
        const double u2 = generator.Uniform01();
        const double r = std::sqrt(-2.0 * std::log(u1));
        StoreAs(arg.type, init.mean + init.std * r * std::cos(2 * M_PI * u2), out, at(i));
        if (i + 1 < elements) StoreAs(arg.type, init.mean + init.std * r * std::sin(2 * M_PI * u2), out, at(i + 1));
      }
      break;
    case InitSpec::Dist::kUniform:
      for (std::int64_t i = 0; i < elements; ++i) {
        StoreAs(arg.type, init.lo + (init.hi - init.lo) * generator.Uniform01(), out, at(i));
      }
      break;
    case InitSpec::Dist::kInt: {
      const double lo = std::ceil(init.lo);
      const double span = std::max(0.0, std::floor(init.hi) - lo + 1.0);
      for (std::int64_t i = 0; i < elements; ++i) {
        StoreAs(arg.type, std::min(lo + std::floor(span * generator.Uniform01()), std::floor(init.hi)), out, at(i));
      }
      break;
    }
  }
}

}  // namespace

void FillInput(const JobArg& arg, const InputKey& key, int arg_index, std::byte* out) {
  Generator generator(StreamSeed(key, arg_index));
  Draw(arg, generator, arg.count, [](std::int64_t i) { return i; }, out);
}

void DrawAfresh(const JobArg& arg, std::uint64_t seed, std::int64_t elements, std::byte* out) {
  Generator generator(seed);
  if (elements >= arg.count) {
    Draw(arg, generator, arg.count, [](std::int64_t i) { return i; }, out);
    return;
  }
  // Where: a second stream, so that a position never reuses a value's bits.
  Generator where(Mix(seed ^ kGamma));
  const auto count = static_cast<std::uint64_t>(arg.count);
  Draw(arg, generator, elements,
       [&](std::int64_t) { return static_cast<std::int64_t>(where.Next() % count); },
       out);
}

std::uint64_t NextRandom(std::uint64_t& state) { return Mix(state += kGamma); }

void StoreValue(ScalarType type, double value, std::byte* out, std::int64_t index) { StoreAs(type, value, out, index); }

void WriteValue(const JobArg& arg, std::byte* out) {
  if (arg.role == ArgRole::kDim) {
    const auto value = static_cast<std::int64_t>(arg.value);
    std::memcpy(out, &value, sizeof value);
  } else {
    StoreAs(arg.type, arg.value, out, 0);
  }
}

ArgSet::ArgSet(const JobShape& shape, const InputKey& key) : shape_(&shape) {
  for (std::size_t a = 0; a < shape.args.size(); ++a) {
    const JobArg& arg = shape.args[a];
    const bool buffer = arg.role == ArgRole::kInput || arg.role == ArgRole::kOutput || arg.role == ArgRole::kInOut;
    const std::size_t element = arg.role == ArgRole::kDim ? sizeof(std::int64_t) : SizeOf(arg.type);
    const std::size_t bytes = buffer ? static_cast<std::size_t>(arg.count) * element : element;
    // Never a null pointer, even for an empty buffer; padded to the alignment.
    const std::size_t allocated = std::max(kAlignment, (bytes + kAlignment - 1) / kAlignment * kAlignment);
    Buffer storage{std::unique_ptr<std::byte[], FreeDeleter>(
                       static_cast<std::byte*>(std::aligned_alloc(kAlignment, allocated))),
                   bytes};
    if (!storage.data) throw std::bad_alloc();
    // A large buffer asks for transparent huge pages where the kernel offers
    // them: touching hundreds of megabytes of inputs 4 KiB page by page costs
    // seconds per evaluation on a virtual machine. Only the advice changes:
    // buffers keep the addresses malloc gives (no extra alignment, which would
    // put every array on the same cache sets).
    if (bytes >= kHugePage) AdviseHugePages(storage.data.get(), allocated);
    // Inputs are filled and outputs poisoned below: only what they leave is zeroed.
    const bool written = buffer && arg.count > 0;
    std::memset(storage.data.get() + (written ? bytes : 0), 0, allocated - (written ? bytes : 0));
    if (arg.role == ArgRole::kDim) {
      const auto value = static_cast<std::int64_t>(arg.value);
      std::memcpy(storage.data.get(), &value, sizeof value);
    } else if (arg.role == ArgRole::kScalar) {
      StoreAs(arg.type, arg.value, storage.data.get(), 0);
    } else if (!IsOutput(arg.role)) {
      FillInput(arg, key, static_cast<int>(a), storage.data.get());
    }
    pointers_.push_back(storage.data.get());
    buffers_.push_back(std::move(storage));
  }
  PoisonOutputs(0);
}

std::span<std::byte> ArgSet::Bytes(std::size_t index) { return {buffers_[index].data.get(), buffers_[index].bytes}; }

std::span<const std::byte> ArgSet::Bytes(std::size_t index) const {
  return {buffers_[index].data.get(), buffers_[index].bytes};
}

void ArgSet::PoisonOutputs(int variant) {
  for (std::size_t a = 0; a < buffers_.size(); ++a) {
    const JobArg& arg = shape_->args[a];
    if (!IsOutput(arg.role)) continue;
    std::byte* data = buffers_[a].data.get();
    if (arg.type == ScalarType::kF32) {
      const std::uint32_t bits = 0x7FC01234u + static_cast<std::uint32_t>(variant);
      for (std::int64_t i = 0; i < arg.count; ++i) std::memcpy(data + 4 * i, &bits, 4);
    } else if (arg.type == ScalarType::kF64) {
      const std::uint64_t bits = 0x7FF8000000001234ULL + static_cast<std::uint64_t>(variant);
      for (std::int64_t i = 0; i < arg.count; ++i) std::memcpy(data + 8 * i, &bits, 8);
    } else if (arg.type == ScalarType::kF16 || arg.type == ScalarType::kBF16) {
      const std::uint16_t bits = static_cast<std::uint16_t>((arg.type == ScalarType::kF16 ? 0x7E12u : 0x7FC1u) + variant);
      for (std::int64_t i = 0; i < arg.count; ++i) std::memcpy(data + 2 * i, &bits, 2);
    } else {
      std::memset(data, variant == 0 ? 0xA5 : 0x5A, buffers_[a].bytes);
    }
  }
}

}  // namespace kestrel::runner
