// The command evaluator (docs/COMMAND_PROTOCOL.md) end to end: the shipped
// example (examples/command: a C kernel built by build.sh and judged by a C
// harness) through the evaluator as a run would make it, and a stand-in run
// command (tests/evaluators/command/fake_harness.sh) that answers badly in
// every way the protocol must catch.

#include "evaluators/command_evaluator.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <optional>
#include <thread>

#include <doctest.h>
#include <nlohmann/json.hpp>

#include "testing.h"

namespace kestrel {
namespace {

bool Contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

Task ExampleTask() {
  auto task = LoadTask(testing::SourceDir() / "examples" / "command" / "poly");
  REQUIRE_MESSAGE(task.has_value(), testing::ErrorOf(task));
  return *task;
}

// The evaluator section of the shipped run config.
CommandEvaluatorOptions ExampleOptions() {
  const auto config =
      nlohmann::json::parse(testing::ReadFile(testing::SourceDir() / "examples" / "command" / "poly.json"));
  const auto& evaluator = config.at("evaluator");
  CommandEvaluatorOptions options;
  options.build = evaluator.at("build").get<std::vector<std::string>>();
  options.run = evaluator.at("run").get<std::vector<std::string>>();
  options.measure.min_time_s = 0.02;
  options.measure.min_samples = 5;
  options.measure.run_timeout_s = 60;
  return options;
}

Evaluator& Example() {
  static std::unique_ptr<Evaluator> evaluator = [] {
    auto made = MakeCommandEvaluator(ExampleTask(), ExampleOptions());
    if (!made) FAIL("MakeCommandEvaluator: " << made.error().message());
    return std::move(*made);
  }();
  return *evaluator;
}

Measurement EvalExample(const std::string& source, KnobValues knobs = {}) {
  Evaluator& evaluator = Example();
  const Measurement m = evaluator.Evaluate(Candidate{source, std::move(knobs), evaluator.Toolchain(), evaluator.Flags()});
  INFO(ToString(m.outcome) << ": " << m.reason << "\n" << m.log);
  return m;
}

// An evaluator whose run command is the fake harness; no build step.
CommandEvaluatorOptions FakeOptions() {
  CommandEvaluatorOptions options;
  options.run = {"bash", (testing::SourceDir() / "tests" / "evaluators" / "command" / "fake_harness.sh").string(),
                 "{source}", "{answer}", "{nonce}"};
  options.measure.run_timeout_s = 2;
  options.measure.min_samples = 3;
  return options;
}

Evaluator& Fake() {
  static std::unique_ptr<Evaluator> evaluator = [] {
    auto made = MakeCommandEvaluator(ExampleTask(), FakeOptions());
    if (!made) FAIL("MakeCommandEvaluator: " << made.error().message());
    return std::move(*made);
  }();
  return *evaluator;
}

Measurement EvalFake(const std::string& mode) {
  Evaluator& evaluator = Fake();
  const Measurement m = evaluator.Evaluate(Candidate{"/* " + mode + " */", {}, evaluator.Toolchain(), {}});
  INFO(mode << ": " << ToString(m.outcome) << ": " << m.reason << "\n" << m.log);
  return m;
}

// Runs every program here, naming the run command's runs as a cluster's jobs;
// with `ending` set, the run command's runs end so instead, without running.
class ClusterLike final : public Executor {
 public:
  std::optional<SubprocessResult> ending;

  Result<SubprocessResult> Run(const SubprocessOptions& process, const std::string& stem) const override {
    if (stem == "run" && ending) return *ending;
    auto ran = LocalExecutor()->Run(process, stem);
    if (ran && stem == "run") ran->job = "Slurm job 7 on node1";
    return ran;
  }
  bool RunsHere() const override { return true; }
  std::filesystem::path ScratchRoot() const override { return LocalExecutor()->ScratchRoot(); }
};

TEST_SUITE("command_evaluator") {
  TEST_CASE("the run command's executor says how it ended: its job, a lost job, the scheduler's time limit") {
    auto cluster = std::make_shared<ClusterLike>();
    CommandEvaluatorOptions options = FakeOptions();
    options.executor = cluster;
    auto made = MakeCommandEvaluator(ExampleTask(), options);
    REQUIRE_MESSAGE(made.has_value(), testing::ErrorOf(made));
    Evaluator& evaluator = **made;
    const auto evaluate = [&] {
      const Measurement m = evaluator.Evaluate(Candidate{"/* honest */", {}, evaluator.Toolchain(), {}});
      INFO(ToString(m.outcome) << ": " << m.reason << "\n" << m.log);
      return m;
    };
    const Measurement measured = evaluate();
    CHECK(measured.outcome == Outcome::kMeasured);
    CHECK(Contains(measured.log, "measured by Slurm job 7 on node1"));

    SubprocessResult cancelled;
    cancelled.job = "Slurm job 8";
    cancelled.lost = "Slurm job 8 was cancelled";
    cluster->ending = cancelled;
    const Measurement lost = evaluate();
    CHECK(lost.outcome == Outcome::kCrashed);
    CHECK(lost.reason == "Slurm job 8 was cancelled");

    SubprocessResult limit = cancelled;
    limit.timed_out = true;
    limit.lost = "Slurm job 8 hit its time limit (1)";
    cluster->ending = limit;
    const Measurement timed_out = evaluate();
    CHECK(timed_out.outcome == Outcome::kTimedOut);
    CHECK(timed_out.reason == "Slurm job 8 hit its time limit (1)");
  }

  TEST_CASE("the shipped example measures its seed, and a better knob setting is faster") {
    const Task task = ExampleTask();
    const std::string seed = task.seeds.at(0).text;
    const Measurement slow = EvalExample(seed, {{"TABLE", "0"}, {"FLOAT", "0"}, {"UNROLL", "1"}});
    REQUIRE(slow.outcome == Outcome::kMeasured);
    REQUIRE(slow.shapes.size() == 2);
    CHECK(slow.shapes[0].shape.at("n") == 1048576);
    CHECK(slow.shapes[0].candidate.count >= 5);
    CHECK(slow.shapes[0].reference.count >= 5);
    CHECK(slow.shapes[0].gflops > 0);
    CHECK(Contains(slow.log, "3 input sets per shape"));
    // A table of coefficients in float: no divisions, twice the SIMD lanes.
    const Measurement fast = EvalExample(seed, {{"TABLE", "1"}, {"FLOAT", "1"}, {"UNROLL", "1"}});
    REQUIRE(fast.outcome == Outcome::kMeasured);
    MESSAGE("poly example: seed " << slow.speedup << "x, TABLE=1 FLOAT=1 " << fast.speedup << "x");
    // Measured 1.39x to 2.57x the seed's speedup across this VM's speed
    // states; a setting with no effect reads 1.0x within about 10%.
    CHECK(fast.speedup > 1.25 * slow.speedup);
  }

  TEST_CASE("a build that leaves machine code has a code hash: the same for the same code, not for other code") {
    Evaluator& evaluator = Example();
    const std::string seed = ExampleTask().seeds.at(0).text;
    const auto build = [&](const std::string& source, KnobValues knobs) {
      const BuildResult built = evaluator.Build(Candidate{source, std::move(knobs), evaluator.Toolchain(), evaluator.Flags()});
      REQUIRE_MESSAGE(built.ok, built.log);
      return built.code_hash;
    };
    const KnobValues plain = {{"TABLE", "0"}, {"FLOAT", "0"}, {"UNROLL", "1"}};
    const std::string hash = build(seed, plain);
    CHECK(hash.size() == 64);
    // Another source text (so another build folder) that compiles to the same code.
    CHECK(build("/* the same kernel, with a comment */\n" + seed, plain) == hash);
    // Each knob here changes the code.
    CHECK(build(seed, {{"TABLE", "1"}, {"FLOAT", "0"}, {"UNROLL", "1"}}) != hash);
    CHECK(build(seed, {{"TABLE", "0"}, {"FLOAT", "1"}, {"UNROLL", "1"}}) != hash);
    // No build step, nothing but the source: unknown, not a hash of the text.
    CHECK(Fake().Build(Candidate{"/* measured */", {}, Fake().Toolchain(), {}}).code_hash.empty());
    // A run command handed the knobs may judge two builds of the same code
    // differently (a harness that reads a knob the kernel never does): no hash.
    for (const char* given : {"{knobs}", "--knobs={knob_flags}", "{source}", "{job}"}) {
      CAPTURE(given);
      CommandEvaluatorOptions options = ExampleOptions();
      // The same harness, through a script that drops the argument it is given.
      static const testing::TempDir scripts;
      testing::WriteFile(scripts / "drop_last.sh", "exec \"${@:1:$#-1}\"\n");
      std::vector<std::string> run = {"bash", (scripts / "drop_last.sh").string()};
      run.insert(run.end(), options.run.begin(), options.run.end());
      run.push_back(given);
      options.run = run;
      auto made = MakeCommandEvaluator(ExampleTask(), options);
      REQUIRE_MESSAGE(made.has_value(), testing::ErrorOf(made));
      const BuildResult built = (*made)->Build(Candidate{seed, plain, (*made)->Toolchain(), (*made)->Flags()});
      REQUIRE_MESSAGE(built.ok, built.log);
      CHECK(built.code_hash.empty());
    }
  }

  TEST_CASE("a code hash covers all the run command can read of the build: its data files, and not the hidden source") {
    const std::string seed = ExampleTask().seeds.at(0).text;
    static const testing::TempDir scripts;
    // The example's build, then a file the harness could read: the build's
    // knob flags. NOTE is a knob the kernel never reads (the same code).
    testing::WriteFile(scripts / "build_with_note.sh",
                       "set -e\nbash \"$1\" \"$2\" \"$3\" \"${@:4}\"\necho \"${@:4}\" > \"$3/note.txt\"\n");
    CommandEvaluatorOptions options = ExampleOptions();
    options.build = {"bash", (scripts / "build_with_note.sh").string(), "{task_dir}/build.sh", "{source}", "{build_dir}",
                     "{knob_flags}"};
    auto made = MakeCommandEvaluator(ExampleTask(), options);
    REQUIRE_MESSAGE(made.has_value(), testing::ErrorOf(made));
    Evaluator& noted = **made;
    const auto hash = [&](Evaluator& evaluator, const std::string& source, const std::string& note) {
      const BuildResult built = evaluator.Build(Candidate{
          source, {{"TABLE", "0"}, {"FLOAT", "0"}, {"UNROLL", "1"}, {"NOTE", note}}, evaluator.Toolchain(), evaluator.Flags()});
      REQUIRE_MESSAGE(built.ok, built.log);
      return built.code_hash;
    };
    // Without the note, NOTE changes nothing the run command reads: one hash.
    CHECK(hash(Example(), seed, "1") == hash(Example(), seed, "2"));
    // With it, the data differ: two hashes; a comment in the source does not count.
    const std::string one = hash(noted, seed, "1");
    CHECK(one.size() == 64);
    CHECK(hash(noted, seed, "2") != one);
    CHECK(hash(noted, "/* the same kernel */\n" + seed, "1") == one);

    // The source is left out of the hash, so the run command cannot read it
    // (it would judge a source that two builds of one hash do not share).
    options = ExampleOptions();
    options.run = {"bash", "-c", "cat {build_dir}/kernel.c > /dev/null || echo SOURCE-HIDDEN; exec \"$@\"", "harness"};
    const std::vector<std::string> example_run = ExampleOptions().run;
    options.run.insert(options.run.end(), example_run.begin(), example_run.end());
    made = MakeCommandEvaluator(ExampleTask(), options);
    REQUIRE_MESSAGE(made.has_value(), testing::ErrorOf(made));
    const Candidate candidate{seed, {{"TABLE", "0"}, {"FLOAT", "0"}, {"UNROLL", "1"}}, (*made)->Toolchain(), (*made)->Flags()};
    const BuildResult built = (*made)->Build(candidate);
    REQUIRE(built.code_hash.size() == 64);
    const Measurement m = (*made)->Evaluate(candidate);
    INFO(ToString(m.outcome) << ": " << m.reason << "\n" << m.log);
    CHECK(m.outcome == Outcome::kMeasured);
    CHECK(Contains(m.log, "kernel.c: Permission denied\nSOURCE-HIDDEN"));
  }

  TEST_CASE("the example's harness catches a wrong kernel and a compile error") {
    const Measurement wrong = EvalExample(
        "#include <stdint.h>\nvoid poly(const float* x, float* y, int64_t n) { for (int64_t i = 0; i < n; ++i) y[i] = 1; }\n");
    CHECK(wrong.outcome == Outcome::kWrong);
    CHECK_MESSAGE(Contains(wrong.reason, "expected"), wrong.reason);
    const Measurement broken = EvalExample("void poly(const float* x, float* y, long n) { y[0] = }\n");
    CHECK(broken.outcome == Outcome::kBuildFailed);
    CHECK_MESSAGE(Contains(broken.reason, "error"), broken.reason);
    CHECK(Contains(broken.log, "build command exited with status"));
    const Measurement writes_input = EvalExample(
        "#include <stdint.h>\nvoid poly(const float* x, float* y, int64_t n) { float* w = (float*)x; "
        "for (int64_t i = 0; i < n; ++i) { y[i] = 0; w[i] = 0; } }\n");
    CHECK(writes_input.outcome == Outcome::kWrong);
    CHECK_MESSAGE(Contains(writes_input.reason, "modified its input"), writes_input.reason);
  }

  TEST_CASE("a kernel inside the harness reaches nothing outside the run command's sandbox") {
    // The seed, plus a constructor that attacks as an LLM's kernel could from
    // inside the harness's process: it prints a canary file and Kestrel's
    // secret, plants a file beside the canary, kills a bystander and opens a
    // socket; and it reads its own source, which the sandbox hides since the
    // build has a code hash, first as it is, then after unmounting what hides
    // it. Each attempt must fail, and the kernel is measured honestly.
    testing::TempDir canary;
    testing::WriteFile(canary / "secret.txt", "canary-content-51c2");
    ::setenv("KESTREL_CANARY_SECRET", "sk-canary-0002", 1);
    const pid_t bystander = ::fork();
    if (bystander == 0) {
      ::execl("/bin/sleep", "sleep", "120", static_cast<char*>(nullptr));
      ::_exit(127);
    }
    const std::string attack =
        "#include <fcntl.h>\n#include <signal.h>\n#include <stdio.h>\n#include <stdlib.h>\n#include <string.h>\n"
        "#include <sys/mount.h>\n#include <sys/socket.h>\n#include <unistd.h>\n"
        "static long source_bytes(void) {\n"
        "  char path[4096] = {0};\n"
        "  if (readlink(\"/proc/self/exe\", path, sizeof path - 16) <= 0) return -2;\n"
        "  strcpy(strrchr(path, '/'), \"/kernel.c\");\n"
        "  int fd = open(path, O_RDONLY);\n"
        "  if (fd < 0) return -1;\n"
        "  char text[4096];\n"
        "  long got = read(fd, text, sizeof text);\n"
        "  close(fd);\n"
        "  return got;\n"
        "}\n"
        "static int unhide(void) {\n"
        "  char path[4096] = {0};\n"
        "  if (readlink(\"/proc/self/exe\", path, sizeof path - 16) <= 0) return -2;\n"
        "  strcpy(strrchr(path, '/'), \"/kernel.c\");\n"
        "  return umount2(path, MNT_DETACH);\n"
        "}\n"
        "__attribute__((constructor)) static void attack(void) {\n"
        "  long hidden = source_bytes();\n"
        "  int unmounted = unhide();\n"
        "  printf(\"ATTACK source=%ld umount=%d source_after=%ld\\n\", hidden, unmounted, source_bytes());\n"
        "  char text[256] = {0};\n"
        "  FILE* in = fopen(\"" + (canary / "secret.txt").string() + "\", \"r\");\n"
        "  if (in) { fread(text, 1, sizeof text - 1, in); fclose(in); }\n"
        "  const char* secret = getenv(\"KESTREL_CANARY_SECRET\");\n"
        "  FILE* out = fopen(\"" + (canary / "planted").string() + "\", \"w\");\n"
        "  if (out) fclose(out);\n"
        "  printf(\"ATTACK file=[%s] secret=[%s] planted=%d kill=%d socket=%d\\n\", text, secret ? secret : \"\",\n"
        "         out != 0, kill(" + std::to_string(bystander) + ", SIGKILL), socket(AF_INET, SOCK_STREAM, 0) >= 0 ? 1 : 0);\n"
        "}\n";
    const Task task = ExampleTask();
    const Measurement m = EvalExample(attack + task.seeds.at(0).text, {{"TABLE", "0"}, {"FLOAT", "0"}, {"UNROLL", "1"}});
    ::unsetenv("KESTREL_CANARY_SECRET");
    const bool alive = ::kill(bystander, 0) == 0;
    ::kill(bystander, SIGKILL);
    ::waitpid(bystander, nullptr, 0);
    CHECK(m.outcome == Outcome::kMeasured);
    CHECK_MESSAGE(Contains(m.log, "ATTACK file=[] secret=[] planted=0 kill=-1"), m.log);
    CHECK_MESSAGE(Contains(m.log, "ATTACK source=-1 umount=-1 source_after=-1"), m.log);
    CHECK_FALSE(Contains(m.log, "canary-content-51c2"));
    CHECK_FALSE(Contains(m.log, "sk-canary-0002"));
    CHECK_FALSE(std::filesystem::exists(canary / "planted"));
    CHECK(alive);
    CHECK(Contains(m.log, "sandbox: bwrap"));
  }

  TEST_CASE("the build command runs in the sandbox: a source cannot include a host file, nor a loaded kernel read one, connect or kill") {
    testing::TempDir canary;
    testing::WriteFile(canary / "secret.txt", "canary_content_7731 here;\n");
    ::setenv("KESTREL_CANARY_SECRET", "sk-canary-0003", 1);
    const pid_t bystander = ::fork();
    if (bystander == 0) {
      ::execl("/bin/sleep", "sleep", "120", static_cast<char*>(nullptr));
      ::_exit(127);
    }
    // A port on this host's loopback the build must not reach.
    const int listener = ::socket(AF_INET, SOCK_STREAM, 0);
    REQUIRE(listener >= 0);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t length = sizeof address;
    REQUIRE(::bind(listener, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0);
    REQUIRE(::listen(listener, 4) == 0);
    REQUIRE(::getsockname(listener, reinterpret_cast<sockaddr*>(&address), &length) == 0);
    const int port = ntohs(address.sin_port);
    // The compiler, made to read a host file: its error would quote it.
    const Task task = ExampleTask();
    const Measurement included = EvalExample("#include \"" + (canary / "secret.txt").string() + "\"\n" +
                                                 task.seeds.at(0).text,
                                             {{"TABLE", "0"}, {"FLOAT", "0"}, {"UNROLL", "1"}});
    CHECK(included.outcome == Outcome::kBuildFailed);
    CHECK_MESSAGE(Contains(included.log, "secret.txt"), included.log);
    CHECK_FALSE(Contains(included.log, "canary_content_7731"));
    // A build that loads the kernel (as an ahead-of-time compile of a Python
    // kernel imports it): the kernel runs with the build's rights.
    CommandEvaluatorOptions options = FakeOptions();
    options.build = {"bash", "-c", "head -1 {source} | grep -q '^# ATTACK' && bash {source}; exit 0"};
    auto made = MakeCommandEvaluator(task, options);
    REQUIRE_MESSAGE(made.has_value(), testing::ErrorOf(made));
    const std::string attack = "# ATTACK\n"
                               "echo \"file=[$(cat " + (canary / "secret.txt").string() + ")]\"\n"
                               "echo \"secret=[$KESTREL_CANARY_SECRET]\"\n"
                               "touch " + (canary / "planted").string() + " && echo planted\n"
                               "(exec 3<>/dev/tcp/127.0.0.1/" + std::to_string(port) +
                               ") 2>/dev/null && echo net=1 || echo net=0\n"
                               "kill -9 " + std::to_string(bystander) + " 2>/dev/null && echo kill=1 || echo kill=0\n";
    const BuildResult built = (*made)->Build(Candidate{attack, {}, (*made)->Toolchain(), {}});
    ::unsetenv("KESTREL_CANARY_SECRET");
    const bool alive = ::kill(bystander, 0) == 0;
    ::kill(bystander, SIGKILL);
    ::waitpid(bystander, nullptr, 0);
    ::close(listener);
    CHECK(alive);
    CHECK_MESSAGE(Contains(built.log, "net=0"), built.log);
    CHECK_MESSAGE(Contains(built.log, "kill=0"), built.log);
    CHECK(built.ok);
    CHECK_MESSAGE(Contains(built.log, "file=[]"), built.log);
    CHECK_MESSAGE(Contains(built.log, "secret=[]"), built.log);
    CHECK_FALSE(Contains(built.log, "canary_content_7731"));
    CHECK_FALSE(Contains(built.log, "sk-canary-0003"));
    CHECK_FALSE(std::filesystem::exists(canary / "planted"));
  }

  TEST_CASE("hidden shapes: a kernel right only on the shapes it was shown is wrong; the seed passes") {
    const Task task = ExampleTask();
    REQUIRE_FALSE(task.shape_ranges.empty());
    Evaluator& evaluator = Example();
    const KnobValues knobs = {{"TABLE", "0"}, {"FLOAT", "0"}, {"UNROLL", "1"}};
    const Candidate honest{task.seeds.at(0).text, knobs, evaluator.Toolchain(), evaluator.Flags()};
    const HiddenShapeCheck passed = evaluator.CheckHiddenShapes(honest, evaluator.Build(honest), 11);
    INFO(passed.note);
    CHECK(passed.shapes.size() == 2);
    CHECK_FALSE(passed.failure.has_value());

    // The seed's loop on the four sizes of task.json, zeros on any other.
    std::string special = task.seeds.at(0).text;
    const std::string entry = "void poly(const float* x, float* y, int64_t n) {";
    REQUIRE(special.find(entry) != std::string::npos);
    special.replace(special.find(entry), entry.size(),
                    entry + "\n  if (n != 1048576 && n != 4096 && n != 7 && n != 33) { for (int64_t j = 0; j < n; ++j) "
                            "y[j] = 0; return; }");
    const Candidate cheat{special, knobs, evaluator.Toolchain(), evaluator.Flags()};
    const Measurement shown = evaluator.Measure(cheat, evaluator.Build(cheat));  // the shapes it was shown
    CHECK_MESSAGE(shown.outcome == Outcome::kMeasured, shown.reason);
    const Measurement evaluated = evaluator.Evaluate(cheat);  // what `kestrel eval` and a confirmation do
    CHECK(evaluated.outcome == Outcome::kWrong);
    CHECK_MESSAGE(Contains(evaluated.reason, "hidden shape"), evaluated.reason);
    const HiddenShapeCheck caught = evaluator.CheckHiddenShapes(cheat, evaluator.Build(cheat), 11);
    REQUIRE(caught.failure.has_value());
    CHECK(caught.failure->outcome == Outcome::kWrong);
    CHECK_MESSAGE(Contains(caught.failure->reason, "hidden shape"), caught.failure->reason);
    CHECK(caught.shapes == passed.shapes);
    for (const Shape& shape : caught.shapes) CHECK_FALSE(Contains(caught.failure->reason, std::to_string(shape.at("n"))));
  }

  TEST_CASE("answers are validated field by field: each bad one is an outcome with a reason") {
    const std::pair<const char*, const char*> violations[] = {
        {"MODE=notjson", "protocol violation: {answer}: not valid JSON"},
        {"MODE=badnonce", "protocol violation: nonce: expected the {nonce} this evaluation passed"},
        {"MODE=oneshape", "protocol violation: shapes: expected an array of the 2 timed shapes"},
        {"MODE=negative", "protocol violation: shapes[0].candidate_s[0]: expected a finite number of seconds, at least 1e-9, got -0.001"},
        {"MODE=wrongshape", "protocol violation: shapes[1].shape: expected the task's timed shape n=4096"},
        {"MODE=fewsamples", "protocol violation: shapes[0].candidate_s: expected at least 3 samples ({min_samples}), got 2"},
        {"MODE=extra", "protocol violation: speedup: expected no such field"},
        // A kernel that forges the executor's "withdrawn" to get no verdict
        // and stay `built` for the next run: no such field either.
        {"MODE=withdrawn", "protocol violation: withdrawn: expected no such field"},
        {"MODE=badoutcome", "protocol violation: outcome: expected one of measured"},
        {"MODE=noreason", "protocol violation: reason: expected a non-empty line"},
        {"MODE=noanswer", "protocol violation: the run command wrote no answer"},
        {"MODE=badprofile", "protocol violation: profile.mix.total: wrong type"},
        // Not followed: it read kestrel's own environment (API keys) into the log.
        {"MODE=linked", "protocol violation: {answer} is not a plain file"},
        {"MODE=fifo", "protocol violation: {answer} is not a plain file"},
        // Samples below any clock's reading were ranked at their ratio ("40x").
        {"MODE=tiny", "protocol violation: shapes[0].candidate_s[0]: expected a finite number of seconds, at least 1e-9"},
    };
    for (const auto& [mode, reason] : violations) {
      const Measurement m = EvalFake(mode);
      CHECK_MESSAGE(m.outcome == Outcome::kRejected, mode);
      CHECK_FALSE(m.withdrawn);
      CHECK_MESSAGE(Contains(m.reason, reason), mode << ": " << m.reason);
      CHECK(m.shapes.empty());
    }
    ::setenv("KESTREL_TEST_CANARY", "sk-canary-7f3a", 1);
    const Measurement linked = EvalFake("MODE=linked");
    CHECK_FALSE(Contains(linked.reason + linked.log, "sk-canary-7f3a"));
    ::unsetenv("KESTREL_TEST_CANARY");
  }

  TEST_CASE("an answer's log is kept to its head and tail, its reason to one line") {
    // A 50 MiB log was printed and stored with every measurement of the node.
    const Measurement m = EvalFake("MODE=hugelog");
    CHECK(m.outcome == Outcome::kWrong);
    CHECK(m.reason == "first line");
    CHECK(m.log.size() < 80 * 1024);
    CHECK(Contains(m.log, "[...]"));
  }

  TEST_CASE("a profile in the answer is the candidate's profile; without one the profile says so") {
    Evaluator& evaluator = Fake();
    CHECK(evaluator.CanProfile());
    const Candidate profiled{"/* MODE=profiled */", {}, evaluator.Toolchain(), {}};
    const BuildResult build = evaluator.Build(profiled);
    const Measurement m = evaluator.Measure(profiled, build);
    REQUIRE_MESSAGE(m.outcome == Outcome::kMeasured, m.reason);
    auto profile = evaluator.ProfileBuilt(profiled, build, m);
    REQUIRE(profile);
    REQUIRE(profile->counters);
    CHECK(profile->counters->source == "ncu");
    CHECK(*profile->counters->ipc == 1.5);
    CHECK(profile->unavailable == std::vector<std::string>{"pmu: none"});
    CHECK(Contains(ProfileDigest(*profile), "IPC 1.50"));

    const Candidate plain{"/* an honest kernel */", {}, evaluator.Toolchain(), {}};
    const BuildResult plain_build = evaluator.Build(plain);
    const Measurement plain_m = evaluator.Measure(plain, plain_build);
    REQUIRE(plain_m.outcome == Outcome::kMeasured);
    auto none = evaluator.ProfileBuilt(plain, plain_build, plain_m);
    REQUIRE(none);
    CHECK(!none->counters);
    REQUIRE(none->unavailable.size() == 1);
    CHECK(Contains(none->unavailable[0], "carried no \"profile\" object"));
  }

  TEST_CASE("a harness's own verdicts, and Kestrel's checks of a measured answer") {
    const Measurement wrong = EvalFake("MODE=wrong");
    CHECK(wrong.outcome == Outcome::kWrong);
    CHECK(wrong.reason == "y[3] is 7, expected 2");
    CHECK(Contains(wrong.log, "checked 3 sets"));

    const Measurement loose = EvalFake("MODE=loose");  // "measured", but errors of 0.5
    CHECK(loose.outcome == Outcome::kWrong);
    CHECK_MESSAGE(Contains(loose.reason, "exceed the task's tolerance"), loose.reason);

    const Measurement capped = EvalFake("MODE=capped");  // 200x
    CHECK(capped.outcome == Outcome::kRejected);
    CHECK_MESSAGE(Contains(capped.reason, "flagged for review: speedup 200"), capped.reason);
    CHECK(capped.shapes.size() == 2);  // kept for the review

    const Measurement honest = EvalFake("honest");
    REQUIRE(honest.outcome == Outcome::kMeasured);
    CHECK(honest.speedup == doctest::Approx(2.0));  // medians 2e-3 / 1e-3 on both shapes
    CHECK(honest.shapes[1].candidate_seconds == std::vector<double>{1e-3, 1.1e-3, 0.9e-3});

    const Measurement late = EvalFake("MODE=late");  // answered, then exited 3
    CHECK(late.outcome == Outcome::kMeasured);
    CHECK(Contains(late.log, "exited with status 3 after answering"));
  }

  TEST_CASE("a crash and a hang of the run command") {
    const Measurement crashed = EvalFake("MODE=crash");
    CHECK(crashed.outcome == Outcome::kCrashed);
    CHECK_MESSAGE(Contains(crashed.reason, "killed by SIGSEGV"), crashed.reason);
    CHECK(Contains(crashed.log, "about to crash"));

    // The harness's own child sleeps a duration no other process sleeps:
    // after the timeout no process on this machine may still do so.
    const std::string marker = "300." + std::to_string(::getpid()) + "7";
    const auto sleepers = [&] {
      int found = 0;
      std::error_code error;
      for (const auto& entry : std::filesystem::directory_iterator("/proc", error)) {
        const std::string cmdline = testing::ReadFile(entry.path() / "cmdline");
        if (cmdline.rfind("sleep", 0) == 0 && Contains(cmdline, marker)) ++found;
      }
      return found;
    };
    const auto start = std::chrono::steady_clock::now();
    const Measurement hung = EvalFake("MODE=hang ARG=" + marker);
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    CHECK(hung.outcome == Outcome::kTimedOut);
    CHECK_MESSAGE(Contains(hung.reason, "process group was killed"), hung.reason);
    CHECK(seconds < 30);
    bool gone = false;
    for (int i = 0; i < 100 && !gone; ++i) {
      gone = sleepers() == 0;
      if (!gone) std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    CHECK(gone);
  }

  TEST_CASE("the worked examples for Triton, NKI and Pallas are valid task folders") {
    for (const char* platform : {"triton", "nki", "pallas"}) {
      CAPTURE(platform);
      const auto dir = testing::SourceDir() / "examples" / "command" / platform;
      auto tasks = LoadTasks({dir});
      REQUIRE_MESSAGE(tasks.has_value(), testing::ErrorOf(tasks));
      REQUIRE(tasks->size() == 1);
      CHECK(tasks->front().language == "python");
      const auto config = nlohmann::json::parse(testing::ReadFile(dir / (std::string(platform) + ".json")));
      CHECK(config.at("task") == tasks->front().name);
      CommandEvaluatorOptions options;
      options.run = config.at("evaluator").at("run").get<std::vector<std::string>>();
      CHECK_MESSAGE(ValidateCommands(options).has_value(), platform);
    }
  }

  TEST_CASE("a bad set-up is refused when the evaluator is made") {
    CommandEvaluatorOptions unknown = FakeOptions();
    unknown.run.push_back("{sauce}");
    auto refused = MakeCommandEvaluator(ExampleTask(), unknown);
    REQUIRE_FALSE(refused.has_value());
    CHECK(refused.error().IsInvalidArgument());
    CHECK_MESSAGE(Contains(refused.error().message(), "evaluator.run[5]: unknown placeholder {sauce}"),
                  refused.error().message());

    CommandEvaluatorOptions missing = FakeOptions();
    missing.run[0] = "no-such-harness-xyz";
    refused = MakeCommandEvaluator(ExampleTask(), missing);
    REQUIRE_FALSE(refused.has_value());
    CHECK_MESSAGE(Contains(refused.error().message(), "evaluator.run[0]"), refused.error().message());

    CommandEvaluatorOptions silent = FakeOptions();
    silent.run = {"true"};  // answers nothing, even for the reference
    refused = MakeCommandEvaluator(ExampleTask(), silent);
    REQUIRE_FALSE(refused.has_value());
    CHECK_MESSAGE(Contains(refused.error().message(), "cannot measure the reference reference.c: rejected: protocol violation"),
                  refused.error().message());

    CommandEvaluatorOptions none = FakeOptions();
    none.run.clear();
    CHECK_FALSE(MakeCommandEvaluator(ExampleTask(), none).has_value());
  }
}

}  // namespace
}  // namespace kestrel
