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
    // rint: nearbyint's rounding (half to even: the runner never changes the
    // mode) without saving and restoring the FP exception flags per element.
    const double r = std::rint(std::clamp(value, lo, hi));
    converted = r >= hi ? std::numeric_limits<T>::max() : static_cast<T>(r);
  }
  std::memcpy(out + i * static_cast<std::int64_t>(sizeof(T)), &converted, sizeof(T));
}

void StoreBits(std::uint16_t bits, std::byte* out, std::int64_t i) { std::memcpy(out + 2 * i, &bits, 2); }

// Calls `use` with the store of `type`'s elements into `out`, a callable
// (index, value): one switch on the type, whether for one value or a buffer.
template <class Use>
void WithStore(ScalarType type, std::byte* out, Use use) {
  switch (type) {
    case ScalarType::kF32: return use([out](std::int64_t i, double v) { Store<float>(v, out, i); });
    case ScalarType::kF64: return use([out](std::int64_t i, double v) { Store<double>(v, out, i); });
    case ScalarType::kI8: return use([out](std::int64_t i, double v) { Store<std::int8_t>(v, out, i); });
    case ScalarType::kU8: return use([out](std::int64_t i, double v) { Store<std::uint8_t>(v, out, i); });
    case ScalarType::kI32: return use([out](std::int64_t i, double v) { Store<std::int32_t>(v, out, i); });
    case ScalarType::kI64: return use([out](std::int64_t i, double v) { Store<std::int64_t>(v, out, i); });
    case ScalarType::kF16: return use([out](std::int64_t i, double v) { StoreBits(ToF16Bits(v), out, i); });
    case ScalarType::kBF16: return use([out](std::int64_t i, double v) { StoreBits(ToBf16Bits(v), out, i); });
  }
}

void StoreAs(ScalarType type, double value, std::byte* out, std::int64_t i) {
  WithStore(type, out, [&](auto store) { store(i, value); });
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

// Standard normals by the ziggurat (Marsaglia and Tsang, 2000), as Doornik
// (2005) gives it: 128 layers of equal area, the layer and the uniform taken
// from separate bits of one draw (the original's shared bits correlate
// them). Nearly every draw is a multiply and a compare: about a seventh of
// Box-Muller's log, sqrt, sin and cos.
class Ziggurat {
 public:
  static const Ziggurat& Get() {
    static const Ziggurat tables;
    return tables;
  }

  double Next(Generator& generator) const {
    for (;;) {
      const std::uint64_t bits = generator.Next();
      const auto layer = static_cast<std::size_t>(bits & (kLayers - 1));
      const double u = 2.0 * (static_cast<double>(bits >> 11) * 0x1.0p-53) - 1.0;  // [-1, 1)
      if (std::fabs(u) < ratio_[layer]) return u * x_[layer];  // inside the layer's rectangle
      if (layer == 0) return Tail(generator, u < 0);
      // The wedge beside the rectangle: under the density, or draw again.
      const double x = u * x_[layer];
      const double f0 = std::exp(-0.5 * (x_[layer] * x_[layer] - x * x));
      const double f1 = std::exp(-0.5 * (x_[layer + 1] * x_[layer + 1] - x * x));
      if (f1 + generator.Uniform01() * (f0 - f1) < 1.0) return x;
    }
  }

 private:
  static constexpr std::size_t kLayers = 128;
  static constexpr double kR = 3.442619855899;          // where the tail starts
  static constexpr double kArea = 9.91256303526217e-3;  // of each layer

  Ziggurat() {
    double f = std::exp(-0.5 * kR * kR);
    x_[0] = kArea / f;  // the bottom layer: a rectangle of the same area with the tail beyond kR
    x_[1] = kR;
    x_[kLayers] = 0;
    for (std::size_t i = 2; i < kLayers; ++i) {
      x_[i] = std::sqrt(-2.0 * std::log(kArea / x_[i - 1] + f));
      f = std::exp(-0.5 * x_[i] * x_[i]);
    }
    for (std::size_t i = 0; i < kLayers; ++i) ratio_[i] = x_[i + 1] / x_[i];
  }

  // Beyond kR (Marsaglia's method for the tail).
  static double Tail(Generator& generator, bool negative) {
    double x = 0, y = 0;
    do {
      x = std::log(1.0 - generator.Uniform01()) / kR;  // log of (0, 1]
      y = std::log(1.0 - generator.Uniform01());
    } while (-2.0 * y < x * x);
    return negative ? x - kR : kR - x;
  }

  double x_[kLayers + 1];
  double ratio_[kLayers];
};

// Values of `init`'s distribution from `generator`, handed to `put` with
// the indices `at(0)`, `at(1)`, ... `at(elements - 1)`.
template <class Index, class Put>
void DrawValues(const InitSpec& init, Generator& generator, std::int64_t elements, Index at, Put put) {
  switch (init.dist) {
    case InitSpec::Dist::kNormal: {
      const Ziggurat& normal = Ziggurat::Get();
      for (std::int64_t i = 0; i < elements; ++i) put(at(i), init.mean + init.std * normal.Next(generator));
      break;
    }
    case InitSpec::Dist::kUniform:
      for (std::int64_t i = 0; i < elements; ++i) put(at(i), init.lo + (init.hi - init.lo) * generator.Uniform01());
      break;
    case InitSpec::Dist::kInt: {
      const double lo = std::ceil(init.lo);
      const double hi = std::floor(init.hi);
      const double span = std::max(0.0, hi - lo + 1.0);
      for (std::int64_t i = 0; i < elements; ++i) {
        // span * u is at least 0 and below 2^53: truncation is its floor, without a call.
        const auto offset = static_cast<std::int64_t>(span * generator.Uniform01());
        put(at(i), std::min(lo + static_cast<double>(offset), hi));
      }
      break;
    }
  }
}

// Values of `arg`'s init distribution from `generator`, stored at the
// indices `at(0)`, `at(1)`, ... `at(elements - 1)` of `out`: the type's
// conversion chosen once, not per element.
template <class Index>
void Draw(const JobArg& arg, Generator& generator, std::int64_t elements, Index at, std::byte* out) {
  WithStore(arg.type, out, [&](auto store) { DrawValues(arg.init, generator, elements, at, store); });
}

}  // namespace

void FillInput(const JobArg& arg, const InputKey& key, int arg_index, std::byte* out) {
  Generator generator(StreamSeed(key, arg_index));
  Draw(arg, generator, arg.count, [](std::int64_t i) { return i; }, out);
}

void DrawAfresh(const JobArg& arg, DrawSeeds seeds, std::int64_t elements, std::byte* out) {
  Generator generator(seeds.values);
  if (elements >= arg.count) {
    Draw(arg, generator, arg.count, [](std::int64_t i) { return i; }, out);
    return;
  }
  Generator where(seeds.positions);
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
