#include "evaluators/shim.h"

#include <doctest.h>

#include "evaluators/compiler.h"
#include "scale_task.h"

namespace kestrel {
namespace {

TEST_SUITE("shim") {
  TEST_CASE("casts each argument as its role asks") {
    Task task = testing::MakeScaleTask();
    task.args.push_back({"z", ArgRole::kInOut, ScalarType::kF64, {"n"}, {}, 0.0});
    task.args.push_back({"k", ArgRole::kScalar, ScalarType::kI32, {}, {}, 3.0});
    const std::string shim = GenerateShim(task, "kernel.cpp");
    CHECK(shim.find("#include <cstdint>") < shim.find("#include \"kernel.cpp\""));
    CHECK(shim.find("extern \"C\" void kestrel_entry(void* const* args)") != std::string::npos);
    CHECK(shim.find("scale_add((const float*)args[0]") != std::string::npos);
    CHECK(shim.find("(float*)args[1]") != std::string::npos);
    CHECK(shim.find("*(const int64_t*)args[2]") != std::string::npos);
    CHECK(shim.find("*(const float*)args[3]") != std::string::npos);
    CHECK(shim.find("(double*)args[4]") != std::string::npos);
    CHECK(shim.find("*(const int32_t*)args[5]") != std::string::npos);
  }
}

TEST_SUITE("compiler") {
  TEST_CASE("a compiler log is cut after its first errors") {
    std::string log = "In file included from shim.cpp:3:\n";
    for (int i = 0; i < 10; ++i) {
      log += "kernel.cpp:" + std::to_string(i) + ":1: error: bad thing " + std::to_string(i) + "\n";
      log += "    context line\n";
    }
    const std::string trimmed = TrimCompilerLog(log, 50, 3);
    CHECK(trimmed.find("bad thing 2") != std::string::npos);
    CHECK(trimmed.find("bad thing 3") == std::string::npos);
    CHECK(trimmed.find("7 more errors") != std::string::npos);
    CHECK(FirstErrorLine(log) == "kernel.cpp:0:1: error: bad thing 0");
    CHECK(TrimCompilerLog(std::string(200, 'x') + "\n", 50, 3).size() < 320);
  }

  TEST_CASE("the shim and a kernel build into a shared object") {
    testing::TempDir dir;
    testing::WriteFile(dir / "kernel.cpp", testing::KernelSource("scale_ref"));
    testing::WriteFile(dir / "shim.cpp", GenerateShim(testing::MakeScaleTask(), "kernel.cpp"));
    const BuildResult ok = CompileSharedLibrary({"c++", {"-O1"}, dir / "shim.cpp", dir / "kernel.so", 60, {}});
    CHECK(ok.ok);
    CHECK(std::filesystem::exists(dir / "kernel.so"));
    CHECK_FALSE(std::filesystem::exists(dir / "kernel.so.tmp"));

    testing::WriteFile(dir / "kernel.cpp", "void scale_add(int broken) {}\n");
    const BuildResult bad = CompileSharedLibrary({"c++", {}, dir / "shim.cpp", dir / "bad.so", 60, {}});
    CHECK_FALSE(bad.ok);
    CHECK(bad.log.find("error") != std::string::npos);
    CHECK_FALSE(std::filesystem::exists(dir / "bad.so"));

    const BuildResult missing = CompileSharedLibrary({"no-such-compiler-xyz", {}, dir / "shim.cpp", dir / "m.so", 60, {}});
    CHECK_FALSE(missing.ok);
    CHECK(missing.log.find("no-such-compiler-xyz") != std::string::npos);
  }
}

}  // namespace
}  // namespace kestrel
