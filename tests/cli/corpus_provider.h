#pragma once
// A stand-in LLM provider on loopback that answers like real models do: each
// reply is drawn from a corpus (the parent unchanged, an earlier kernel, the
// same code with other knob declarations, the seed, code for another
// signature, several code blocks, no code, a truncated reply, an empty one,
// megabytes of prose, invalid UTF-8, a new kernel that is faster, wrong or
// does not compile). It speaks both wire formats (POST /v1/chat/completions,
// POST /v1/messages) and counts the requests it answered.
//
// Kernels carry markers the property test's harness reads:
// `// fake:speed X` (its speedup), `// fake:wrong`, `// fake:broken`.

#include <cstdint>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include <httplib.h>
#include <nlohmann/json.hpp>

namespace kestrel::testing {

// The task's seed: a knob U, the entry axpy.
inline constexpr char kCorpusSeed[] = R"(// kestrel:knob U 1 2
#include <cstdint>
void axpy(const float* x, float* y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) y[i] = 2.0f * x[i] + 1.0f;
}
)";

enum class ReplyKind {
  kParent, kEarlier, kOtherKnobs, kSeed, kOtherSignature, kTwoBlocks, kNoCode, kTruncated,
  kEmpty, kMegabytes, kInvalidUtf8, kFaster, kWrong, kBroken, kCount
};

class CorpusProvider {
 public:
  explicit CorpusProvider(std::uint64_t seed) : rng_(seed) {
    sources_.push_back(kCorpusSeed);
    server_.new_task_queue = [] { return new httplib::ThreadPool(8); };
    server_.Post("/v1/chat/completions", [this](const httplib::Request& request, httplib::Response& response) {
      Answer(request, response, false);
    });
    server_.Post("/v1/messages", [this](const httplib::Request& request, httplib::Response& response) {
      Answer(request, response, true);
    });
    port_ = server_.bind_to_any_port("127.0.0.1");
    thread_ = std::thread([this] { server_.listen_after_bind(); });
    while (!server_.is_running()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  ~CorpusProvider() {
    server_.stop();
    thread_.join();
  }
  CorpusProvider(const CorpusProvider&) = delete;
  CorpusProvider& operator=(const CorpusProvider&) = delete;

  std::string BaseUrl() const { return "http://127.0.0.1:" + std::to_string(port_) + "/v1"; }
  std::int64_t requests() const {
    std::lock_guard lock(mutex_);
    return requests_;
  }
  // How many replies of each kind were sent.
  std::vector<int> kinds_sent() const {
    std::lock_guard lock(mutex_);
    return kinds_;
  }

 private:
  // The parent's source as the prompt carries it (a mutation or a fix prompt).
  static std::string ParentOf(const std::string& prompt) {
    for (const char* heading : {"## Current version (the parent)\n```cpp\n", "## A version that failed\n```cpp\n"}) {
      const auto start = prompt.find(heading);
      if (start == std::string::npos) continue;
      const auto begin = start + std::string(heading).size();
      const auto end = prompt.find("```\n", begin);
      if (end != std::string::npos) return prompt.substr(begin, end - begin);
    }
    return kCorpusSeed;
  }

  static std::string Block(const std::string& code) { return "```cpp\n" + code + "```\n"; }

  std::string Kernel(const std::string& marker) {
    return "// kestrel:knob U 1 2 4\n// " + marker + " variant " + std::to_string(++variants_) +
           "\n#include <cstdint>\nvoid axpy(const float* x, float* y, int64_t n) {\n"
           "  for (int64_t i = 0; i < n; ++i) y[i] = 2.0f * x[i] + 1.0f;\n}\n";
  }

  // The reply's text and whether it was cut at the token limit; `raw`: bytes
  // to splice into the JSON body unescaped (invalid UTF-8).
  std::string Content(ReplyKind kind, const std::string& parent, bool& truncated, std::string& raw) {
    std::uniform_int_distribution<std::size_t> pick_source(0, sources_.size() - 1);
    switch (kind) {
      case ReplyKind::kParent: return "Here it is, already optimal:\n" + Block(parent);
      case ReplyKind::kEarlier: return Block(sources_[pick_source(rng_)]);
      case ReplyKind::kOtherKnobs: {
        std::string code = sources_[pick_source(rng_)];
        const auto knob = code.find("// kestrel:knob U ");
        if (knob != std::string::npos) {
          code.replace(knob, code.find('\n', knob) - knob, "// kestrel:knob U 2 1");
        } else {
          code = "// kestrel:knob U 1 2\n" + code;
        }
        sources_.push_back(code);
        return "Tunable now:\n" + Block(code);
      }
      case ReplyKind::kSeed: return Block(kCorpusSeed);
      case ReplyKind::kOtherSignature:
        return Block("#include <cstdint>\nvoid saxpy(float a, const float* x, float* y, int n) {\n"
                     "  for (int i = 0; i < n; ++i) y[i] += a * x[i];\n}\n");
      case ReplyKind::kTwoBlocks: {
        const std::string first = Kernel("fake:speed 1.1"), second = Kernel("fake:speed 1.3");
        sources_.push_back(second);
        return "First try:\n" + Block(first) + "Better:\n" + Block(second) + "Or in Python:\n```python\nprint(1)\n```\n";
      }
      case ReplyKind::kNoCode: return "I would vectorize the loop with AVX2 and unroll it by four.";
      case ReplyKind::kTruncated:
        truncated = true;
        return "```cpp\n" + Kernel("fake:speed 1.9").substr(0, 90);
      case ReplyKind::kEmpty: return "";
      case ReplyKind::kMegabytes: {
        std::string text;
        while (text.size() < (3u << 20)) text += "Consider the memory hierarchy carefully. ";
        return text + "\n" + Block(Kernel("fake:speed 1.2"));
      }
      case ReplyKind::kInvalidUtf8:
        raw = "\xff\xfe\xc3\x28 caf\xe9 ";
        return "@RAW@\n" + Block("// \xff\xfe\n" + Kernel("fake:speed 1.4"));
      case ReplyKind::kFaster: {
        std::uniform_int_distribution<int> tenths(11, 30);
        const std::string code = Kernel("fake:speed " + std::to_string(tenths(rng_) / 10.0).substr(0, 3));
        sources_.push_back(code);
        return "Faster:\n" + Block(code);
      }
      case ReplyKind::kWrong: {
        const std::string code = Kernel("fake:wrong");
        sources_.push_back(code);
        return Block(code);
      }
      case ReplyKind::kBroken: return Block(Kernel("fake:broken"));
      case ReplyKind::kCount: break;
    }
    return "";
  }

  void Answer(const httplib::Request& request, httplib::Response& response, bool anthropic) {
    std::string prompt;
    try {
      const auto body = nlohmann::json::parse(request.body);
      if (anthropic) prompt += body.value("system", "");
      for (const auto& message : body.at("messages")) prompt += message.at("content").get<std::string>();
    } catch (const nlohmann::json::exception&) {
      response.status = 400;
      response.set_content(R"({"error":{"message":"bad request","type":"invalid_request_error"}})", "application/json");
      return;
    }
    bool truncated = false;
    std::string raw, content;
    {
      std::lock_guard lock(mutex_);
      ++requests_;
      if (kinds_.empty()) kinds_.assign(static_cast<std::size_t>(ReplyKind::kCount), 0);
      // Replies that make a new kernel (and so an evaluation, the slow part)
      // weigh 1, duplicates 2, the rest 4: many expansions, few evaluations.
      std::discrete_distribution<int> pick({2, 2, 1, 2, 4, 1, 4, 4, 4, 1, 4, 1, 1, 1});
      const auto kind = static_cast<ReplyKind>(pick(rng_));
      ++kinds_[static_cast<std::size_t>(kind)];
      content = Content(kind, ParentOf(prompt), truncated, raw);
    }
    // Invalid UTF-8 cannot go through nlohmann::json: spliced in afterwards.
    std::string safe = content;
    for (char& c : safe) {
      if (static_cast<unsigned char>(c) >= 0x80) c = '?';
    }
    nlohmann::json body =
        anthropic ? nlohmann::json{{"type", "message"},
                                   {"content", {{{"type", "text"}, {"text", safe}}}},
                                   {"stop_reason", truncated ? "max_tokens" : "end_turn"},
                                   {"usage", {{"input_tokens", 800}, {"output_tokens", 120}}}}
                  : nlohmann::json{{"choices", {{{"message", {{"role", "assistant"}, {"content", safe}}},
                                                 {"finish_reason", truncated ? "length" : "stop"}}}},
                                   {"usage", {{"prompt_tokens", 800}, {"completion_tokens", 120}}}};
    std::string text = body.dump();
    if (content != safe) {
      // Put the original bytes back: the reply is invalid UTF-8 on the wire.
      const std::string escaped_safe = nlohmann::json(safe).dump();
      std::string escaped = escaped_safe;
      const auto at = escaped.find("@RAW@");
      if (at != std::string::npos) escaped.replace(at, 5, raw);
      const auto where = text.find(escaped_safe);
      if (where != std::string::npos) text.replace(where, escaped_safe.size(), escaped);
    }
    response.status = 200;
    response.set_content(text, "application/json");
  }

  httplib::Server server_;
  std::thread thread_;
  int port_ = 0;
  mutable std::mutex mutex_;
  std::mt19937_64 rng_;
  std::vector<std::string> sources_;  // every kernel handed out that may come back
  int variants_ = 0;
  std::int64_t requests_ = 0;
  std::vector<int> kinds_;
};

}  // namespace kestrel::testing
