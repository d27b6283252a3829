// LoadTask and friends: the built-in tasks, the CONTRACT.md example, and one
// broken task.json per validation rule (the error must name the file and the
// field).

#include "core/hidden_shapes.h"
#include "core/task.h"

#include <doctest.h>

#include <limits>

#include <algorithm>
#include <filesystem>
#include <functional>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/candidate.h"
#include "core/expr.h"
#include "tests/testing.h"

namespace kestrel {
namespace {

using Json = nlohmann::json;
using testing::TempDir;
using testing::WriteFile;

// The task.json of CONTRACT.md, "Tasks", verbatim.
constexpr const char* kContractExample = R"({
  "name": "softmax",
  "description": "Numerically stable softmax over each row of a rows x cols float32 matrix.",
  "language": "cpp",
  "entry": "softmax",
  "args": [
    {"name": "x", "role": "input", "type": "f32", "shape": ["rows", "cols"],
     "init": {"dist": "normal", "mean": 0.0, "std": 4.0}},
    {"name": "y", "role": "output", "type": "f32", "shape": ["rows", "cols"]},
    {"name": "rows", "role": "dim"},
    {"name": "cols", "role": "dim"}
  ],
  "shapes": [{"rows": 2048, "cols": 1024}, {"rows": 64, "cols": 16384}],
  "check_shapes": [{"rows": 7, "cols": 33}],
  "tolerance": {"rtol": 1e-4, "atol": 1e-7},
  "flops": "5*rows*cols",
  "bytes": "8*rows*cols",
  "reference": "reference.cpp",
  "seeds": ["seed.cpp"],
  "baseline": "baseline.cpp"
})";

// Writes a task folder `dir` (task.json plus the sources every test task names).
void WriteTask(const std::filesystem::path& dir, const std::string& spec) {
  WriteFile(dir / "task.json", spec);
  WriteFile(dir / "reference.cpp", "// reference\n");
  WriteFile(dir / "seed.cpp", "// seed\n");
}

// A small valid task; each validation case breaks one thing in it.
Json ValidSpec() {
  Json spec = Json::parse(kContractExample);
  spec["name"] = "t";
  spec.erase("baseline");
  return spec;
}

std::size_t Combinations(const std::vector<KnobSpec>& knobs) {
  std::size_t count = 1;
  for (const auto& knob : knobs) count *= knob.values.size();
  return count;
}

bool Contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

TEST_SUITE("task") {
  TEST_CASE("every built-in task loads and opens a real knob space") {
    REQUIRE(std::filesystem::is_directory(testing::TasksDir()));
    auto tasks = LoadTasks({testing::TasksDir()});
    REQUIRE_MESSAGE(tasks.has_value(), testing::ErrorOf(tasks));
    std::vector<std::string> names;
    for (const auto& task : *tasks) names.push_back(task.name);
    CHECK(names == std::vector<std::string>{"add_layernorm", "add_rmsnorm", "argmax", "attention_head_f16",
                                            "bias_gelu", "bmm", "broadcast_affine", "colsum", "conv1d",
                                            "conv1d_relu", "convert_f16_bf16", "cumsum", "dequant_gemm", "dot_i8",
                                            "gather", "gelu_bf16", "gemm_bias_gelu", "gemm_bias_residual",
                                            "histogram", "layernorm", "masked_softmax", "matmul",
                                            "matmul_bf16_bias_relu", "matmul_cuda", "mlp_block", "prenorm_attention",
                                            "resnet_block", "rmsnorm", "rmsnorm_bf16", "scatter_add", "silu_mul_f16",
                                            "softmax", "softmax_cuda", "stencil2d", "swiglu_mlp_bf16", "topk",
                                            "transpose", "triad"});
    for (const auto& task : *tasks) {
      CAPTURE(task.name);
      CHECK(!task.reference.text.empty());
      CHECK(Contains(task.reference.text, task.entry + "("));
      REQUIRE(!task.seeds.empty());
      for (const auto& seed : task.seeds) {
        CHECK(Contains(seed.text, task.entry + "("));
        auto knobs = ParseKnobs(seed.text);
        REQUIRE_MESSAGE(knobs.has_value(), testing::ErrorOf(knobs));
        CHECK(Combinations(*knobs) >= 30);
        CHECK(ParseKnobs(task.reference.text)->empty());
      }
      for (const auto& shape : task.shapes) {
        CHECK(task.Flops(shape).value_or(0) > 0);
        CHECK(task.Bytes(shape).value_or(0) > 0);
      }
      CHECK(!task.check_shapes.empty());
    }
  }

  TEST_CASE("the built-in softmax is the CONTRACT.md example") {
    auto task = FindTask("softmax", {testing::TasksDir()});
    REQUIRE_MESSAGE(task.has_value(), testing::ErrorOf(task));
    Json example = Json::parse(kContractExample);
    // The example plus the hidden-shape ranges, its suite level and its
    // baseline's libraries (issue 20: oneDNN's softmax), which it predates.
    example["baseline_libs"] = Json::parse(R"(["dnnl", "gomp"])");
    example["shape_ranges"] = Json::parse(R"({"rows": [1, 2048], "cols": [1, 16384]})");
    example["level"] = 1;
    CHECK(Json::parse(task->spec_text) == example);
    CHECK(task->spec_text == testing::ReadFile(testing::TasksDir() / "softmax" / "task.json"));

    CHECK(task->name == "softmax");
    CHECK(task->description == "Numerically stable softmax over each row of a rows x cols float32 matrix.");
    CHECK(task->language == "cpp");
    CHECK(task->entry == "softmax");
    CHECK(task->Signature() == "void softmax(const float* x, float* y, int64_t rows, int64_t cols)");
    REQUIRE(task->args.size() == 4);
    const ArgSpec& x = task->args[0];
    CHECK(x.name == "x");
    CHECK(x.role == ArgRole::kInput);
    CHECK(x.type == ScalarType::kF32);
    CHECK(x.shape == std::vector<std::string>{"rows", "cols"});
    CHECK(x.init.dist == InitSpec::Dist::kNormal);
    CHECK(x.init.mean == 0.0);
    CHECK(x.init.std == 4.0);
    CHECK(task->args[1].name == "y");
    CHECK(task->args[1].role == ArgRole::kOutput);
    CHECK(task->args[2].role == ArgRole::kDim);
    CHECK(task->args[2].type == ScalarType::kI64);
    CHECK(task->args[3].name == "cols");
    CHECK(task->shapes == std::vector<Shape>{{{"rows", 2048}, {"cols", 1024}}, {{"rows", 64}, {"cols", 16384}}});
    CHECK(task->check_shapes == std::vector<Shape>{{{"rows", 7}, {"cols", 33}}});
    CHECK(task->tolerance.rtol == 1e-4);
    CHECK(task->tolerance.atol == 1e-7);
    CHECK(task->flops == "5*rows*cols");
    CHECK(task->bytes == "8*rows*cols");
    CHECK(task->reference.name == "reference.cpp");
    REQUIRE(task->seeds.size() == 1);
    CHECK(task->seeds[0].name == "seed.cpp");
    REQUIRE(task->baseline.has_value());  // oneDNN's softmax
    CHECK(task->baseline->text.find("dnnl::softmax_forward") != std::string::npos);
    CHECK(task->baseline_libs == std::vector<std::string>{"dnnl", "gomp"});
    CHECK(task->dir == testing::TasksDir() / "softmax");

    const Shape& shape = task->shapes[0];
    CHECK(task->ElementCount(x, shape) == 2048 * 1024);
    CHECK(task->Flops(shape) == 5.0 * 2048 * 1024);
    CHECK(task->Bytes(shape) == 8.0 * 2048 * 1024);
    CHECK(ToString(shape) == "cols=1024 rows=2048");
  }

  TEST_CASE("the other built-in signatures") {
    auto matmul = FindTask("matmul", {testing::TasksDir()});
    REQUIRE(matmul.has_value());
    CHECK(matmul->Signature() == "void matmul(const float* a, const float* b, float* c, int64_t m, int64_t n, int64_t k)");
    CHECK(matmul->Flops({{"m", 2}, {"n", 3}, {"k", 4}}) == 48.0);
    REQUIRE(matmul->baseline.has_value());  // OpenBLAS's cblas_sgemm
    CHECK(matmul->baseline->text.find("cblas_sgemm") != std::string::npos);
    CHECK(matmul->baseline_libs == std::vector<std::string>{"openblas"});
    auto layernorm = FindTask("layernorm", {testing::TasksDir()});
    REQUIRE(layernorm.has_value());
    CHECK(layernorm->Signature() ==
          "void layernorm(const float* x, const float* gamma, const float* beta, float* y, int64_t rows, int64_t cols)");
  }

  TEST_CASE("the CONTRACT.md example with its baseline loads") {
    TempDir temp;
    const auto dir = temp / "softmax";
    WriteTask(dir, kContractExample);
    WriteFile(dir / "baseline.cpp", "// expert\n");
    auto task = LoadTask(dir);
    REQUIRE_MESSAGE(task.has_value(), testing::ErrorOf(task));
    REQUIRE(task->baseline.has_value());
    CHECK(task->baseline->name == "baseline.cpp");
    CHECK(task->baseline->text == "// expert\n");
    CHECK(task->baseline_libs.empty());
    CHECK(task->reference.text == "// reference\n");
    CHECK(task->seeds[0].text == "// seed\n");
    CHECK(task->spec_text == kContractExample);
  }

  TEST_CASE("every role, type and literal dim") {
    TempDir temp;
    Json spec = ValidSpec();
    spec["args"] = Json::parse(R"([
      {"name": "acc", "role": "inout", "type": "f64", "shape": ["n", 4], "init": {"dist": "uniform", "lo": -2, "hi": 2}},
      {"name": "idx", "role": "input", "type": "i32", "shape": ["n"], "init": {"dist": "int", "lo": 0, "hi": 9}},
      {"name": "mask", "role": "input", "type": "u8", "shape": ["3"]},
      {"name": "small", "role": "output", "type": "i8", "shape": ["n"]},
      {"name": "big", "role": "output", "type": "i64", "shape": ["n"]},
      {"name": "alpha", "role": "scalar", "type": "f32", "value": 0.5},
      {"name": "count", "role": "scalar", "type": "i64", "value": 3},
      {"name": "n", "role": "dim", "type": "i64"}
    ])");
    spec["shapes"] = Json::parse(R"([{"n": 10}])");
    spec["check_shapes"] = Json::array();
    spec["flops"] = "2*n";
    spec["bytes"] = "8*n*4";
    WriteTask(temp / "t", spec.dump(2));
    auto task = LoadTask(temp / "t");
    REQUIRE_MESSAGE(task.has_value(), testing::ErrorOf(task));
    CHECK(task->Signature() ==
          "void softmax(double* acc, const int32_t* idx, const uint8_t* mask, int8_t* small, int64_t* big, "
          "float alpha, int64_t count, int64_t n)");
    const Shape shape = {{"n", 10}};
    CHECK(task->ElementCount(task->args[0], shape) == 40);
    CHECK(task->ElementCount(task->args[2], shape) == 3);
    CHECK(task->args[0].init.dist == InitSpec::Dist::kUniform);
    CHECK(task->args[1].init.dist == InitSpec::Dist::kInt);
    CHECK(task->args[1].init.hi == 9.0);
    CHECK(task->args[5].value == 0.5);
    CHECK(task->check_shapes.empty());
  }

  TEST_CASE("names of types and roles") {
    CHECK(ToString(ScalarType::kF32) == "f32");
    CHECK(ToString(ScalarType::kU8) == "u8");
    CHECK(CppType(ScalarType::kF32) == "float");
    CHECK(CppType(ScalarType::kF64) == "double");
    CHECK(CppType(ScalarType::kI8) == "int8_t");
    CHECK(CppType(ScalarType::kU8) == "uint8_t");
    CHECK(CppType(ScalarType::kI32) == "int32_t");
    CHECK(CppType(ScalarType::kI64) == "int64_t");
    CHECK(SizeOf(ScalarType::kF32) == 4);
    CHECK(SizeOf(ScalarType::kF64) == 8);
    CHECK(SizeOf(ScalarType::kI8) == 1);
    CHECK(SizeOf(ScalarType::kU8) == 1);
    CHECK(SizeOf(ScalarType::kI32) == 4);
    CHECK(SizeOf(ScalarType::kI64) == 8);
    for (ScalarType type : kScalarTypes) CHECK(ParseScalarType(ToString(type)) == type);
    CHECK(!ParseScalarType("f8").has_value());
    CHECK(ParseScalarType("f16") == ScalarType::kF16);
    CHECK(IsFloating(ScalarType::kF64));
    CHECK(!IsFloating(ScalarType::kI8));
    CHECK(ToString(ArgRole::kInput) == "input");
    CHECK(ToString(ArgRole::kOutput) == "output");
    CHECK(ToString(ArgRole::kInOut) == "inout");
    CHECK(ToString(ArgRole::kDim) == "dim");
    CHECK(ToString(ArgRole::kScalar) == "scalar");
    CHECK(ToString(Shape{}).empty());
  }

  TEST_CASE("a task's suite level: 0 when absent, else 1 to 3") {
    TempDir temp;
    Json spec = ValidSpec();
    WriteTask(temp / "t", spec.dump());
    auto absent = LoadTask(temp / "t");
    REQUIRE_MESSAGE(absent.has_value(), testing::ErrorOf(absent));
    CHECK(absent->level == 0);
    spec["level"] = 2;
    WriteTask(temp / "t", spec.dump());
    auto two = LoadTask(temp / "t");
    REQUIRE_MESSAGE(two.has_value(), testing::ErrorOf(two));
    CHECK(two->level == 2);
  }

  TEST_CASE("hidden shapes: drawn within the ranges, never a shown shape, no larger than the largest timed one") {
    TempDir temp;
    Json spec = ValidSpec();
    spec["shape_ranges"] = Json::parse(R"({"rows": [1, 4096], "cols": [7, 40000]})");
    WriteTask(temp / "t", spec.dump());
    auto task = LoadTask(temp / "t");
    REQUIRE_MESSAGE(task.has_value(), testing::ErrorOf(task));
    CHECK(task->shape_ranges.at("rows") == std::pair<std::int64_t, std::int64_t>{1, 4096});
    std::uint64_t largest = 0;
    for (const Shape& shape : task->shapes) largest = std::max(largest, BufferBytes(*task, shape));
    CHECK(largest == 2048ull * 1024 * 4 * 2);
    std::set<Shape> seen;
    for (std::uint64_t salt = 0; salt < 200; ++salt) {
      const std::uint64_t seed = HiddenShapeSeed(1, salt);
      const std::vector<Shape> drawn = DrawHiddenShapes(*task, seed);
      REQUIRE(drawn.size() == static_cast<std::size_t>(kHiddenShapeCount));
      CHECK(drawn == DrawHiddenShapes(*task, seed));  // deterministic
      CHECK(drawn[0] != drawn[1]);
      for (const Shape& shape : drawn) {
        CAPTURE(ToString(shape));
        CHECK(shape.at("rows") >= 1);
        CHECK(shape.at("rows") <= 4096);
        CHECK(shape.at("cols") >= 7);
        CHECK(shape.at("cols") <= 40000);
        CHECK(std::find(task->shapes.begin(), task->shapes.end(), shape) == task->shapes.end());
        CHECK(std::find(task->check_shapes.begin(), task->check_shapes.end(), shape) == task->check_shapes.end());
        CHECK(BufferBytes(*task, shape) <= largest);
        seen.insert(shape);
      }
    }
    CHECK(seen.size() > 300);  // each node meets shapes of its own
    // Small and large sizes alike (log-uniform): both ends of rows are met.
    const auto small = std::count_if(seen.begin(), seen.end(), [](const Shape& s) { return s.at("rows") < 64; });
    const auto large = std::count_if(seen.begin(), seen.end(), [](const Shape& s) { return s.at("rows") >= 512; });
    CHECK(small > 50);
    CHECK(large > 20);
    // A dim without a range keeps its first timed size.
    task->shape_ranges.erase("cols");
    for (const Shape& shape : DrawHiddenShapes(*task, 3)) CHECK(shape.at("cols") == 1024);
    task->shape_ranges.clear();
    CHECK(DrawHiddenShapes(*task, 3).empty());
  }

  TEST_CASE("a task without flops or bytes has no formula") {
    TempDir temp;
    Json spec = ValidSpec();
    spec.erase("flops");
    spec.erase("bytes");
    WriteTask(temp / "t", spec.dump());
    auto task = LoadTask(temp / "t");
    REQUIRE(task.has_value());
    CHECK(!task->Flops(task->shapes[0]).has_value());
    CHECK(!task->Bytes(task->shapes[0]).has_value());
  }

  TEST_CASE("a broken task.json is refused naming the file and the field") {
    TempDir temp;
    const auto dir = temp / "t";
    const std::string file = (dir / "task.json").string();
    // Writes `spec` (a JSON value or raw text), loads it, and checks the message.
    const auto expect = [&](const std::string& text, const std::string& field, const std::string& expected) {
      WriteTask(dir, text);
      auto task = LoadTask(dir);
      REQUIRE_MESSAGE(!task.has_value(), "accepted: ", text);
      const std::string& message = task.error().message();
      CAPTURE(message);
      CHECK(task.error().IsInvalidArgument());
      CHECK(message.rfind(file + ": " + field, 0) == 0);
      CHECK(Contains(message, expected));
    };
    const auto broken = [&](const std::function<void(Json&)>& edit, const std::string& field,
                            const std::string& expected) {
      Json spec = ValidSpec();
      edit(spec);
      expect(spec.dump(2), field, expected);
    };

    SUBCASE("not JSON") { expect("{\"name\": \"t\",", "not valid JSON", "parse error"); }
    SUBCASE("a field twice") {
      std::string text = ValidSpec().dump(2);
      text.insert(text.find('{') + 1, "\"seeds\": [\"seed.cpp\"],\n");
      expect(text, "seeds: the field appears twice", "");
    }
    SUBCASE("a nested field twice") {
      std::string text = ValidSpec().dump(2);
      text.insert(text.find("\"rtol\""), "\"rtol\": 0.1, ");
      expect(text, "tolerance.rtol: the field appears twice", "");  // named by its path
    }
    SUBCASE("not an object") { expect("[1, 2]", "expected a JSON object", "got an array"); }
    SUBCASE("unknown top-level field") {
      broken([](Json& s) { s["shape"] = Json::array(); }, "shape: unknown field", "expected one of name");
    }
    SUBCASE("name missing") { broken([](Json& s) { s.erase("name"); }, "name: missing", "expected a string"); }
    SUBCASE("name not a string") { broken([](Json& s) { s["name"] = 3; }, "name: expected a string", "got 3"); }
    SUBCASE("name with bad characters") {
      broken([](Json& s) { s["name"] = "a b"; }, "name: expected letters, digits", "\"a b\"");
    }
    SUBCASE("name is not the folder's") {
      broken([](Json& s) { s["name"] = "other"; }, "name: expected the task folder's name \"t\"", "\"other\"");
    }
    SUBCASE("description missing") { broken([](Json& s) { s.erase("description"); }, "description: missing", "string"); }
    SUBCASE("description empty") { broken([](Json& s) { s["description"] = ""; }, "description: expected a non-empty", "\"\""); }
    SUBCASE("language") {
      broken([](Json& s) { s["language"] = "rust"; }, "language: expected one of cpp cuda c python", "got \"rust\"");
    }
    SUBCASE("entry not an identifier") {
      broken([](Json& s) { s["entry"] = "soft-max"; }, "entry: expected a C identifier", "\"soft-max\"");
    }
    SUBCASE("entry a keyword") { broken([](Json& s) { s["entry"] = "float"; }, "entry: expected a C identifier", "\"float\""); }
    SUBCASE("args missing") { broken([](Json& s) { s.erase("args"); }, "args: missing", "non-empty array"); }
    SUBCASE("args empty") { broken([](Json& s) { s["args"] = Json::array(); }, "args: expected a non-empty array", "got an array"); }
    SUBCASE("arg not an object") { broken([](Json& s) { s["args"][1] = "y"; }, "args[1]: expected an object", "\"y\""); }
    SUBCASE("arg unknown field") {
      broken([](Json& s) { s["args"][0]["shpae"] = s["args"][0]["shape"]; }, "args[0].shpae: unknown field",
             "expected one of name role type shape init value");
    }
    SUBCASE("arg name missing") { broken([](Json& s) { s["args"][1].erase("name"); }, "args[1].name: missing", "string"); }
    SUBCASE("arg name not an identifier") {
      broken([](Json& s) { s["args"][1]["name"] = "1y"; }, "args[1].name: expected a C identifier", "\"1y\"");
    }
    SUBCASE("arg name a keyword") {
      broken([](Json& s) { s["args"][1]["name"] = "int"; }, "args[1].name: expected a C identifier", "\"int\"");
    }
    SUBCASE("arg name twice") {
      broken([](Json& s) { s["args"][1]["name"] = "x"; }, "args[1].name: expected a unique name", "\"x\"");
    }
    SUBCASE("role missing") {
      broken([](Json& s) { s["args"][1].erase("role"); }, "args[1].role: missing",
             "expected one of input output inout dim scalar");
    }
    SUBCASE("role unknown") {
      broken([](Json& s) { s["args"][1]["role"] = "in"; }, "args[1].role: expected one of input output inout dim scalar",
             "got \"in\"");
    }
    SUBCASE("type unknown") {
      broken([](Json& s) { s["args"][1]["type"] = "f8"; },
             "args[1].type: expected one of f32 f64 i8 u8 i32 i64 f16 bf16", "got \"f8\"");
    }
    SUBCASE("a scalar of a 16-bit float") {
      broken([](Json& s) { s["args"] = Json::parse(R"([{"name": "a", "role": "scalar", "type": "bf16", "value": 1},
                                                       {"name": "y", "role": "output", "type": "f32", "shape": ["rows", "cols"]},
                                                       {"name": "rows", "role": "dim"}, {"name": "cols", "role": "dim"}])"); },
             "args[0].type: a scalar of bf16 is not supported", "pass an f32");
    }
    SUBCASE("buffer without a type") { broken([](Json& s) { s["args"][1].erase("type"); }, "args[1].type: missing", "f32"); }
    SUBCASE("dim with a type") {
      broken([](Json& s) { s["args"][2]["type"] = "f32"; }, "args[2].type: expected \"i64\" or no type", "\"f32\"");
    }
    SUBCASE("dim with a shape") {
      broken([](Json& s) { s["args"][2]["shape"] = {"cols"}; }, "args[2].shape: not allowed for role dim", "only input");
    }
    SUBCASE("buffer without a shape") {
      broken([](Json& s) { s["args"][1].erase("shape"); }, "args[1].shape: missing", "dim names");
    }
    SUBCASE("empty shape") {
      broken([](Json& s) { s["args"][1]["shape"] = Json::array(); }, "args[1].shape: expected a non-empty array", "");
    }
    SUBCASE("shape entry of the wrong kind") {
      broken([](Json& s) { s["args"][1]["shape"][1] = 2.5; }, "args[1].shape[1]: expected a dim name or a positive integer",
             "got 2.5");
    }
    SUBCASE("shape entry zero") {
      broken([](Json& s) { s["args"][1]["shape"][0] = 0; }, "args[1].shape[0]: expected a dim name or a positive integer",
             "got 0");
    }
    SUBCASE("shape names an undeclared dim") {
      broken([](Json& s) { s["args"][1]["shape"][1] = "colz"; }, "args[1].shape[1]: expected the name of an arg with role dim",
             "got \"colz\"");
    }
    SUBCASE("shape names an arg that is not a dim") {
      broken([](Json& s) { s["args"][1]["shape"][1] = "x"; }, "args[1].shape[1]: expected the name of an arg with role dim",
             "(rows cols)");
    }
    SUBCASE("scalar without a value") {
      broken([](Json& s) { s["args"].push_back({{"name", "alpha"}, {"role", "scalar"}, {"type", "f32"}}); },
             "args[4].value: missing", "number");
    }
    SUBCASE("integer scalar with a fraction") {
      broken([](Json& s) { s["args"].push_back({{"name", "k"}, {"role", "scalar"}, {"type", "i32"}, {"value", 1.5}}); },
             "args[4].value: expected an integer that fits i32", "1.5");
    }
    SUBCASE("f32 scalar beyond what an f32 holds (it was passed as inf)") {
      broken([](Json& s) { s["args"].push_back({{"name", "a"}, {"role", "scalar"}, {"type", "f32"}, {"value", 1e300}}); },
             "args[4].value: expected a number an f32 holds", "1e+300");
    }
    SUBCASE("value on a buffer") {
      broken([](Json& s) { s["args"][0]["value"] = 1; }, "args[0].value: not allowed for role input", "only scalar");
    }
    SUBCASE("init on an output") {
      broken([](Json& s) { s["args"][1]["init"] = s["args"][0]["init"]; }, "args[1].init: not allowed for role output",
             "only input and inout");
    }
    SUBCASE("init dist unknown") {
      broken([](Json& s) { s["args"][0]["init"]["dist"] = "gauss"; }, "args[0].init.dist: expected one of normal uniform int",
             "\"gauss\"");
    }
    SUBCASE("init field of another dist") {
      broken([](Json& s) { s["args"][0]["init"]["lo"] = 0; }, "args[0].init.lo: unknown field", "dist mean std");
    }
    SUBCASE("init std not positive") {
      broken([](Json& s) { s["args"][0]["init"]["std"] = 0; }, "args[0].init.std: expected a positive number", "got 0");
    }
    SUBCASE("init mean not a number") {
      broken([](Json& s) { s["args"][0]["init"]["mean"] = "0"; }, "args[0].init.mean: expected a number", "\"0\"");
    }
    SUBCASE("uniform with lo above hi") {
      broken([](Json& s) { s["args"][0]["init"] = {{"dist", "uniform"}, {"lo", 2}, {"hi", 1}}; },
             "args[0].init.hi: expected hi >= lo", "got 1");
    }
    SUBCASE("uniform without hi") {
      broken([](Json& s) { s["args"][0]["init"] = {{"dist", "uniform"}, {"lo", 2}}; }, "args[0].init.hi: missing", "number");
    }
    SUBCASE("int dist with a fraction") {
      broken([](Json& s) { s["args"][0]["init"] = {{"dist", "int"}, {"lo", 0.5}, {"hi", 3}}; },
             "args[0].init.lo: expected an integer", "0.5");
    }
    SUBCASE("int range outside the type") {
      broken([](Json& s) {
               s["args"][0]["type"] = "u8";
               s["args"][0]["init"] = {{"dist", "int"}, {"lo", -1}, {"hi", 3}};
             },
             "args[0].init: expected lo and hi within the range of u8", "");
    }
    SUBCASE("no output") {
      broken([](Json& s) { s["args"][1]["role"] = "input"; }, "args: expected at least one argument with role output or inout",
             "");
    }
    SUBCASE("shapes missing") { broken([](Json& s) { s.erase("shapes"); }, "shapes: missing", "{dim: size}"); }
    SUBCASE("shapes empty") { broken([](Json& s) { s["shapes"] = Json::array(); }, "shapes: expected a non-empty array", ""); }
    SUBCASE("shape not an object") { broken([](Json& s) { s["shapes"][1] = 64; }, "shapes[1]: expected an object", "got 64"); }
    SUBCASE("a shape whose buffer no machine holds (its byte count wrapped past 2^63, and the reference crashed)") {
      broken([](Json& s) { s["shapes"][1]["rows"] = std::numeric_limits<std::int64_t>::max(); },
             "shapes[1]: buffer x would take", "more than the 1 TiB");
      broken([](Json& s) { s["check_shapes"][0]["cols"] = std::int64_t{1} << 40; }, "check_shapes[0]: buffer x", "1 TiB");
    }
    SUBCASE("shape misses a dim") { broken([](Json& s) { s["shapes"][1].erase("cols"); }, "shapes[1].cols: missing", "positive"); }
    SUBCASE("shape with an unknown dim") {
      broken([](Json& s) { s["shapes"][0]["colz"] = 4; }, "shapes[0].colz: unknown dim", "rows");
    }
    SUBCASE("shape size not positive") {
      broken([](Json& s) { s["shapes"][1]["cols"] = 0; }, "shapes[1].cols: expected a positive integer", "got 0");
    }
    SUBCASE("shape size not an integer") {
      broken([](Json& s) { s["shapes"][1]["cols"] = 16.5; }, "shapes[1].cols: expected a positive integer", "got 16.5");
    }
    SUBCASE("shape size a string") {
      broken([](Json& s) { s["shapes"][0]["rows"] = "2048"; }, "shapes[0].rows: expected a positive integer", "\"2048\"");
    }
    SUBCASE("check_shapes follow the same rules") {
      broken([](Json& s) { s["check_shapes"][0]["rows"] = -7; }, "check_shapes[0].rows: expected a positive integer",
             "got -7");
    }
    SUBCASE("check_shapes not an array") {
      broken([](Json& s) { s["check_shapes"] = Json::object(); }, "check_shapes: expected an array", "an object");
    }
    SUBCASE("level out of range") {
      broken([](Json& s) { s["level"] = 4; }, "level: expected the suite level 1, 2 or 3", "got 4");
    }
    SUBCASE("level not an integer") {
      broken([](Json& s) { s["level"] = "2"; }, "level: expected the suite level 1, 2 or 3", "got \"2\"");
    }
    SUBCASE("shape_ranges not an object") {
      broken([](Json& s) { s["shape_ranges"] = Json::array(); }, "shape_ranges: expected an object", "got an array");
    }
    SUBCASE("shape_ranges of an unknown dim") {
      broken([](Json& s) { s["shape_ranges"] = Json::parse(R"({"depth": [1, 4]})"); },
             "shape_ranges.depth: unknown dim", "cols rows");
    }
    SUBCASE("shape_ranges with lo above hi") {
      broken([](Json& s) { s["shape_ranges"] = Json::parse(R"({"rows": [9, 4]})"); },
             "shape_ranges.rows: expected [lo, hi]", "[9,4]");
    }
    SUBCASE("shape_ranges with a zero") {
      broken([](Json& s) { s["shape_ranges"] = Json::parse(R"({"rows": [0, 4]})"); },
             "shape_ranges.rows: expected [lo, hi], two positive integers", "");
    }
    SUBCASE("tolerance missing") { broken([](Json& s) { s.erase("tolerance"); }, "tolerance: missing", "rtol"); }
    SUBCASE("tolerance negative") {
      broken([](Json& s) { s["tolerance"]["atol"] = -1e-7; }, "tolerance.atol: expected a non-negative number", "");
    }
    SUBCASE("tolerance unknown field") {
      broken([](Json& s) { s["tolerance"]["rtl"] = 1e-4; }, "tolerance.rtl: unknown field", "rtol atol");
    }
    SUBCASE("tolerance field missing") { broken([](Json& s) { s["tolerance"].erase("rtol"); }, "tolerance.rtol: missing", ""); }
    SUBCASE("flops names an unknown dim") {
      broken([](Json& s) { s["flops"] = "5*rows*colz"; }, "flops: expected an arithmetic expression",
             "at column 8: unknown name 'colz'");
    }
    SUBCASE("flops not a string") { broken([](Json& s) { s["flops"] = 5; }, "flops: expected a string", "got 5"); }
    SUBCASE("bytes does not parse") {
      broken([](Json& s) { s["bytes"] = "8*(rows*cols"; }, "bytes: expected an arithmetic expression", "not closed");
    }
    SUBCASE("reference missing") { broken([](Json& s) { s.erase("reference"); }, "reference: missing", "file name"); }
    SUBCASE("reference file absent") {
      broken([](Json& s) { s["reference"] = "ref.cpp"; }, "reference: expected an existing file", "\"ref.cpp\"");
    }
    SUBCASE("reference outside the folder") {
      broken([](Json& s) { s["reference"] = "../reference.cpp"; }, "reference: expected a file name inside the task folder",
             "../reference.cpp");
    }
    SUBCASE("reference absolute") {
      broken([](Json& s) { s["reference"] = "/etc/passwd"; }, "reference: expected a file name inside the task folder", "");
    }
    SUBCASE("seeds missing") { broken([](Json& s) { s.erase("seeds"); }, "seeds: missing", "non-empty array"); }
    SUBCASE("seeds empty") { broken([](Json& s) { s["seeds"] = Json::array(); }, "seeds: expected a non-empty array", ""); }
    SUBCASE("seeds a string") { broken([](Json& s) { s["seeds"] = "seed.cpp"; }, "seeds: expected a non-empty array", ""); }
    SUBCASE("seed file absent") {
      broken([](Json& s) { s["seeds"].push_back("seed2.cpp"); }, "seeds[1]: expected an existing file", "\"seed2.cpp\"");
    }
    SUBCASE("seed twice") {
      broken([](Json& s) { s["seeds"].push_back("seed.cpp"); }, "seeds[1]: expected each seed once", "");
    }
    SUBCASE("baseline file absent") {
      broken([](Json& s) { s["baseline"] = "baseline.cpp"; }, "baseline: expected an existing file", "\"baseline.cpp\"");
    }
    SUBCASE("baseline_libs without a baseline") {
      broken([](Json& s) { s["baseline_libs"] = {"openblas"}; }, "baseline_libs: given without a baseline", "");
    }
    SUBCASE("baseline_libs a string") {
      broken([](Json& s) { s["baseline"] = "baseline.cpp", s["baseline_libs"] = "openblas"; }, "baseline_libs: expected an array of library names",
             "\"openblas\"");
    }
    SUBCASE("baseline_libs with a flag instead of a name") {
      broken([](Json& s) { s["baseline"] = "baseline.cpp", s["baseline_libs"] = {"-lopenblas"}; }, "baseline_libs: expected an array of library names",
             "-lopenblas");
    }
  }

  TEST_CASE("a folder without task.json") {
    TempDir temp;
    auto task = LoadTask(temp.path());
    REQUIRE(!task.has_value());
    CHECK(task.error().IsInvalidArgument());
    CHECK(Contains(task.error().message(), (temp.path() / "task.json").string()));
  }

  TEST_CASE("a seed whose knob declarations cannot be read is refused with the task, naming the seed and the line") {
    // Once listed as healthy with 0 configurations, and every run of it
    // failed after creating its run.
    TempDir temp;
    WriteTask(temp / "t", ValidSpec().dump());
    WriteFile(temp / "t" / "seed.cpp", "// kestrel:knob A 1 2\n// kestrel:knob A 3\nvoid f() {}\n");
    auto task = LoadTask(temp / "t");
    REQUIRE(!task.has_value());
    CHECK(task.error().IsInvalidArgument());
    CHECK(Contains(task.error().message(), (temp / "t" / "seed.cpp").string()));
    CHECK(Contains(task.error().message(), "line 2"));
    CHECK(Contains(task.error().message(), "declared twice"));
    // A comment after the values is no value.
    WriteFile(temp / "t" / "seed.cpp", "// kestrel:knob UNROLL 1 2 4  // elements per iteration\nvoid f() {}\n");
    auto commented = LoadTask(temp / "t");
    REQUIRE_MESSAGE(commented.has_value(), testing::ErrorOf(commented));
    auto knobs = ParseKnobs(commented->seeds[0].text);
    REQUIRE(knobs.has_value());
    REQUIRE(knobs->size() == 1);
    CHECK((*knobs)[0].values == std::vector<std::string>{"1", "2", "4"});
  }

  TEST_CASE("the folder name is read from paths with a trailing slash") {
    TempDir temp;
    WriteTask(temp / "t", ValidSpec().dump());
    auto task = LoadTask((temp / "t").string() + "/");
    CHECK_MESSAGE(task.has_value(), testing::ErrorOf(task));
  }

  TEST_CASE("LoadTasks and FindTask over several dirs") {
    TempDir temp;
    const auto extra = temp / "extra";
    Json spec = ValidSpec();
    WriteTask(extra / "t", spec.dump());
    WriteFile(extra / "notes" / "README", "not a task\n");  // no task.json: skipped

    SUBCASE("tasks of all dirs, in name order") {
      auto tasks = LoadTasks({testing::TasksDir(), extra});
      REQUIRE_MESSAGE(tasks.has_value(), testing::ErrorOf(tasks));
      std::vector<std::string> names;
      for (const auto& task : *tasks) names.push_back(task.name);
      CHECK(names == std::vector<std::string>{"add_layernorm", "add_rmsnorm", "argmax", "attention_head_f16",
                                              "bias_gelu", "bmm", "broadcast_affine", "colsum", "conv1d",
                                              "conv1d_relu", "convert_f16_bf16", "cumsum", "dequant_gemm", "dot_i8",
                                              "gather", "gelu_bf16", "gemm_bias_gelu", "gemm_bias_residual",
                                              "histogram", "layernorm", "masked_softmax", "matmul",
                                              "matmul_bf16_bias_relu", "matmul_cuda", "mlp_block",
                                              "prenorm_attention", "resnet_block", "rmsnorm", "rmsnorm_bf16",
                                              "scatter_add", "silu_mul_f16", "softmax", "softmax_cuda", "stencil2d",
                                              "swiglu_mlp_bf16", "t", "topk", "transpose", "triad"});
      auto found = FindTask("t", {testing::TasksDir(), extra});
      REQUIRE(found.has_value());
      CHECK(found->dir == extra / "t");
    }
    SUBCASE("a task folder given as a folder of tasks is refused, naming the folder to give") {
      // It was searched for task folders, none found, and the task "unknown".
      auto found = FindTask("t", {testing::TasksDir(), extra / "t"});
      REQUIRE(!found.has_value());
      CHECK(found.error().IsInvalidArgument());
      CHECK(Contains(found.error().message(), (extra / "t").string() + " is a task folder"));
      CHECK(Contains(found.error().message(), "takes the folder above it, " + extra.string()));
    }
    SUBCASE("an unknown name lists the known ones") {
      auto found = FindTask("softmx", {testing::TasksDir(), extra});
      REQUIRE(!found.has_value());
      CHECK(found.error().IsNotFound());
      CHECK(Contains(found.error().message(), "'softmx'"));
      CHECK(Contains(found.error().message(), "softmax softmax_cuda stencil2d swiglu_mlp_bf16 t topk transpose triad"));
    }
    SUBCASE("a user's task shadows the built-in one of the same name") {
      spec["name"] = "softmax";
      WriteTask(extra / "softmax", spec.dump());
      auto tasks = LoadTasks({testing::TasksDir(), extra});
      REQUIRE_MESSAGE(tasks.has_value(), testing::ErrorOf(tasks));
      const auto softmax = std::find_if(tasks->begin(), tasks->end(), [](const Task& t) { return t.name == "softmax"; });
      REQUIRE(softmax != tasks->end());
      CHECK(softmax->dir == extra / "softmax");
      CHECK(std::count_if(tasks->begin(), tasks->end(), [](const Task& t) { return t.name == "softmax"; }) == 1);

      std::ostringstream notes;
      auto found = FindTask("softmax", {testing::TasksDir(), extra}, &notes);
      REQUIRE_MESSAGE(found.has_value(), testing::ErrorOf(found));
      CHECK(found->dir == extra / "softmax");
      CHECK(notes.str() == "kestrel: task 'softmax' from " + extra.string() + " shadows the built-in one\n");
      std::ostringstream quiet;
      REQUIRE(FindTask("matmul", {testing::TasksDir(), extra}, &quiet).has_value());
      CHECK(quiet.str().empty());
    }
    SUBCASE("the same name in two user dirs is refused, naming both") {
      const auto other = temp / "other";
      spec["name"] = "softmax";
      WriteTask(extra / "softmax", spec.dump());
      WriteTask(other / "softmax", spec.dump());
      const std::vector dirs{testing::TasksDir(), extra, other};
      auto tasks = LoadTasks(dirs);
      REQUIRE(!tasks.has_value());
      CHECK(tasks.error().IsInvalidArgument());
      CHECK(Contains(tasks.error().message(), "task 'softmax' is defined twice"));
      CHECK(Contains(tasks.error().message(), (extra / "softmax").string()));
      CHECK(Contains(tasks.error().message(), (other / "softmax").string()));
    }
    SUBCASE("a dir given twice, or the built-in one again, counts once") {
      auto tasks = LoadTasks({testing::TasksDir(), extra, testing::TasksDir() / ".", extra});
      REQUIRE_MESSAGE(tasks.has_value(), testing::ErrorOf(tasks));
      CHECK(tasks->size() == 39);
    }
    SUBCASE("a broken folder fails the whole load but not a lookup of a healthy sibling") {
      WriteTask(extra / "u", "{}");
      auto tasks = LoadTasks({extra});
      REQUIRE(!tasks.has_value());
      CHECK(Contains(tasks.error().message(), (extra / "u" / "task.json").string()));
      auto healthy = FindTask("t", {testing::TasksDir(), extra});
      REQUIRE_MESSAGE(healthy.has_value(), testing::ErrorOf(healthy));
      CHECK(healthy->name == "t");
      auto broken = FindTask("u", {testing::TasksDir(), extra});
      REQUIRE(!broken.has_value());
      CHECK(Contains(broken.error().message(), (extra / "u" / "task.json").string()));
    }
    SUBCASE("ListTasks keeps a broken task's error beside the healthy ones") {
      WriteTask(extra / "u", "{}");
      auto listed = ListTasks({extra});
      REQUIRE_MESSAGE(listed.has_value(), testing::ErrorOf(listed));
      REQUIRE(listed->size() == 2);
      CHECK((*listed)[0].folder.name == "t");
      CHECK((*listed)[0].task.has_value());
      CHECK((*listed)[1].folder.name == "u");
      REQUIRE(!(*listed)[1].task.has_value());
      CHECK(Contains((*listed)[1].task.error().message(), (extra / "u" / "task.json").string()));
    }
    SUBCASE("a dir that does not exist") {
      auto tasks = LoadTasks({temp / "nowhere"});
      REQUIRE(!tasks.has_value());
      CHECK(Contains(tasks.error().message(), "nowhere"));
    }
  }

  TEST_CASE("BuiltinTasksDir finds configs/tasks") {
    const auto dir = BuiltinTasksDir();
    CHECK(std::filesystem::is_regular_file(dir / "softmax" / "task.json"));
    CHECK(std::filesystem::equivalent(dir, testing::TasksDir()));
  }
}

}  // namespace
}  // namespace kestrel
