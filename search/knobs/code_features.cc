#include "search/knobs/code_features.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

namespace kestrel {
namespace {

enum Feature : std::size_t {
  kLines, kStatements, kForLoops, kBraceDepth, kLoopDepth, kOmpParallel, kOmpSimd, kUnrollPragmas, kUnrollFactor,
  kSse, kAvx, kAvx512, kFma, kRestrict, kAlignment, kPrefetch, kThreads, kVectorTypes, kShared, kBarriers,
  kShuffles, kLdg, kTensorCores, kHalf, kConstexpr, kLiterals,  // kLiterals: the first of 8 buckets
  kConstants = kLiterals + 8,                                   // the first of kConstantSlots
};
constexpr std::size_t kConstantSlots = 16;
static_assert(kConstants + kConstantSlots == kCodeFeatureCount);

constexpr std::string_view kNames[kCodeFeatureCount] = {
    "lines_log2",     "statements_log2", "for_loops",      "brace_depth",    "loop_depth",     "omp_parallel",
    "omp_simd",       "unroll_pragmas",  "unroll_factor_log2", "sse_intrinsics", "avx_intrinsics", "avx512_intrinsics",
    "fma",            "restrict",        "alignment_hints", "prefetches",    "threads",        "vector_types",
    "cuda_shared",    "barriers",        "shuffles",       "ldg",            "tensor_cores",   "half_types",
    "constexpr",      "literal_2_3",     "literal_4_7",    "literal_8_15",   "literal_16_31",  "literal_32_63",
    "literal_64_127", "literal_128_255", "literal_256_up",
    "constant_0",     "constant_1",      "constant_2",     "constant_3",     "constant_4",     "constant_5",
    "constant_6",     "constant_7",      "constant_8",     "constant_9",     "constant_10",    "constant_11",
    "constant_12",    "constant_13",     "constant_14",    "constant_15",
};

// Named integer constants, the first definition of each name.
class Constants {
 public:
  void Define(std::string_view name, std::int64_t value, CodeFeatureVector& out) {
    if (value < 0 || std::find(names_.begin(), names_.end(), name) != names_.end()) return;
    names_.emplace_back(name);
    // FNV-1a: the same slot on every host and build.
    std::uint64_t hash = 1469598103934665603ull;
    for (char c : name) hash = (hash ^ static_cast<unsigned char>(c)) * 1099511628211ull;
    out[kConstants + hash % kConstantSlots] += static_cast<float>(std::log2(2.0 + static_cast<double>(value)));
  }

 private:
  std::vector<std::string> names_;
};

bool IsIdentStart(char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_'; }
bool IsIdentChar(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }
bool StartsWith(std::string_view text, std::string_view prefix) { return text.substr(0, prefix.size()) == prefix; }
bool Contains(std::string_view text, std::string_view part) { return text.find(part) != std::string_view::npos; }

// The source with comments, string and character literals blanked (newlines kept).
std::string Code(std::string_view source) {
  std::string code(source);
  for (std::size_t i = 0; i < code.size();) {
    if (code.compare(i, 2, "//") == 0) {
      while (i < code.size() && code[i] != '\n') code[i++] = ' ';
    } else if (code.compare(i, 2, "/*") == 0) {
      const std::size_t end = std::min(code.size(), code.find("*/", i + 2) == std::string::npos
                                                        ? code.size()
                                                        : code.find("*/", i + 2) + 2);
      for (; i < end; ++i) {
        if (code[i] != '\n') code[i] = ' ';
      }
    } else if (code[i] == '"' || (code[i] == '\'' && (i == 0 || !std::isxdigit(static_cast<unsigned char>(code[i - 1]))))) {
      // (a quote after a hex digit is a digit separator: 1'000)
      const char quote = code[i];
      code[i++] = ' ';
      while (i < code.size() && code[i] != quote && code[i] != '\n') {
        if (code[i] == '\\' && i + 1 < code.size()) code[i++] = ' ';
        code[i++] = ' ';
      }
      if (i < code.size() && code[i] == quote) code[i++] = ' ';
    } else {
      ++i;
    }
  }
  return code;
}

// An integer literal's value (decimal, hex, binary; separators and suffixes
// allowed); -1 for a floating one.
std::int64_t IntegerLiteral(std::string_view token) {
  std::string digits;
  for (char c : token) {
    if (c != '\'') digits.push_back(c);
  }
  const bool hex = StartsWith(digits, "0x") || StartsWith(digits, "0X");
  if (!hex && digits.find_first_of(".eE") != std::string::npos) return -1;
  if (digits.find_first_of("pP.") != std::string::npos) return -1;
  try {
    return std::stoll(digits, nullptr, 0);  // a suffix (u, L) ends the number
  } catch (...) {
    return -1;
  }
}

void CountLiteral(std::int64_t value, CodeFeatureVector& out) {
  if (value < 2) return;
  const int log2 = 63 - __builtin_clzll(static_cast<unsigned long long>(value));  // 1 for 2..3
  out[kLiterals + static_cast<std::size_t>(std::min(log2, 8) - 1)] += 1;
}

void CountIdentifier(std::string_view word, CodeFeatureVector& out) {
  if (StartsWith(word, "_mm512_")) out[kAvx512] += 1;
  else if (StartsWith(word, "_mm256_")) out[kAvx] += 1;
  else if (StartsWith(word, "_mm_") && !Contains(word, "prefetch")) out[kSse] += 1;
  if (Contains(word, "fmadd") || Contains(word, "fmsub") || word == "fma" || word == "fmaf" || StartsWith(word, "__fmaf") ||
      StartsWith(word, "__fma_")) {
    out[kFma] += 1;
  }
  if (word == "__restrict" || word == "__restrict__" || word == "restrict") out[kRestrict] += 1;
  if (word == "alignas" || word == "aligned" || word == "__builtin_assume_aligned" || word == "assume_aligned") {
    out[kAlignment] += 1;
  }
  if (Contains(word, "prefetch")) out[kPrefetch] += 1;
  if (word == "thread" || word == "jthread" || word == "pthread_create") out[kThreads] += 1;
  if (word == "float2" || word == "float4" || word == "double2" || word == "int4" || word == "vector_size" ||
      StartsWith(word, "__m128") || StartsWith(word, "__m256") || StartsWith(word, "__m512")) {
    out[kVectorTypes] += 1;
  }
  if (word == "__shared__") out[kShared] += 1;
  if (word == "__syncthreads" || word == "__syncwarp" || word == "barrier") out[kBarriers] += 1;
  if (StartsWith(word, "__shfl")) out[kShuffles] += 1;
  if (word == "__ldg") out[kLdg] += 1;
  if (word == "wmma" || word == "mma_sync" || word == "mma" || StartsWith(word, "__hmma")) out[kTensorCores] += 1;
  if (word == "half" || word == "__half" || word == "__half2" || word == "__nv_bfloat16" || word == "_Float16" ||
      word == "bfloat16") {
    out[kHalf] += 1;
  }
  if (word == "constexpr") out[kConstexpr] += 1;
}

// A preprocessor line: pragmas counted; an #include's text is not code.
// Returns whether the rest of the line is scanned as code.
bool CountDirective(std::string_view line, Constants& constants, CodeFeatureVector& out) {
  std::size_t at = line.find_first_not_of(" \t#");
  const std::string_view rest = at == std::string_view::npos ? std::string_view() : line.substr(at);
  if (StartsWith(rest, "include")) return false;
  if (StartsWith(rest, "define")) {
    // #define NAME 64
    std::string_view words = rest.substr(6);
    const std::size_t name_at = words.find_first_not_of(" \t");
    if (name_at != std::string_view::npos && IsIdentStart(words[name_at])) {
      std::size_t name_end = name_at;
      while (name_end < words.size() && IsIdentChar(words[name_end])) ++name_end;
      const std::size_t value_at = words.find_first_not_of(" \t", name_end);
      if (value_at != std::string_view::npos && name_end < words.size() && words[name_end] != '(') {
        std::size_t value_end = value_at;
        while (value_end < words.size() && (IsIdentChar(words[value_end]) || words[value_end] == '\'')) ++value_end;
        if (words.find_first_not_of(" \t\r", value_end) == std::string_view::npos &&
            std::isdigit(static_cast<unsigned char>(words[value_at]))) {
          constants.Define(words.substr(name_at, name_end - name_at),
                           IntegerLiteral(words.substr(value_at, value_end - value_at)), out);
        }
      }
    }
    return true;
  }
  if (!StartsWith(rest, "pragma")) return true;
  if (Contains(rest, "omp")) {
    if (Contains(rest, "parallel")) out[kOmpParallel] += 1;
    if (Contains(rest, "simd")) out[kOmpSimd] += 1;
  }
  if (Contains(rest, "unroll")) {
    out[kUnrollPragmas] += 1;
    const std::size_t digit = rest.find_first_of("0123456789");
    if (digit != std::string_view::npos) {
      const std::int64_t factor = IntegerLiteral(rest.substr(digit, rest.find_first_not_of("0123456789", digit) - digit));
      if (factor > 0) out[kUnrollFactor] = std::max(out[kUnrollFactor], static_cast<float>(std::log2(factor)));
    } else {
      out[kUnrollFactor] = std::max(out[kUnrollFactor], 5.0f);  // a full unroll
    }
  }
  return false;  // a pragma's words are not identifiers of the code
}

}  // namespace

std::string_view CodeFeatureName(std::size_t index) { return index < kCodeFeatureCount ? kNames[index] : ""; }

CodeFeatureVector CodeFeatures(std::string_view source) {
  CodeFeatureVector out{};
  const std::string code = Code(source);
  std::size_t lines = 0, statements = 0;
  int depth = 0, max_depth = 0;
  std::vector<int> loop_bodies;  // brace depths at which an open loop's body began
  std::size_t max_loops = 0;
  bool loop_header = false;  // after `for`/`while`, before its body's brace
  int header_parens = 0;
  bool constant_declaration = false;  // after const or constexpr, before the statement's end
  Constants constants;
  for (std::size_t line_start = 0; line_start < code.size();) {
    std::size_t line_end = code.find('\n', line_start);
    if (line_end == std::string::npos) line_end = code.size();
    std::string_view line(code.data() + line_start, line_end - line_start);
    if (line.find_first_not_of(" \t\r") != std::string_view::npos) ++lines;
    const std::size_t first = line.find_first_not_of(" \t");
    if (first != std::string_view::npos && line[first] == '#' && !CountDirective(line, constants, out)) {
      line_start = line_end + 1;
      continue;
    }
    for (std::size_t i = 0; i < line.size();) {
      const char c = line[i];
      if (IsIdentStart(c)) {
        std::size_t end = i;
        while (end < line.size() && IsIdentChar(line[end])) ++end;
        const std::string_view word = line.substr(i, end - i);
        CountIdentifier(word, out);
        if (word == "const" || word == "constexpr") constant_declaration = true;
        if (constant_declaration) {
          // NAME = 64; (or , or } after the literal)
          std::size_t at = line.find_first_not_of(" \t", end);
          if (at != std::string_view::npos && line[at] == '=' && (at + 1 == line.size() || line[at + 1] != '=')) {
            const std::size_t value_at = line.find_first_not_of(" \t", at + 1);
            if (value_at != std::string_view::npos && std::isdigit(static_cast<unsigned char>(line[value_at]))) {
              std::size_t value_end = value_at;
              while (value_end < line.size() && (IsIdentChar(line[value_end]) || line[value_end] == '\'')) ++value_end;
              const std::size_t after = line.find_first_not_of(" \t", value_end);
              if (after != std::string_view::npos && (line[after] == ';' || line[after] == ',' || line[after] == '}')) {
                constants.Define(word, IntegerLiteral(line.substr(value_at, value_end - value_at)), out);
              }
            }
          }
        }
        if (word == "for" || word == "while") {
          if (word == "for") out[kForLoops] += 1;
          loop_header = true;
          header_parens = 0;
        }
        i = end;
      } else if (std::isdigit(static_cast<unsigned char>(c))) {
        std::size_t end = i;
        while (end < line.size() && (IsIdentChar(line[end]) || line[end] == '.' || line[end] == '\'' ||
                                     ((line[end] == '+' || line[end] == '-') && (line[end - 1] == 'e' || line[end - 1] == 'E')))) {
          ++end;
        }
        CountLiteral(IntegerLiteral(line.substr(i, end - i)), out);
        i = end;
      } else {
        if (c == '(' && loop_header) ++header_parens;
        if (c == ')' && loop_header) --header_parens;
        if (c == ';' || c == '{' || c == ')') constant_declaration = false;
        if (c == ';' && !(loop_header && header_parens > 0)) {
          ++statements;
          if (loop_header && header_parens == 0) loop_header = false;  // a body of one statement
        }
        if (c == '{') {
          ++depth;
          max_depth = std::max(max_depth, depth);
          if (loop_header && header_parens == 0) {
            loop_bodies.push_back(depth);
            max_loops = std::max(max_loops, loop_bodies.size());
            loop_header = false;
          }
        }
        if (c == '}') {
          while (!loop_bodies.empty() && loop_bodies.back() >= depth) loop_bodies.pop_back();
          depth = std::max(0, depth - 1);
        }
        ++i;
      }
    }
    line_start = line_end + 1;
  }
  // A loop whose body is one statement nests one deeper than its parent loop.
  if (out[kForLoops] > 0) max_loops = std::max<std::size_t>(max_loops, 1);
  out[kLines] = static_cast<float>(std::log2(1.0 + static_cast<double>(lines)));
  out[kStatements] = static_cast<float>(std::log2(1.0 + static_cast<double>(statements)));
  out[kBraceDepth] = static_cast<float>(max_depth);
  out[kLoopDepth] = static_cast<float>(max_loops);
  return out;
}

}  // namespace kestrel
