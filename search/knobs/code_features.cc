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
};
static_assert(kLiterals + 8 == kCodeFeatureCount);

constexpr std::string_view kNames[kCodeFeatureCount] = {
    "lines_log2",     "statements_log2", "for_loops",      "brace_depth",    "loop_depth",     "omp_parallel",
    "omp_simd",       "unroll_pragmas",  "unroll_factor_log2", "sse_intrinsics", "avx_intrinsics", "avx512_intrinsics",
    "fma",            "restrict",        "alignment_hints", "prefetches",    "threads",        "vector_types",
    "cuda_shared",    "barriers",        "shuffles",       "ldg",            "tensor_cores",   "half_types",
    "constexpr",      "literal_2_3",     "literal_4_7",    "literal_8_15",   "literal_16_31",  "literal_32_63",
    "literal_64_127", "literal_128_255", "literal_256_up",
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
bool CountDirective(std::string_view line, CodeFeatureVector& out) {
  std::size_t at = line.find_first_not_of(" \t#");
  const std::string_view rest = at == std::string_view::npos ? std::string_view() : line.substr(at);
  if (StartsWith(rest, "include")) return false;
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
  for (std::size_t line_start = 0; line_start < code.size();) {
    std::size_t line_end = code.find('\n', line_start);
    if (line_end == std::string::npos) line_end = code.size();
    std::string_view line(code.data() + line_start, line_end - line_start);
    if (line.find_first_not_of(" \t\r") != std::string_view::npos) ++lines;
    const std::size_t first = line.find_first_not_of(" \t");
    if (first != std::string_view::npos && line[first] == '#' && !CountDirective(line, out)) {
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
