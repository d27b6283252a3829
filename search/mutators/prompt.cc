#include "search/mutators/prompt.h"

#include <fmt/format.h>

namespace kestrel {
namespace {

constexpr char kSystem[] =
    "You are an expert performance engineer who writes fast, correct compute kernels in C++17. "
    "You change one kernel at a time and always answer with the complete source file.";

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

LlmRequest MutationPrompt(const MutationPromptInput& input) {
  const Task& task = *input.task;
  std::string user = HostSection(input.host, input.threads) + "\n" + TaskSection(task);
  user += "\n## Current version (the parent)\n" + SourceBlock(input.parent);
  if (!input.measurement.empty()) user += "Its latest measurement: " + input.measurement + "\n";
  if (!input.lineage.empty()) {
    user += "\n## What its lineage already tried (seed first)\n";
    for (const LineageEntry& step : input.lineage) user += "- " + step.mutation + ": " + step.result + "\n";
  }
  if (!input.inspirations.empty()) {
    user += "\n## Other strong versions, for inspiration\n";
    for (const std::string& source : input.inspirations) user += "```cpp\n" + source + "\n```\n";
  }
  if (!input.recent_failures.empty()) {
    user += "\n## Recent failures to avoid\n";
    for (const std::string& failure : input.recent_failures) user += "- " + failure + "\n";
  }
  user += "\n## Direction\nMake the parent faster. Focus on this idea: " + input.direction +
          ". Keep the results within the tolerance.\n\n";
  user += kOutputFormat;
  return UserRequest(std::move(user), input.max_tokens, input.temperature);
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
