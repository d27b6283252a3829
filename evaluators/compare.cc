#include "evaluators/compare.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <limits>
#include <map>
#include <set>
#include <type_traits>

#include "core/half_float.h"

namespace kestrel {
namespace {

std::string Number(double value) {
  char text[32];
  std::snprintf(text, sizeof text, "%.6g", value);
  return text;
}

// Element i of a buffer of T, as double (T's bits for the 16-bit floats).
template <ScalarType kType>
inline double Load(const std::byte* data, std::int64_t i) {
  auto load = [&](auto zero) {
    decltype(zero) value;
    std::memcpy(&value, data + i * static_cast<std::int64_t>(sizeof value), sizeof value);
    return value;
  };
  if constexpr (kType == ScalarType::kF32) return static_cast<double>(load(float{}));
  if constexpr (kType == ScalarType::kF64) return load(double{});
  if constexpr (kType == ScalarType::kI8) return static_cast<double>(load(std::int8_t{}));
  if constexpr (kType == ScalarType::kU8) return static_cast<double>(load(std::uint8_t{}));
  if constexpr (kType == ScalarType::kI32) return static_cast<double>(load(std::int32_t{}));
  if constexpr (kType == ScalarType::kI64) return static_cast<double>(load(std::int64_t{}));
  if constexpr (kType == ScalarType::kF16) return FromF16Bits(load(std::uint16_t{}));
  if constexpr (kType == ScalarType::kBF16) return FromBf16Bits(load(std::uint16_t{}));
}

// Calls f(std::integral_constant<ScalarType, type>{}): one instantiation per
// type, so that the loops below load without a switch per element.
template <typename F>
decltype(auto) WithType(ScalarType type, F&& f) {
  switch (type) {
    case ScalarType::kF32: return f(std::integral_constant<ScalarType, ScalarType::kF32>{});
    case ScalarType::kF64: return f(std::integral_constant<ScalarType, ScalarType::kF64>{});
    case ScalarType::kI8: return f(std::integral_constant<ScalarType, ScalarType::kI8>{});
    case ScalarType::kU8: return f(std::integral_constant<ScalarType, ScalarType::kU8>{});
    case ScalarType::kI32: return f(std::integral_constant<ScalarType, ScalarType::kI32>{});
    case ScalarType::kI64: return f(std::integral_constant<ScalarType, ScalarType::kI64>{});
    case ScalarType::kF16: return f(std::integral_constant<ScalarType, ScalarType::kF16>{});
    case ScalarType::kBF16: return f(std::integral_constant<ScalarType, ScalarType::kBF16>{});
  }
  return f(std::integral_constant<ScalarType, ScalarType::kF32>{});
}

double ElementAt(ScalarType type, const std::byte* data, std::int64_t i) {
  return WithType(type, [&](auto t) { return Load<decltype(t)::value>(data, i); });
}

// The comparisons run a block at a time: first a pass with no branch per
// element that asks only whether every element of the block is finite in
// the reference and within tolerance (and sums the L2 terms); only a block
// where that fails is compared element by element (Excess), which words
// the mismatches. The quick test is the element test restricted to finite
// values: both finite and |a - e| <= atol + rtol * |e|, so a block that
// passes it passes Excess too.
constexpr std::int64_t kBlock = 2048;
constexpr int kLanes = 8;  // independent sums, so that the loop need not wait on one

struct BlockSums {
  double error_squares = 0, reference_squares = 0;
};

template <ScalarType kType>
bool BlockPasses(const std::byte* expected, const std::byte* actual, std::int64_t begin, std::int64_t end,
                 const Tolerance& tolerance, BlockSums* sums) {
  double errors[kLanes] = {}, references[kLanes] = {};
  unsigned failed = 0;
  const double rtol = tolerance.rtol, atol = tolerance.atol, largest = std::numeric_limits<double>::max();
  std::int64_t i = begin;
  const auto one = [&](std::int64_t at, int lane) {
    const double e = Load<kType>(expected, at), a = Load<kType>(actual, at);
    const double d = a - e;
    // A non-finite `a` fails even where the allowance itself overflows.
    failed |= static_cast<unsigned>(!(std::fabs(e) <= largest)) | static_cast<unsigned>(!(std::fabs(a) <= largest)) |
              static_cast<unsigned>(!(std::fabs(d) <= atol + rtol * std::fabs(e)));
    errors[lane] += d * d;
    references[lane] += e * e;
  };
  for (; i + kLanes <= end; i += kLanes) {
    for (int lane = 0; lane < kLanes; ++lane) one(i + lane, lane);
  }
  for (; i < end; ++i) one(i, 0);
  if (failed != 0) return false;
  if (sums != nullptr) {
    for (int lane = 0; lane < kLanes; ++lane) {
      sums->error_squares += errors[lane];
      sums->reference_squares += references[lane];
    }
  }
  return true;
}

Status ReadSegment(std::ifstream& in, const OutputSegment& segment, std::vector<std::byte>& into) {
  into.resize(segment.bytes);
  in.seekg(static_cast<std::streamoff>(segment.offset));
  in.read(reinterpret_cast<char*>(into.data()), static_cast<std::streamsize>(segment.bytes));
  if (!in) return Fail(Error::Io("short read"));
  return {};
}

std::uint64_t ExpectedSize(const std::vector<OutputSegment>& segments) {
  return segments.empty() ? 0 : segments.back().offset + segments.back().bytes;
}

Status CheckSize(const std::filesystem::path& file, std::uint64_t expected) {
  std::error_code error;
  const auto size = std::filesystem::file_size(file, error);
  if (error) return Fail(Error::Io("cannot read " + file.string() + ": " + error.message()));
  if (size != expected) {
    return Fail(Error::Corruption(file.filename().string() + " has " + std::to_string(size) + " bytes, expected " +
                                  std::to_string(expected)));
  }
  return {};
}

// How far outside the tolerance `actual` is (> 1 fails); infinity for a
// non-finite value where a finite one was expected.
double Excess(double expected, double actual, const Tolerance& tolerance) {
  if (!std::isfinite(expected)) {
    const bool same = (std::isnan(expected) && std::isnan(actual)) || expected == actual;
    return same ? 0.0 : std::numeric_limits<double>::infinity();
  }
  if (!std::isfinite(actual)) return std::numeric_limits<double>::infinity();
  const double allowed = tolerance.atol + tolerance.rtol * std::fabs(expected);
  const double error = std::fabs(actual - expected);
  if (error <= allowed) return 0.0;
  return allowed > 0 ? error / allowed : std::numeric_limits<double>::max();
}

// The L2 bound of a buffer whose finite reference elements have L2 norm
// `l2_reference` (`count` of them): half of what the elementwise test allows
// at most, (rtol * ||ref||2 + atol * sqrt(count)) / 2. See compare.h.
double L2Bound(double l2_reference, std::int64_t count, const Tolerance& tolerance) {
  return 0.5 * (tolerance.rtol * l2_reference + tolerance.atol * std::sqrt(static_cast<double>(count)));
}

struct ShapeFailure {
  std::set<int> sets;
  Mismatch worst;
  double worst_excess = -1;
};

}  // namespace

namespace {

// The elementwise test and the L2 sums of one buffer of `T`.
struct BufferStats {
  std::int64_t bad = 0;
  double max_error = 0;
  double error_squares = 0, reference_squares = 0;  // over the finite reference elements
  std::int64_t finite = 0;
};

}  // namespace

struct OutputComparer::State {
  std::vector<std::pair<double, Mismatch>> worst;
  std::map<int, ShapeFailure> failures;
  std::string l2_failure;  // the first segment failing only the L2 bound
  OutputComparison comparison;
};

OutputComparer::OutputComparer(const Job& job, const Tolerance& tolerance, std::size_t max_mismatches)
    : job_(job), tolerance_(tolerance), max_mismatches_(max_mismatches), state_(std::make_unique<State>()) {}

OutputComparer::~OutputComparer() = default;

void OutputComparer::Add(const OutputSegment& segment, const std::byte* expected_bytes, const std::byte* actual_bytes) {
  // Identical bytes pass both tests (no error at all).
  if (std::memcmp(expected_bytes, actual_bytes, segment.bytes) == 0) return;
  State& st = *state_;
  const JobArg& arg = job_.shapes[segment.shape_index].args[segment.arg_index];
  BufferStats stats;
  WithType(arg.type, [&](auto t) {
    constexpr ScalarType kType = decltype(t)::value;
    for (std::int64_t begin = 0; begin < arg.count; begin += kBlock) {
      const std::int64_t end = std::min(arg.count, begin + kBlock);
      BlockSums sums;
      if (BlockPasses<kType>(expected_bytes, actual_bytes, begin, end, tolerance_, &sums)) {
        stats.error_squares += sums.error_squares;
        stats.reference_squares += sums.reference_squares;
        stats.finite += end - begin;
        continue;
      }
      for (std::int64_t i = begin; i < end; ++i) {
        const double expected = Load<kType>(expected_bytes, i);
        const double actual = Load<kType>(actual_bytes, i);
        const double excess = Excess(expected, actual, tolerance_);
        if (std::isfinite(expected) && std::isfinite(actual)) {
          stats.error_squares += (actual - expected) * (actual - expected);
          stats.reference_squares += expected * expected;
          ++stats.finite;
        }
        if (excess <= 0) continue;
        ++stats.bad;
        stats.max_error = std::max(stats.max_error, std::fabs(actual - expected));  // NaN-safe: max ignores a NaN rhs
        const Mismatch mismatch{segment.shape_index, segment.input_set, arg.name, i, expected, actual};
        ShapeFailure& failure = st.failures[segment.shape_index];
        failure.sets.insert(segment.input_set);
        if (excess > failure.worst_excess) {
          failure.worst_excess = excess;
          failure.worst = mismatch;
        }
        st.worst.emplace_back(excess, mismatch);
        if (st.worst.size() > 8 * max_mismatches_ + 64) {
          std::partial_sort(st.worst.begin(), st.worst.begin() + static_cast<std::ptrdiff_t>(max_mismatches_),
                            st.worst.end(), [](const auto& x, const auto& y) { return x.first > y.first; });
          st.worst.resize(max_mismatches_);
        }
      }
    }
  });
  const double l2_error = std::sqrt(stats.error_squares), l2_reference = std::sqrt(stats.reference_squares);
  if (stats.bad == 0 && l2_error > L2Bound(l2_reference, stats.finite, tolerance_)) {
    const std::string line = "relative L2 error " + Number(l2_error / l2_reference) +
                             " exceeds half the tolerance on shape " + job_.shapes[segment.shape_index].label +
                             ", set " + std::to_string(segment.input_set) + ", " + arg.name;
    if (st.l2_failure.empty()) st.l2_failure = line;
    st.comparison.details += line + "\n";
  }
  if (stats.bad > 0) {
    st.comparison.details += "shape " + job_.shapes[segment.shape_index].label + ", set " +
                             std::to_string(segment.input_set) + ", " + arg.name + ": " + std::to_string(stats.bad) +
                             " of " + std::to_string(arg.count) + " elements differ (max abs err " +
                             Number(stats.max_error) + ")\n";
  }
}

OutputComparison OutputComparer::Finish() {
  State& st = *state_;
  OutputComparison comparison = std::move(st.comparison);
  if (st.failures.empty() && !st.l2_failure.empty()) {
    comparison.ok = false;
    comparison.reason = st.l2_failure;
  }
  if (st.failures.empty()) return comparison;

  std::stable_sort(st.worst.begin(), st.worst.end(), [](const auto& x, const auto& y) { return x.first > y.first; });
  for (std::size_t i = 0; i < st.worst.size() && i < max_mismatches_; ++i) comparison.worst.push_back(st.worst[i].second);
  const auto& [shape_index, failure] = *st.failures.begin();
  const Mismatch& m = failure.worst;
  comparison.ok = false;
  comparison.reason = std::to_string(failure.sets.size()) + " of " + std::to_string(job_.input_sets) +
                      " input sets differ on shape " + job_.shapes[shape_index].label + "; ";
  const std::string where = m.arg + "[" + std::to_string(m.index) + "]";
  if (std::isfinite(m.actual)) {
    comparison.reason += "max abs err " + Number(std::fabs(m.actual - m.expected)) + " at " + where;
  } else {
    comparison.reason += where + " is " + Number(m.actual) + ", expected " + Number(m.expected);
  }
  if (st.failures.size() > 1) comparison.reason += " (and " + std::to_string(st.failures.size() - 1) + " more shapes)";
  return comparison;
}

std::int64_t FirstMismatch(ScalarType type, const std::byte* actual, const std::byte* expected, std::int64_t count,
                           const Tolerance& tolerance) {
  if (std::memcmp(actual, expected, static_cast<std::size_t>(count) * SizeOf(type)) == 0) return -1;
  return WithType(type, [&](auto t) -> std::int64_t {
    constexpr ScalarType kType = decltype(t)::value;
    for (std::int64_t begin = 0; begin < count; begin += kBlock) {
      const std::int64_t end = std::min(count, begin + kBlock);
      if (BlockPasses<kType>(expected, actual, begin, end, tolerance, nullptr)) continue;
      for (std::int64_t i = begin; i < end; ++i) {
        if (Excess(Load<kType>(expected, i), Load<kType>(actual, i), tolerance) > 0) return i;
      }
    }
    return -1;
  });
}

Result<OutputComparison> CompareOutputs(const Job& job, const std::filesystem::path& reference_file,
                                        const std::filesystem::path& candidate_file, const Tolerance& tolerance,
                                        std::size_t max_mismatches) {
  const auto segments = OutputSegments(job);
  const std::uint64_t expected_size = ExpectedSize(segments);
  if (auto checked = CheckSize(reference_file, expected_size); !checked) return Fail(checked.error());
  if (auto checked = CheckSize(candidate_file, expected_size); !checked) return Fail(checked.error());
  std::ifstream reference_in(reference_file, std::ios::binary);
  std::ifstream candidate_in(candidate_file, std::ios::binary);
  OutputComparer comparer(job, tolerance, max_mismatches);
  std::vector<std::byte> expected_bytes, actual_bytes;
  for (const auto& segment : segments) {
    if (!ReadSegment(reference_in, segment, expected_bytes) || !ReadSegment(candidate_in, segment, actual_bytes)) {
      return Fail(Error::Io("cannot read the output files in " + candidate_file.parent_path().string()));
    }
    comparer.Add(segment, expected_bytes.data(), actual_bytes.data());
  }
  return comparer.Finish();
}

Status SliceOutputs(const Job& from, const std::filesystem::path& from_file, const Job& to,
                    const std::filesystem::path& to_file) {
  const auto from_segments = OutputSegments(from);
  if (auto checked = CheckSize(from_file, ExpectedSize(from_segments)); !checked) return Fail(checked.error());
  std::ifstream in(from_file, std::ios::binary);
  std::ofstream out(to_file, std::ios::binary | std::ios::trunc);
  std::vector<std::byte> bytes;
  for (const auto& wanted : OutputSegments(to)) {
    const auto source = std::find_if(from_segments.begin(), from_segments.end(), [&](const OutputSegment& s) {
      return s.shape_index == wanted.shape_index && s.input_set == wanted.input_set && s.arg_index == wanted.arg_index;
    });
    if (source == from_segments.end() || source->bytes != wanted.bytes) {
      return Fail(Error::InvalidArgument("SliceOutputs: the layouts do not match"));
    }
    if (!ReadSegment(in, *source, bytes)) return Fail(Error::Io("cannot read " + from_file.string()));
    out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
  }
  out.close();
  if (!out) return Fail(Error::Io("cannot write " + to_file.string()));
  return {};
}

Status CheckReferenceVaries(const Job& job, const std::filesystem::path& reference_file, const Tolerance& tolerance,
                            int timed_shapes) {
  const auto segments = OutputSegments(job);
  if (auto checked = CheckSize(reference_file, ExpectedSize(segments)); !checked) return Fail(checked.error());
  std::ifstream in(reference_file, std::ios::binary);
  std::vector<std::byte> bytes;
  for (int s = 0; s < timed_shapes && s < static_cast<int>(job.shapes.size()); ++s) {
    const auto& args = job.shapes[s].args;
    for (int a = 0; a < static_cast<int>(args.size()); ++a) {
      if (args[a].role != ArgRole::kOutput && args[a].role != ArgRole::kInOut) continue;
      // Pass 1: the middle of the range, the best constant; pass 2: would it pass?
      double lo = std::numeric_limits<double>::infinity(), hi = -lo;
      bool constant_passes = true;
      for (int pass = 0; pass < 2 && constant_passes; ++pass) {
        const double middle = (lo + hi) / 2;
        for (const auto& segment : segments) {
          if (segment.shape_index != s || segment.arg_index != a) continue;
          if (!ReadSegment(in, segment, bytes)) return Fail(Error::Io("cannot read " + reference_file.string()));
          for (std::int64_t i = 0; i < args[a].count && constant_passes; ++i) {
            const double value = ElementAt(args[a].type, bytes.data(), i);
            if (pass == 0) {
              lo = std::min(lo, value);
              hi = std::max(hi, value);
            } else {
              constant_passes = Excess(value, middle, tolerance) <= 0;
            }
          }
        }
        if (pass == 0 && !(lo <= hi)) constant_passes = false;  // empty or all NaN: nothing to say
      }
      if (constant_passes) {
        return Fail(Error::InvalidArgument("the reference's output " + args[a].name + " on shape " +
                                           job.shapes[s].label + " is (near-)constant around " +
                                           Number((lo + hi) / 2) + ": a constant kernel would pass"));
      }
    }
  }
  return {};
}

}  // namespace kestrel
