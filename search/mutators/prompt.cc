#include "search/mutators/prompt.h"

#include <fmt/format.h>

namespace kestrel {
namespace {

constexpr char kSystem[] =
    "You are an expert performance engineer who writes fast, correct compute kernels in C++17. "
    "You change one kernel at a time and always answer with the complete source file.";

constexpr char kAnalystSystem[] =
    "You are an expert performance engineer who reads profiles of compute kernels and says what limits them "
    "and what to change. You answer in JSON only and write no code.";

constexpr char kPlannerSystem[] =
    "You are an expert performance engineer who plans changes to compute kernels before they are written. "
    "You answer with a short plan and no code.";

std::string HostSection(const HostInfo& host, int threads) {
  std::string text = "## Hardware\n";
  if (!host.cpu_model.empty()) text += fmt::format("- CPU: {}\n", host.cpu_model);
  if (host.cores > 0) text += fmt::format("- cores: {}\n", host.cores);
  if (!host.isa.empty()) text += fmt::format("- ISA: {}\n", host.isa);
  if (host.l1d_bytes || host.l2_bytes || host.l3_bytes) {
    text += fmt::format("- caches: L1d {} KiB, L2 {} KiB, L3 {} KiB\n", host.l1d_bytes / 1024, host.l2_bytes / 1024,
                        host.l3_bytes / 1024);
  }
  text += threads > 1 ? fmt::format("- the kernel may use up to {} threads (std::thread)\n", threads)
                      : std::string("- the kernel must stay single-threaded\n");
  return text;
}

std::string TaskSection(const Task& task) {
  std::string text = fmt::format("## Task: {}\n{}\n\nThe kernel must define exactly this function:\n```cpp\n{}\n```\n",
                                 task.name, task.description, task.Signature());
  if (!task.shapes.empty()) {
    text += "Timed shapes:";
    for (const Shape& shape : task.shapes) text += " [" + ToString(shape) + "]";
    text += "\n";
  }
  if (!task.check_shapes.empty()) {
    text += "Also checked (not timed) on:";
    for (const Shape& shape : task.check_shapes) text += " [" + ToString(shape) + "]";
    text += "\n";
  }
  text += fmt::format("Outputs must match the reference within |out-ref| <= {:g} + {:g}*|ref| elementwise.\n",
                      task.tolerance.atol, task.tolerance.rtol);
  text += fmt::format("\nReference implementation ({}):\n```cpp\n{}\n```\n", task.reference.name, task.reference.text);
  return text;
}

std::string SourceBlock(const Candidate& candidate) {
  std::string text = "```cpp\n" + candidate.source;
  if (!candidate.source.empty() && candidate.source.back() != '\n') text += "\n";
  text += "```\n";
  if (!candidate.knobs.empty()) text += "Knob values of this version: " + ToString(candidate.knobs) + "\n";
  return text;
}

constexpr char kOutputFormat[] =
    "## Output format\n"
    "Answer with exactly one fenced code block (```cpp ... ```) holding the complete kernel file: "
    "includes, helpers and the entry function with the exact signature above. No other code blocks. "
    "You may declare tunable compile-time constants as knobs with a line `// kestrel:knob NAME v1 v2 ...` "
    "(the first value is the default; the file is compiled with -DNAME=value, so guard a default with "
    "#ifndef NAME).\n";

// The request every prompt makes: the system prompt and one user message.
LlmRequest UserRequest(std::string user, int max_tokens, double temperature) {
  LlmRequest request;
  request.system = kSystem;
  request.messages = {{"user", std::move(user)}};
  request.max_tokens = max_tokens;
  request.temperature = temperature;
  return request;
}

}  // namespace

const std::vector<std::string>& MutationDirections() {
  static const std::vector<std::string> directions = {
      "vectorize",   "tile for cache", "reorder loops", "fuse passes", "unroll", "reduce precision where the tolerance allows",
      "use threads where allowed"};
  return directions;
}

std::string TrimLog(std::string_view log, std::size_t max_lines, std::size_t max_chars) {
  std::string out;
  std::size_t lines = 0;
  std::size_t start = 0;
  while (start < log.size() && lines < max_lines) {
    std::size_t end = log.find('\n', start);
    if (end == std::string_view::npos) end = log.size();
    out.append(log.substr(start, end - start));
    out += '\n';
    ++lines;
    start = end + 1;
  }
  if (out.size() > max_chars) out.resize(max_chars);
  if (start < log.size() || out.size() == max_chars) out += "[... trimmed]\n";
  return out;
}

namespace {

// The compiler and flags the parent is built with.
std::string BuildSection(const Candidate& parent) {
  if (parent.toolchain.empty() && parent.flags.empty()) return {};
  std::string text = "\n## Build\n";
  if (!parent.toolchain.empty()) text += "- compiler: " + parent.toolchain + "\n";
  if (!parent.flags.empty()) {
    std::string flags;
    for (const std::string& flag : parent.flags) flags += (flags.empty() ? "" : " ") + flag;
    text += "- flags: " + flags + "\n";
  }
  return text;
}

// Where the parent stands: roofline, baseline, profile digest.
std::string StandingSection(const MutationPromptInput& input) {
  std::string text;
  if (!input.bound.empty() || input.roofline_fraction > 0) {
    text += fmt::format("- roofline: {:.0f}% of the {} roof reached\n", 100.0 * input.roofline_fraction,
                        input.bound.empty() ? std::string("host's") : input.bound);
  }
  if (input.baseline_speedup > 0) {
    text += fmt::format("- the expert baseline runs {:.2f}x faster than the reference\n", input.baseline_speedup);
  }
  if (!input.profile_digest.empty()) {
    text += "- profile:\n```\n" + input.profile_digest;
    if (input.profile_digest.back() != '\n') text += "\n";
    text += "```\n";
  }
  return text.empty() ? text : "\n## Where the parent stands\n" + text;
}

// Everything a mutation, a plan and an analysis share: hardware, task, the
// parent, its standing, its lineage, strong versions and recent failures.
std::string ParentContext(const MutationPromptInput& input) {
  std::string user = HostSection(input.host, input.threads) + "\n" + TaskSection(*input.task);
  user += BuildSection(input.parent);
  user += "\n## Current version (the parent)\n" + SourceBlock(input.parent);
  if (!input.measurement.empty()) user += "Its latest measurement: " + input.measurement + "\n";
  user += StandingSection(input);
  if (!input.lineage.empty()) {
    user += "\n## What its lineage already tried (seed first)\n";
    for (const LineageEntry& step : input.lineage) user += "- " + step.mutation + ": " + step.result + "\n";
  }
  if (!input.inspirations.empty()) {
    user += "\n## Other strong versions, for inspiration (ranked by speedup over the reference)\n";
    for (const Inspiration& other : input.inspirations) {
      user += fmt::format("Rank {}: {:.2f}x ({})\n```cpp\n{}\n```\n", other.rank, other.speedup, other.mutation,
                          other.source);
    }
  }
  if (!input.recent_failures.empty()) {
    user += "\n## Recent failures to avoid\n";
    for (const std::string& failure : input.recent_failures) user += "- " + failure + "\n";
  }
  return user;
}

std::string DirectionSection(const MutationPromptInput& input) {
  if (!input.recommendation) {
    return "\n## Direction\nMake the parent faster. Focus on this idea: " + input.direction +
           ". Keep the results within the tolerance.\n";
  }
  std::string text = fmt::format(
      "\n## Direction\nMake the parent faster. The performance analysis of the parent recommends this change "
      "(recommendation {} of {}): {}\n",
      input.rank, input.recommendations, input.recommendation->change);
  if (!input.recommendation->expected_gain.empty()) text += "Expected gain: " + input.recommendation->expected_gain + "\n";
  return text + "Keep the results within the tolerance.\n";
}

}  // namespace

LlmRequest WithGuidance(LlmRequest request, const HumanGuidance& human) {
  if (human.empty() || request.messages.empty()) return request;
  std::string text;
  if (!human.instructions.empty()) {
    text += "\n## Instructions from the person running this search\nFollow these in every version you write:\n";
    for (const std::string& instruction : human.instructions) text += "- " + instruction + "\n";
  }
  if (!human.notes.empty()) {
    text += "\n## Notes of the person running this search on this lineage\n";
    for (const std::string& note : human.notes) text += "- " + note + "\n";
  }
  if (!human.rejections.empty()) {
    text += "\n## Proposals for this parent that the person rejected, and why\nDo not repeat them:\n";
    for (const std::string& reason : human.rejections) text += "- " + reason + "\n";
  }
  request.messages.back().content += text;
  return request;
}

namespace {
constexpr std::string_view kVersionMark = " (version ";
}  // namespace

std::string VersionLabel(std::string_view mutation, std::size_t index, std::size_t count) {
  if (count == 1) return std::string(mutation);
  return fmt::format("{}{}{} of {})", mutation, kVersionMark, index + 1, count);
}

std::string WithPrediction(std::string_view label, double speedup) {
  if (label.find(kVersionMark) != std::string_view::npos && label.ends_with(')')) {
    return fmt::format("{}, {:.2f}x predicted)", label.substr(0, label.size() - 1), speedup);
  }
  return fmt::format("{} ({:.2f}x predicted)", label, speedup);
}

std::string_view WithoutVersion(std::string_view mutation) {
  if (const std::size_t version = mutation.find(kVersionMark); version != std::string_view::npos) {
    return mutation.substr(0, version);
  }
  if (mutation.ends_with("x predicted)")) return mutation.substr(0, mutation.rfind(" ("));  // a lone version's
  return mutation;
}

LlmRequest MutationPrompt(const MutationPromptInput& input) {
  std::string user = ParentContext(input) + DirectionSection(input);
  if (!input.plan.empty()) user += "\n## Plan to implement\n" + input.plan + "\n";
  user += "\n";
  if (input.variants > 1) {
    user += fmt::format(
        "## Output format\n"
        "Answer with {} fenced code blocks (```cpp ... ```), each a different complete version of the kernel "
        "file: includes, helpers and the entry function with the exact signature above. Make them differ in "
        "the choices that decide speed (tile sizes, unroll factors, vector width, loop order), so that "
        "measuring them tells which is right here; they are built in the order a cost model ranks them. "
        "No other code blocks. You may declare tunable compile-time constants as knobs with a line "
        "`// kestrel:knob NAME v1 v2 ...` (the first value is the default; the file is compiled with "
        "-DNAME=value, so guard a default with #ifndef NAME).\n",
        input.variants);
  } else {
    user += kOutputFormat;
  }
  return UserRequest(std::move(user), input.max_tokens, input.temperature);
}

LlmRequest PlanPrompt(const MutationPromptInput& input) {
  std::string user = ParentContext(input) + DirectionSection(input);
  user += "\n## Request\nDo not write code yet. Give a short numbered plan (at most 8 steps) of the changes "
          "that make the parent faster in this direction, each step one line naming the loop or data it changes.\n";
  LlmRequest request = UserRequest(std::move(user), input.max_tokens, input.temperature);
  request.system = kPlannerSystem;
  return request;
}

LlmRequest AnalysisPrompt(const MutationPromptInput& input) {
  std::string user = ParentContext(input);
  user += fmt::format(
      "\n## Request\nYou are the performance analyst: do not write code. From the profile, the roofline "
      "position and the code, name the bottlenecks of the parent, with the numbers that show them, and "
      "recommend at most {} changes, the most promising first. Answer with exactly one JSON object:\n"
      "```json\n{{\"bottlenecks\": [{{\"name\": \"...\", \"evidence\": \"...\"}}],\n"
      " \"recommendations\": [{{\"change\": \"...\", \"expected_gain\": \"...\"}}]}}\n```\n",
      kMaxRecommendations);
  LlmRequest request = UserRequest(std::move(user), input.max_tokens, input.temperature);
  request.system = kAnalystSystem;
  return request;
}

LlmRequest FixPrompt(const Task& task, const Candidate& source, Outcome outcome, std::string_view reason,
                     std::string_view log, const HostInfo& host, int threads, int max_tokens, double temperature) {
  std::string user = HostSection(host, threads) + "\n" + TaskSection(task);
  user += "\n## A version that failed\n" + SourceBlock(source);
  user += fmt::format("Outcome: {}\nReason: {}\n", ToString(outcome), reason);
  if (!log.empty()) user += "Log (trimmed):\n```\n" + TrimLog(log) + "```\n";
  user += "\n## Request\nFix this version so that it compiles, matches the reference within the tolerance and "
          "stays fast. Give the corrected complete file.\n\n";
  user += kOutputFormat;
  return UserRequest(std::move(user), max_tokens, temperature);
}

LlmRequest CombinePrompt(const Task& task, const CombineParent& first, const CombineParent& second,
                         const HostInfo& host, int threads, int max_tokens, double temperature) {
  std::string user = HostSection(host, threads) + "\n" + TaskSection(task);
  for (const CombineParent* parent : {&first, &second}) {
    user += fmt::format("\n## Version #{}\n", parent->node) + SourceBlock(parent->candidate);
    if (!parent->measurement.empty()) user += "Its latest measurement: " + parent->measurement + "\n";
  }
  user += fmt::format(
      "\n## Request\nCombine versions #{} and #{} into one kernel that takes the best of each: keep the ideas "
      "that make each fast, drop what makes either slow. Keep the results within the tolerance.\n\n",
      first.node, second.node);
  user += kOutputFormat;
  return UserRequest(std::move(user), max_tokens, temperature);
}

}  // namespace kestrel
