#include "evaluators/runner_pool.h"

#include <fstream>
#include <sstream>
#include <utility>

#include <nlohmann/json.hpp>

namespace kestrel {
namespace {

constexpr std::size_t kIdleKept = 4;  // idle supervisors kept (each holds its regions)

std::string KeyOf(const SubprocessOptions& options) {
  std::string key;
  for (const auto& part : options.argv) key += part + '\n';
  key += '\n';
  for (const auto& part : options.env) key += part + '\n';
  return key + std::to_string(options.cpu_limit_s) + ' ' + std::to_string(options.memory_limit_bytes);
}

// The job's log, trimmed as RunSubprocess trims one (head and tail).
std::string ReadLog(const std::filesystem::path& file, std::size_t limit) {
  std::ifstream in(file, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  std::string log = text.str();
  if (log.size() <= limit) return log;
  const std::size_t head = limit - limit / 4, tail = limit / 4;
  return log.substr(0, head) + "\n[... " + std::to_string(log.size() - head - tail) + " bytes omitted ...]\n" +
         log.substr(log.size() - tail);
}

}  // namespace

RunnerPool::~RunnerPool() = default;

int RunnerPool::started() const {
  std::lock_guard lock(mutex_);
  return started_;
}

Result<SubprocessResult> RunnerPool::Run(const SubprocessOptions& options) {
  const std::string key = KeyOf(options);
  std::unique_ptr<ServedProcess> served;
  {
    std::lock_guard lock(mutex_);
    // One that died while idle (killed by someone else, the OOM killer) is
    // dropped here, not blamed on the next candidate.
    std::erase_if(idle_, [](Kept& kept) { return !kept.process->Alive(); });
    for (auto it = idle_.begin(); it != idle_.end(); ++it) {
      if (it->key != key) continue;
      served = std::move(it->process);
      idle_.erase(it);
      break;
    }
  }
  if (!served) {
    SubprocessOptions start = options;
    start.argv.push_back("--serve");
    start.file_size_limit_bytes = 0;  // each job sets its own
    int number = 0;
    {
      std::lock_guard lock(mutex_);
      number = started_++;
    }
    std::error_code ignored;
    std::filesystem::create_directories(log_dir_, ignored);
    auto made = ServedProcess::Start(start, log_dir_ / ("runner-" + std::to_string(number) + ".log"));
    if (!made) return Fail(made.error());
    served = std::move(*made);
  }
  const nlohmann::json request = {{"dir", std::filesystem::absolute(options.cwd).string()},
                                  {"file_size_limit", options.file_size_limit_bytes},
                                  {"job", options.stdin_data}};
  SubprocessResult ran = served->Request(request.dump(), options.timeout_s);
  ran.log = ReadLog(options.cwd / "runner.log", options.log_limit_bytes);
  bool retire = true;
  if (served->ended()) {
    ran.result.clear();  // a part of an answer is none
  } else {
    // An answer: its job's result, and whether the supervisor stays.
    const auto reply = nlohmann::json::parse(ran.result, nullptr, false);
    if (reply.is_object() && reply.contains("result") && reply["result"].is_string()) {
      ran.result = reply["result"].get<std::string>();
      retire = !reply.contains("retire") || !reply["retire"].is_boolean() || reply["retire"].get<bool>();
    } else {
      ran.result.clear();
      ran.exit_code = 1;
      ran.log += "\nrunner protocol violation: an answer that is not {\"result\": ...}\n";
    }
  }
  if (!retire && !served->ended()) {
    std::lock_guard lock(mutex_);
    if (idle_.size() < kIdleKept) idle_.push_back({key, std::move(served)});
  }
  return ran;
}

}  // namespace kestrel
