// The run config (CONTRACT.md, "Run config"): a valid document round-trips
// through ToJson/ParseRunConfig; every bad field is refused with an
// InvalidArgument naming the origin and the field's path.

#include <doctest.h>

#include <string>

#include <nlohmann/json.hpp>

#include "search/mutators/llm_mutator.h"
#include "search/run_config.h"
#include "testing.h"

using namespace kestrel;
using nlohmann::json;

namespace {

// The CONTRACT.md example, as a user would write it.
json ContractExample(bool with_llm) {
  json mutators = json::array({{{"kind", "knob"}, {"weight", 1}}});
  if (with_llm) {
    mutators.push_back(json::parse(R"({"kind": "llm", "weight": 3, "provider": "openai", "model": "gpt-5",
     "base_url": "https://api.openai.com/v1", "api_key_env": "OPENAI_API_KEY",
     "max_concurrency": 8, "timeout_s": 300, "temperature": 0.7, "max_tokens": 16000,
     "price_per_mtok": {"input": 1.25, "output": 10.0}})"));
  }
  json document = json::parse(R"({
    "task": "softmax",
    "strategy": {"name": "graph-ucb", "exploration": 1.0},
    "evaluator": {"kind": "cpu", "compiler": "c++", "flags": ["-O3", "-march=native"], "threads": 1},
    "budget": {"time": "8h", "evaluations": 5000, "usd": 50, "plateau": 1000},
    "parallel": {"compile_jobs": 2, "measure_slots": 1},
    "max_fix_rounds": 3,
    "seed": 1
  })");
  document["mutators"] = mutators;
  return document;
}

// The error message of parsing `document`; fails the test when it parses.
std::string RefusalOf(const json& document) {
  auto config = ParseRunConfig(document, "runs/bad.json");
  REQUIRE_FALSE(config.has_value());
  CHECK(config.error().IsInvalidArgument());
  return config.error().message();
}

json With(const std::string& json_pointer, const json& value) {
  json document = ContractExample(false);
  document[json::json_pointer(json_pointer)] = value;
  return document;
}

}  // namespace

TEST_SUITE("run_config") {
  TEST_CASE("the CONTRACT.md example with a knob mutator parses to the values it states") {
    auto config = ParseRunConfig(ContractExample(false), "run.json");
    REQUIRE_MESSAGE(config.has_value(), testing::ErrorOf(config));
    CHECK(config->task == "softmax");
    CHECK(config->strategy.name == "graph-ucb");
    CHECK(config->strategy.exploration == doctest::Approx(1.0));
    REQUIRE(config->mutators.size() == 1);
    CHECK(config->mutators[0].kind == "knob");
    CHECK(config->evaluator.compiler == "c++");
    CHECK(config->evaluator.flags == std::vector<std::string>{"-O3", "-march=native"});
    REQUIRE(config->budget.time.has_value());
    CHECK(config->budget.time->count() == doctest::Approx(8 * 3600.0));
    CHECK(config->budget.evaluations == 5000);
    CHECK(config->budget.usd == doctest::Approx(50.0));
    CHECK(config->budget.plateau == 1000);
    CHECK(config->parallel.compile_jobs == 2);
    CHECK(config->parallel.measure_slots == 1);
    CHECK(config->max_fix_rounds == 3);
    CHECK(config->seed == 1u);
    CHECK(Validate(*config, "run.json").has_value());
  }

  TEST_CASE("the example with its llm mutator parses, keeping the key's variable name only") {
    auto config = ParseRunConfig(ContractExample(true), "run.json");
    REQUIRE_MESSAGE(config.has_value(), testing::ErrorOf(config));
    REQUIRE(config->mutators.size() == 2);
    const MutatorConfig& llm = config->mutators[1];
    CHECK(llm.kind == "llm");
    CHECK(llm.weight == doctest::Approx(3.0));
    CHECK(llm.provider == "openai");
    CHECK(llm.model == "gpt-5");
    CHECK(llm.api_key_env == "OPENAI_API_KEY");
    CHECK(llm.max_concurrency == 8);
    CHECK(llm.max_tokens == 16000);
    CHECK(llm.temperature == doctest::Approx(0.7));
    CHECK(llm.price_input_per_mtok == doctest::Approx(1.25));
    CHECK(llm.price_output_per_mtok == doctest::Approx(10.0));
    CHECK(llm.variants == 1);  // one version per rewrite unless asked
  }

  TEST_CASE("an llm mutator's variants parse and round-trip") {
    json document = ContractExample(true);
    document["mutators"][1]["variants"] = 4;
    auto config = ParseRunConfig(document, "run.json");
    REQUIRE_MESSAGE(config.has_value(), testing::ErrorOf(config));
    CHECK(config->mutators[1].variants == 4);
    auto again = ParseRunConfig(ToJson(*config), "stored config");
    REQUIRE_MESSAGE(again.has_value(), testing::ErrorOf(again));
    CHECK(again->mutators[1].variants == 4);
  }

  TEST_CASE("ToJson and ParseRunConfig round-trip a full config") {
    for (bool with_llm : {false, true}) {
      CAPTURE(with_llm);
      auto first = ParseRunConfig(ContractExample(with_llm), "run.json");
      REQUIRE(first.has_value());
      const json written = ToJson(*first);
      auto second = ParseRunConfig(written, "stored config");
      REQUIRE_MESSAGE(second.has_value(), testing::ErrorOf(second));
      CHECK(ToJson(*second) == written);
      CHECK(second->budget.time->count() == doctest::Approx(first->budget.time->count()));
      CHECK(second->budget.evaluations == first->budget.evaluations);
      CHECK(second->mutators.size() == first->mutators.size());
      CHECK(second->evaluator.flags == first->evaluator.flags);
    }
  }

  TEST_CASE("evaluator.flush_cache defaults to off, parses and round-trips") {
    CHECK_FALSE(RunConfig{}.evaluator.flush_cache);
    auto parsed = ParseRunConfig(json{{"task", "softmax"}, {"evaluator", {{"flush_cache", true}}}}, "c.json");
    REQUIRE(parsed.has_value());
    CHECK(parsed->evaluator.flush_cache);
    CHECK(ToJson(*parsed).at("evaluator").at("flush_cache") == true);
  }

  TEST_CASE("evaluator.profile_counters: auto by default, pmu or cachegrind, round-trips, cpu only") {
    CHECK(RunConfig{}.evaluator.profile_counters == "auto");
    auto parsed = ParseRunConfig(json{{"task", "softmax"}, {"evaluator", {{"profile_counters", "cachegrind"}}}}, "c.json");
    REQUIRE_MESSAGE(parsed.has_value(), testing::ErrorOf(parsed));
    CHECK(parsed->evaluator.profile_counters == "cachegrind");
    CHECK(ToJson(*parsed).at("evaluator").at("profile_counters") == "cachegrind");
    auto wrong = ParseRunConfig(json{{"task", "softmax"}, {"evaluator", {{"profile_counters", "perf"}}}}, "c.json");
    REQUIRE_FALSE(wrong.has_value());
    CHECK(wrong.error().message().find("evaluator.profile_counters") != std::string::npos);
    auto cuda = ParseRunConfig(json{{"task", "softmax"}, {"evaluator", {{"kind", "cuda"}, {"profile_counters", "pmu"}}}},
                               "c.json");
    REQUIRE_FALSE(cuda.has_value());
    CHECK(cuda.error().message().find("only for \"cpu\"") != std::string::npos);
  }

  TEST_CASE("evaluator kind command: the shipped example parses and round-trips; each kind refuses the other's fields") {
    auto example = LoadRunConfig(testing::SourceDir() / "examples" / "command" / "poly.json");
    REQUIRE_MESSAGE(example.has_value(), testing::ErrorOf(example));
    CHECK(example->evaluator.kind == "command");
    CHECK(example->evaluator.build.at(1) == "{task_dir}/build.sh");
    CHECK(example->evaluator.run.at(0) == "{build_dir}/bench");
    CHECK(example->evaluator.build_timeout_s == 60);
    const json written = ToJson(*example);
    CHECK_FALSE(written.at("evaluator").contains("compiler"));
    auto again = ParseRunConfig(written, "stored config");
    REQUIRE_MESSAGE(again.has_value(), testing::ErrorOf(again));
    CHECK(ToJson(*again) == written);
    CHECK_FALSE(ToJson(RunConfig{}).at("evaluator").contains("run"));

    const auto refused = [](const json& evaluator, const std::string& expected) {
      auto parsed = ParseRunConfig(json{{"task", "t"}, {"evaluator", evaluator}}, "c.json");
      REQUIRE_FALSE(parsed.has_value());
      CHECK_MESSAGE(parsed.error().message().find(expected) != std::string::npos, parsed.error().message());
    };
    refused({{"kind", "command"}}, "c.json: evaluator.run: expected a non-empty argv array");
    refused({{"kind", "command"}, {"run", {"x"}}, {"compiler", "g++"}},
            "evaluator.compiler: expected no such field for kind \"command\"");
    refused({{"kind", "cpu"}, {"run", {"x"}}}, "evaluator.run: expected no such field for kind \"cpu\"");
    refused({{"kind", "command"}, {"run", "bench {answer}"}}, "evaluator.run");
    refused({{"kind", "cpu"}, {"binds", {"/opt"}}}, "evaluator.binds: expected no such field for kind \"cpu\"");
    refused({{"kind", "cuda"}, {"devices", {"/dev/x"}}}, "evaluator.devices: expected no such field for kind \"cuda\"");
    refused({{"kind", "command"}, {"run", {"x"}}, {"sandbox", "off"}}, "evaluator.sandbox");

    // The run command's sandbox: its fields parse and round-trip.
    json sandboxed = json::parse(testing::ReadFile(testing::SourceDir() / "examples" / "command" / "poly.json"));
    sandboxed["evaluator"]["sandbox"] = "none";
    sandboxed["evaluator"]["binds"] = {"/opt/venv"};
    sandboxed["evaluator"]["devices"] = {"/dev/nvidia*"};
    sandboxed["evaluator"]["pass_env"] = {"CUDA_VISIBLE_DEVICES"};
    auto parsed = ParseRunConfig(sandboxed, "c.json");
    REQUIRE_MESSAGE(parsed.has_value(), testing::ErrorOf(parsed));
    CHECK(parsed->evaluator.sandbox == "none");
    CHECK(parsed->evaluator.binds == std::vector<std::string>{"/opt/venv"});
    CHECK(parsed->evaluator.devices == std::vector<std::string>{"/dev/nvidia*"});
    CHECK(parsed->evaluator.pass_env == std::vector<std::string>{"CUDA_VISIBLE_DEVICES"});
    CHECK(ToJson(*parsed).at("evaluator").at("devices") == json{"/dev/nvidia*"});
    auto round = ParseRunConfig(ToJson(*parsed), "stored");
    REQUIRE_MESSAGE(round.has_value(), testing::ErrorOf(round));
    CHECK(ToJson(*round) == ToJson(*parsed));
  }

  TEST_CASE("executor: local by default; slurm parses, round-trips, and needs the command evaluator and a shared dir") {
    CHECK(RunConfig{}.executor.kind == "local");
    CHECK(ToJson(RunConfig{}).at("executor") == json{{"kind", "local"}});
    json document = json::parse(testing::ReadFile(testing::SourceDir() / "examples" / "command" / "poly.json"));
    document["executor"] = {{"kind", "slurm"},      {"partition", "gpu"},
                            {"gres", "gpu:1"},      {"time_limit", "10:00"},
                            {"queue_limit", "4:00:00"}, {"shared_dir", "/shared/kestrel"},
                            {"sbatch_args", {"--qos=low"}}, {"builds", true}};
    auto parsed = ParseRunConfig(document, "c.json");
    REQUIRE_MESSAGE(parsed.has_value(), testing::ErrorOf(parsed));
    CHECK(parsed->executor.kind == "slurm");
    CHECK(parsed->executor.gres == "gpu:1");
    CHECK(parsed->executor.sbatch_args == std::vector<std::string>{"--qos=low"});
    CHECK(parsed->executor.builds);
    CHECK(parsed->executor.queue_limit == "4:00:00");
    CHECK(ToJson(*parsed).at("executor") == document["executor"]);
    auto again = ParseRunConfig(ToJson(*parsed), "stored");
    REQUIRE(again.has_value());
    CHECK(ToJson(*again) == ToJson(*parsed));

    const auto refused = [](const json& config, const std::string& expected) {
      auto bad = ParseRunConfig(config, "c.json");
      REQUIRE_FALSE(bad.has_value());
      CHECK_MESSAGE(bad.error().message().find(expected) != std::string::npos, bad.error().message());
    };
    // Every evaluator kind runs its measure step through Slurm.
    auto cpu = ParseRunConfig(json{{"task", "t"}, {"executor", {{"kind", "slurm"}, {"shared_dir", "/s"}}}}, "c.json");
    REQUIRE_MESSAGE(cpu.has_value(), testing::ErrorOf(cpu));
    CHECK(cpu->evaluator.kind == "cpu");
    CHECK(cpu->executor.kind == "slurm");
    json no_dir = document;
    no_dir["executor"].erase("shared_dir");
    refused(no_dir, "executor.shared_dir: expected a folder the compute nodes share");
    refused(json{{"task", "t"}, {"executor", {{"kind", "local"}, {"gres", "gpu:1"}}}},
            "executor.gres: expected no such field for kind \"local\"");
    refused(json{{"task", "t"}, {"executor", {{"kind", "pbs"}}}}, "executor.kind");
    // A time limit Slurm would not take, or none: refused here (an
    // over-long one aborted the run from inside the executor).
    for (const char* limit : {"999999999999999999999999", "UNLIMITED", "0", "ten"}) {
      CAPTURE(limit);
      json bad_limit = document;
      bad_limit["executor"]["time_limit"] = limit;
      refused(bad_limit, "executor.time_limit: expected a Slurm time with a limit");
      json bad_queue = document;
      bad_queue["executor"]["queue_limit"] = limit;
      refused(bad_queue, "executor.queue_limit: expected the longest a job may wait in the queue");
    }
    // A config saved before queue_limit: the default, an hour.
    json older = document;
    older["executor"].erase("queue_limit");
    auto old_config = ParseRunConfig(older, "c.json");
    REQUIRE_MESSAGE(old_config.has_value(), testing::ErrorOf(old_config));
    CHECK(old_config->executor.queue_limit == "1:00:00");
    refused(json{{"task", "t"}, {"executor", {{"kind", "local"}, {"queue_limit", "30"}}}},
            "executor.queue_limit: expected no such field for kind \"local\"");
  }

  TEST_CASE("confirm: defaults to the top 3 re-measured twice, parses and round-trips") {
    const RunConfig defaults;
    CHECK(defaults.confirm.top == 3);
    CHECK(defaults.confirm.rounds == 2);
    auto parsed = ParseRunConfig(json{{"task", "softmax"}, {"confirm", {{"top", 5}, {"rounds", 0}}}}, "c.json");
    REQUIRE(parsed.has_value());
    CHECK(parsed->confirm.top == 5);
    CHECK(parsed->confirm.rounds == 0);
    CHECK(ToJson(*parsed).at("confirm") == json{{"top", 5}, {"rounds", 0}});
  }

  TEST_CASE("review: defaults to a 5x jump or 80% of the roofline, parses and round-trips") {
    const RunConfig defaults;
    CHECK(defaults.review.speedup == 5.0);
    CHECK(defaults.review.roofline == 0.8);
    auto parsed = ParseRunConfig(json{{"task", "softmax"}, {"review", {{"speedup", 3}, {"roofline", 0.9}}}}, "c.json");
    REQUIRE(parsed.has_value());
    CHECK(parsed->review.speedup == 3.0);
    CHECK(parsed->review.roofline == 0.9);
    CHECK(ToJson(*parsed).at("review") == json{{"speedup", 3.0}, {"roofline", 0.9}});
    CHECK(ParseRunConfig(ToJson(*parsed), "again.json")->review.speedup == 3.0);
  }

  TEST_CASE("the analyst defaults to the first llm mutator's endpoint, can be named or turned off, and round-trips") {
    // No llm mutator: no analyst.
    auto knob_only = ParseRunConfig(ContractExample(false), "c.json");
    REQUIRE(knob_only);
    CHECK_FALSE(AnalystEndpoint(*knob_only));
    // Absent: the llm mutator's endpoint.
    auto defaulted = ParseRunConfig(ContractExample(true), "c.json");
    REQUIRE(defaulted);
    REQUIRE(AnalystEndpoint(*defaulted));
    CHECK(AnalystEndpoint(*defaulted)->model == "gpt-5");
    CHECK(AnalystEndpoint(*defaulted)->api_key_env == "OPENAI_API_KEY");
    CHECK_FALSE(ToJson(*defaulted).contains("analyst"));
    // Named: its own endpoint, the same fields and key handling as an llm mutator.
    json named = ContractExample(true);
    named["analyst"] = json::parse(R"({"provider": "anthropic", "model": "claude-x", "api_key_env": "ANTHROPIC_API_KEY",
      "timeout_s": 60, "max_tokens": 3000, "temperature": 0.2, "price_per_mtok": {"input": 3, "output": 15}})");
    auto with_analyst = ParseRunConfig(named, "c.json");
    REQUIRE(with_analyst);
    const auto endpoint = AnalystEndpoint(*with_analyst);
    REQUIRE(endpoint);
    CHECK(endpoint->provider == "anthropic");
    CHECK(endpoint->model == "claude-x");
    CHECK(endpoint->max_tokens == 3000);
    CHECK(endpoint->price_output_per_mtok == doctest::Approx(15.0));
    const json stored = ToJson(*with_analyst);
    CHECK(stored["analyst"]["model"] == "claude-x");
    CHECK(stored["analyst"]["api_key_env"] == "ANTHROPIC_API_KEY");
    auto reparsed = ParseRunConfig(stored, "stored");
    REQUIRE(reparsed);
    CHECK(ToJson(*reparsed) == stored);
    // Off.
    json off = ContractExample(true);
    off["analyst"] = false;
    auto without = ParseRunConfig(off, "c.json");
    REQUIRE(without);
    CHECK_FALSE(AnalystEndpoint(*without));
    CHECK(ToJson(*without)["analyst"] == false);
    CHECK(ToJson(*ParseRunConfig(ToJson(*without), "stored")) == ToJson(*without));
  }

  TEST_CASE("plan and budget.roofline parse and round-trip") {
    json document = ContractExample(true);
    document["mutators"][1]["plan"] = true;
    document["budget"]["roofline"] = 0.9;
    auto config = ParseRunConfig(document, "c.json");
    REQUIRE(config);
    CHECK(config->mutators[1].plan);
    CHECK_FALSE(config->mutators[0].plan);
    REQUIRE(config->budget.roofline);
    CHECK(*config->budget.roofline == doctest::Approx(0.9));
    const json stored = ToJson(*config);
    CHECK(stored["mutators"][1]["plan"] == true);
    CHECK(stored["budget"]["roofline"] == 0.9);
    CHECK(ToJson(*ParseRunConfig(stored, "stored")) == stored);
    CHECK_FALSE(ParseRunConfig(ContractExample(true), "c.json")->budget.roofline);
  }

  TEST_CASE("a default config round-trips and has no budget") {
    RunConfig config;
    config.task = "matmul";
    auto parsed = ParseRunConfig(ToJson(config), "defaults");
    REQUIRE_MESSAGE(parsed.has_value(), testing::ErrorOf(parsed));
    CHECK(ToJson(*parsed) == ToJson(config));
    CHECK_FALSE(parsed->budget.time.has_value());
    CHECK_FALSE(parsed->budget.evaluations.has_value());
  }

  TEST_CASE("each bad field is refused with a message naming the file and the field") {
    struct Bad {
      const char* what;
      json document;
      const char* field;
    };
    json unknown_top = ContractExample(false);
    unknown_top["budgt"] = json::object();
    json empty_mutators = ContractExample(false);
    empty_mutators["mutators"] = json::array();
    json kindless = ContractExample(false);
    kindless["mutators"] = json::array({{{"weight", 1}}});
    json modelless = ContractExample(true);
    modelless["mutators"][1].erase("model");
    json share_above_one = ContractExample(true);
    share_above_one["mutators"][1]["combine_share"] = 1.5;
    json share_negative = ContractExample(true);
    share_negative["mutators"][1]["combine_share"] = -0.1;
    json share_text = ContractExample(true);
    share_text["mutators"][1]["combine_share"] = "0.2";
    json plan_text = ContractExample(true);
    plan_text["mutators"][1]["plan"] = "yes";
    json no_variants = ContractExample(true);
    no_variants["mutators"][1]["variants"] = 0;
    json many_variants = ContractExample(true);
    many_variants["mutators"][1]["variants"] = 9;
    const Bad cases[] = {
        {"unknown top-level field", unknown_top, "budgt"},
        {"unknown nested field", With("/budget/tme", "1h"), "budget.tme"},
        {"wrong type", With("/parallel/compile_jobs", "2"), "parallel.compile_jobs"},
        {"impossible value", With("/parallel/compile_jobs", 0), "parallel.compile_jobs"},
        {"negative exploration", With("/strategy/exploration", -1.0), "strategy.exploration"},
        {"bad duration", With("/budget/time", "10 minutes"), "budget.time"},
        {"empty duration (once ignored)", With("/budget/time", ""), "budget.time"},
        {"a number that is none (once read as 1.2s)", With("/budget/time", "1.2.3s"), "budget.time"},
        {"a zero duration", With("/budget/time", "0s"), "budget.time"},
        {"unknown strategy", With("/strategy/name", "simulated-annealing"), "strategy.name"},
        {"empty mutators", empty_mutators, "mutators"},
        {"mutator without kind", kindless, "mutators[0].kind"},
        {"llm mutator without model", modelless, "mutators[1].model"},
        {"combine_share above 1", share_above_one, "mutators[1].combine_share"},
        {"negative combine_share", share_negative, "mutators[1].combine_share"},
        {"combine_share not a number", share_text, "mutators[1].combine_share"},
        {"fractional evaluations", With("/budget/evaluations", 2.5), "budget.evaluations"},
        {"strategy not an object", With("/strategy", "greedy"), "strategy"},
        {"negative confirmation rounds", With("/confirm/rounds", -1), "confirm.rounds"},
        {"flush_cache not a boolean", With("/evaluator/flush_cache", "yes"), "evaluator.flush_cache"},
        {"unknown confirm field", With("/confirm/margin", 0.1), "confirm.margin"},
        {"roofline of zero", With("/budget/roofline", 0.0), "budget.roofline"},
        {"roofline above 1.5", With("/budget/roofline", 1.6), "budget.roofline"},
        {"roofline not a number", With("/budget/roofline", "90%"), "budget.roofline"},
        {"plan not a boolean", plan_text, "mutators[1].plan"},
        {"variants of 0", no_variants, "mutators[1].variants"},
        {"variants above 8", many_variants, "mutators[1].variants"},
        {"review speedup below 1", With("/review/speedup", 0.5), "review.speedup"},
        {"review speedup not a number", With("/review/speedup", "5x"), "review.speedup"},
        {"review roofline of zero", With("/review/roofline", 0.0), "review.roofline"},
        {"review roofline above 1.5", With("/review/roofline", 2.0), "review.roofline"},
        {"unknown review field", With("/review/wait", true), "review.wait"},
        {"review not an object", With("/review", 5), "review"},
        {"analyst true", With("/analyst", true), "analyst"},
        {"analyst a string", With("/analyst", "gpt-5"), "analyst"},
        {"analyst without model", With("/analyst", json{{"provider", "openai"}}), "analyst.model"},
        {"analyst unknown provider", With("/analyst", json{{"provider", "acme"}, {"model", "m"}}), "analyst.provider"},
        {"analyst with a mutator field", With("/analyst", json{{"provider", "openai"}, {"model", "m"}, {"combine_share", 0.5}}),
         "analyst.combine_share"},
        {"analyst bad price", With("/analyst", json{{"provider", "openai"}, {"model", "m"}, {"price_per_mtok", {{"input", -1}}}}),
         "analyst.price_per_mtok.input"},
    };
    for (const Bad& bad : cases) {
      const std::string what = bad.what;
      CAPTURE(what);
      const std::string message = RefusalOf(bad.document);
      CAPTURE(message);
      CHECK(message.find("runs/bad.json") != std::string::npos);
      CHECK(message.find(std::string(bad.field) + ":") != std::string::npos);
    }
  }

  TEST_CASE("the strategy parameters parse, default, and round-trip for every strategy") {
    RunConfig defaults;
    CHECK(defaults.strategy.name == "model");
    CHECK(defaults.strategy.subtree_weight == doctest::Approx(0.5));
    CHECK(defaults.strategy.beam_width == 4);
    CHECK(defaults.strategy.keep_factor == 2);
    CHECK(defaults.strategy.islands == 4);
    CHECK(defaults.strategy.migration_interval == 10);
    auto config = ParseRunConfig(With("/strategy", json::parse(R"({"name": "beam", "exploration": 0.5,
        "beam_width": 6, "keep_factor": 3})")),
                                 "run.json");
    REQUIRE_MESSAGE(config.has_value(), testing::ErrorOf(config));
    CHECK(config->strategy.name == "beam");
    CHECK(config->strategy.exploration == doctest::Approx(0.5));
    CHECK(config->strategy.beam_width == 6);
    CHECK(config->strategy.keep_factor == 3);
    auto archipelago = ParseRunConfig(With("/strategy", json::parse(R"({"name": "islands", "subtree_weight": 0.25,
        "islands": 5, "migration_interval": 7})")),
                                      "run.json");
    REQUIRE_MESSAGE(archipelago.has_value(), testing::ErrorOf(archipelago));
    CHECK(archipelago->strategy.subtree_weight == doctest::Approx(0.25));
    CHECK(archipelago->strategy.islands == 5);
    CHECK(archipelago->strategy.migration_interval == 7);
    config->strategy.subtree_weight = 0.25;
    config->strategy.islands = 5;
    config->strategy.migration_interval = 7;
    for (const char* name : {"graph-ucb", "beam", "greedy", "islands", "random", "model", "portfolio"}) {
      CAPTURE(name);
      RunConfig original = *config;
      original.strategy.name = name;
      const json written = ToJson(original);
      CHECK(written.at("strategy").at("name") == name);
      auto parsed = ParseRunConfig(written, "stored config");
      REQUIRE_MESSAGE(parsed.has_value(), testing::ErrorOf(parsed));
      CHECK(ToJson(*parsed) == written);
    }
    // The stored config names the parameters its strategy reads.
    RunConfig islands = *config;
    islands.strategy.name = "islands";
    const json stored = ToJson(islands).at("strategy");
    CHECK(stored.at("islands") == 5);
    CHECK(stored.at("migration_interval") == 7);
    CHECK(stored.at("subtree_weight") == 0.25);
    CHECK_FALSE(stored.contains("beam_width"));
    CHECK(ToJson(*config).at("strategy").at("beam_width") == 6);
  }

  TEST_CASE("each bad strategy field is refused with a message naming the file and the field") {
    struct Bad {
      const char* what;
      json document;
      const char* field;
    };
    const Bad cases[] = {
        {"unknown strategy field", With("/strategy/beam_widht", 4), "strategy.beam_widht"},
        {"zero beam width", With("/strategy/beam_width", 0), "strategy.beam_width"},
        {"fractional keep factor", With("/strategy/keep_factor", 1.5), "strategy.keep_factor"},
        {"subtree weight above 1", With("/strategy/subtree_weight", 1.5), "strategy.subtree_weight"},
        {"no islands", With("/strategy/islands", 0), "strategy.islands"},
        {"migration interval a string", With("/strategy/migration_interval", "10"), "strategy.migration_interval"},
    };
    for (const Bad& bad : cases) {
      const std::string what = bad.what;
      CAPTURE(what);
      const std::string message = RefusalOf(bad.document);
      CAPTURE(message);
      CHECK(message.find("runs/bad.json") != std::string::npos);
      CHECK(message.find(std::string(bad.field) + ":") != std::string::npos);
    }
    // Another strategy's parameter: once dropped without a word.
    const struct {
      const char* strategy;
      const char* field;
      const char* readers;
    } foreign[] = {{"random", "beam_width", "only for beam"},
                   {"greedy", "keep_factor", "only for beam"},
                   {"graph-ucb", "islands", "only for islands"},
                   {"model", "migration_interval", "only for islands"},
                   {"beam", "subtree_weight", "only for graph-ucb, islands, model, portfolio"}};
    for (const auto& [strategy, field, readers] : foreign) {
      CAPTURE(strategy);
      CAPTURE(field);
      json document = With("/strategy/name", strategy);
      document["strategy"][field] = 1;
      const std::string message = RefusalOf(document);
      CAPTURE(message);
      CHECK(message.find(std::string("strategy.") + field + ":") != std::string::npos);
      CHECK(message.find(readers) != std::string::npos);
    }
    // "exploration" is taken with any strategy: every saved config states it.
    json explored = With("/strategy/name", "random");
    explored["strategy"]["exploration"] = 2.0;
    CHECK(ParseRunConfig(explored, "run.json").has_value());
    const std::string unknown = RefusalOf(With("/strategy/name", "annealing"));
    for (const char* name : {"graph-ucb", "beam", "greedy", "islands", "random", "model", "portfolio"}) {
      CHECK(unknown.find(name) != std::string::npos);
    }
  }

  TEST_CASE("a document that is not an object is refused") {
    const std::string message = RefusalOf(json::array({1, 2}));
    CHECK(message.find("runs/bad.json") != std::string::npos);
  }

  TEST_CASE("LoadRunConfig names the file in its errors") {
    testing::TempDir dir;
    SUBCASE("unknown field") {
      const auto path = dir / "run.json";
      testing::WriteFile(path, R"({"task": "softmax", "budget": {"evaluatons": 3}})");
      auto config = LoadRunConfig(path);
      REQUIRE_FALSE(config.has_value());
      CHECK(config.error().IsInvalidArgument());
      CHECK(config.error().message().find(path.string()) != std::string::npos);
      CHECK(config.error().message().find("budget.evaluatons") != std::string::npos);
    }
    SUBCASE("a field twice") {
      // nlohmann keeps the last of two equal keys: the first would be ignored silently.
      const auto path = dir / "twice.json";
      testing::WriteFile(path, R"({"task": "softmax", "budget": {"evaluations": 3, "evaluations": 30}})");
      auto config = LoadRunConfig(path);
      REQUIRE_FALSE(config.has_value());
      CHECK(config.error().IsInvalidArgument());
      CHECK(config.error().message() == path.string() + ": budget.evaluations: the field appears twice in one object");
    }
    SUBCASE("not JSON") {
      const auto path = dir / "broken.json";
      testing::WriteFile(path, "{\"task\": ");
      auto config = LoadRunConfig(path);
      REQUIRE_FALSE(config.has_value());
      CHECK(config.error().IsInvalidArgument());
      CHECK(config.error().message().find(path.string()) != std::string::npos);
    }
    SUBCASE("a valid file") {
      const auto path = dir / "ok.json";
      testing::WriteFile(path, ContractExample(false).dump());
      auto config = LoadRunConfig(path);
      REQUIRE_MESSAGE(config.has_value(), testing::ErrorOf(config));
      CHECK(config->task == "softmax");
    }
  }

  TEST_CASE("Validate refuses a config without a task, naming the origin") {
    RunConfig config;
    auto status = Validate(config, "command line");
    REQUIRE_FALSE(status.has_value());
    CHECK(status.error().IsInvalidArgument());
    CHECK(status.error().message().find("command line") != std::string::npos);
    CHECK(status.error().message().find("task") != std::string::npos);
    config.task = "softmax";
    CHECK(Validate(config, "command line").has_value());
  }

  TEST_CASE("Validate refuses mutators whose weights are all zero") {
    RunConfig config;
    config.task = "softmax";
    config.mutators[0].weight = 0;
    auto status = Validate(config, "run.json");
    REQUIRE_FALSE(status.has_value());
    CHECK(status.error().message().find("mutators") != std::string::npos);
  }

  TEST_CASE("an OpenAI reasoning model gets max_completion_tokens and no temperature, the CONTRACT example included") {
    const auto endpoint_of = [](const json& document, std::size_t mutator = 1) {
      auto config = ParseRunConfig(document, "run.json");
      REQUIRE_MESSAGE(config.has_value(), testing::ErrorOf(config));
      return EndpointFor(config->mutators.at(mutator), "");
    };
    // gpt-5 at temperature 0.7, as the CONTRACT writes it: OpenAI refuses both
    // max_tokens and that temperature with HTTP 400.
    const LlmEndpoint contract = endpoint_of(ContractExample(true));
    CHECK(contract.use_max_completion_tokens);
    CHECK_FALSE(contract.send_temperature);
    // Any other model: max_tokens and the temperature, as before.
    json classic = ContractExample(true);
    classic["mutators"][1]["model"] = "gpt-4.1-mini";
    CHECK_FALSE(endpoint_of(classic).use_max_completion_tokens);
    CHECK(endpoint_of(classic).send_temperature);
    // max_tokens_field decides when given: a deployment whose name says nothing.
    json deployment = classic;
    deployment["mutators"][1]["model"] = "my-reasoner";
    deployment["mutators"][1]["max_tokens_field"] = "max_completion_tokens";
    CHECK(endpoint_of(deployment).use_max_completion_tokens);
    json proxy = ContractExample(true);
    proxy["mutators"][1]["max_tokens_field"] = "max_tokens";
    CHECK_FALSE(endpoint_of(proxy).use_max_completion_tokens);
    // "temperature": null sends none, to any model and provider.
    json no_temperature = classic;
    no_temperature["mutators"][1]["temperature"] = nullptr;
    CHECK_FALSE(endpoint_of(no_temperature).send_temperature);
    json claude = classic;
    claude["mutators"][1].update({{"provider", "anthropic"}, {"model", "claude-sonnet-4-5"}, {"temperature", nullptr}});
    CHECK_FALSE(endpoint_of(claude).send_temperature);
    CHECK_FALSE(endpoint_of(claude).use_max_completion_tokens);
    // An o-series model through provider anthropic is not OpenAI's.
    claude["mutators"][1].update({{"model", "o3"}, {"temperature", 0.2}});
    CHECK(endpoint_of(claude).send_temperature);
    CHECK_FALSE(endpoint_of(claude).use_max_completion_tokens);
  }

  TEST_CASE("max_tokens_field and a null temperature round-trip; absent, the field stays absent") {
    json document = ContractExample(true);
    document["mutators"][1]["temperature"] = nullptr;
    document["mutators"][1]["max_tokens_field"] = "max_completion_tokens";
    document["analyst"] = json::parse(R"({"provider": "openai", "model": "o3", "max_tokens_field": "max_tokens",
                                          "price_per_mtok": {"input": 2, "output": 8}})");
    auto config = ParseRunConfig(document, "run.json");
    REQUIRE_MESSAGE(config.has_value(), testing::ErrorOf(config));
    CHECK_FALSE(config->mutators[1].send_temperature);
    CHECK(config->mutators[1].max_tokens_field == "max_completion_tokens");
    CHECK(config->analyst.endpoint->max_tokens_field == "max_tokens");
    const json stored = ToJson(*config);
    CHECK(stored["mutators"][1]["temperature"].is_null());
    CHECK(stored["mutators"][1]["max_tokens_field"] == "max_completion_tokens");
    auto again = ParseRunConfig(stored, "stored");
    REQUIRE_MESSAGE(again.has_value(), testing::ErrorOf(again));
    CHECK(ToJson(*again) == stored);
    CHECK_FALSE(again->mutators[1].send_temperature);
    // Not given: left to the model when the stored config is read back too.
    const json plain = ToJson(*ParseRunConfig(ContractExample(true), "run.json"));
    CHECK_FALSE(plain["mutators"][1].contains("max_tokens_field"));
    CHECK(plain["mutators"][1]["temperature"] == 0.7);
  }

  TEST_CASE("a bad max_tokens_field or temperature is refused, naming the field") {
    const auto refusal = [](const std::string& field, const json& value, const std::string& provider = "openai") {
      json document = ContractExample(true);
      document["mutators"][1]["provider"] = provider;
      document["mutators"][1][field] = value;
      return RefusalOf(document);
    };
    const std::string unknown = refusal("max_tokens_field", "max_output_tokens");
    CHECK(unknown.find("runs/bad.json: mutators[1].max_tokens_field: expected one of max_tokens max_completion_tokens") !=
          std::string::npos);
    CHECK(refusal("max_tokens_field", true).find("mutators[1].max_tokens_field:") != std::string::npos);
    CHECK(refusal("max_tokens_field", "max_completion_tokens", "anthropic")
              .find("mutators[1].max_tokens_field: expected \"max_tokens\" for provider anthropic") != std::string::npos);
    CHECK(refusal("temperature", "hot").find("mutators[1].temperature:") != std::string::npos);
    CHECK(refusal("temperature", 2.5).find("mutators[1].temperature:") != std::string::npos);
    CHECK(RefusalOf(With("/analyst", json{{"provider", "openai"}, {"model", "m"}, {"max_tokens_field", "tokens"},
                                          {"price_per_mtok", {{"input", 1}, {"output", 1}}}}))
              .find("analyst.max_tokens_field:") != std::string::npos);
  }

  TEST_CASE("a request's deadline follows timeout_s, so a slow model's reply is waited for") {
    json document = ContractExample(true);
    CHECK(EndpointFor(ParseRunConfig(document, "run.json")->mutators[1], "").total_deadline_s == 900.0);
    document["mutators"][1]["timeout_s"] = 1200;
    const LlmEndpoint slow = EndpointFor(ParseRunConfig(document, "run.json")->mutators[1], "");
    CHECK(slow.timeout_s == 1200.0);
    CHECK(slow.total_deadline_s >= 2 * 1200.0);  // before: 900 s, less than one attempt
  }

  TEST_CASE("a usd budget with an llm mutator or analyst without price_per_mtok is refused, naming the field") {
    json unpriced = ContractExample(true);
    unpriced["mutators"][1].erase("price_per_mtok");
    const std::string message = RefusalOf(unpriced);
    CHECK(message.find("runs/bad.json: mutators[1].price_per_mtok: expected the model's prices") != std::string::npos);
    CHECK(message.find("budget.usd") != std::string::npos);
    // Without a usd budget the prices are optional (a local server is free).
    json no_usd = unpriced;
    no_usd["budget"].erase("usd");
    CHECK(ParseRunConfig(no_usd, "run.json").has_value());
    // A price of 0 given is the user's word: a free local server under a usd budget.
    json free_local = unpriced;
    free_local["mutators"][1]["price_per_mtok"] = {{"input", 0}, {"output", 0}};
    CHECK(ParseRunConfig(free_local, "run.json").has_value());
    // The analyst pays from the same budget.
    json analyst = ContractExample(true);
    analyst["analyst"] = {{"provider", "openai"}, {"model", "o3"}, {"api_key_env", "OPENAI_API_KEY"}};
    CHECK(RefusalOf(analyst).find("runs/bad.json: analyst.price_per_mtok: expected") != std::string::npos);
    analyst["budget"].erase("usd");
    CHECK(ParseRunConfig(analyst, "run.json").has_value());
  }

  TEST_CASE("every shipped run config loads") {
    for (const char* name : {"anthropic.json", "demo.json", "local.json", "openai.json", "overnight.json"}) {
      CAPTURE(name);
      auto config = LoadRunConfig(testing::SourceDir() / "configs" / "runs" / name);
      CHECK_MESSAGE(config.has_value(), testing::ErrorOf(config));
    }
  }
}
