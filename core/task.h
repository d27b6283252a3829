#pragma once
// A task: what to compute, on which shapes, how to check and score it
// (CONTRACT.md, "Tasks"). LoadTask parses and validates one task folder; a
// bad field is refused with an InvalidArgument error naming the file, the
// field and what was expected. A Task is immutable plain data once loaded.

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "core/error.h"
#include "core/scalar_type.h"

namespace kestrel {

enum class ArgRole { kInput, kOutput, kInOut, kDim, kScalar };

std::string_view ToString(ArgRole role);  // "input"

struct InitSpec {
  enum class Dist { kNormal, kUniform, kInt };
  Dist dist = Dist::kNormal;
  double mean = 0.0;  // normal
  double std = 1.0;   // normal
  double lo = -1.0;   // uniform, int (inclusive)
  double hi = 1.0;    // uniform, int (inclusive for int)
};

struct ArgSpec {
  std::string name;
  ArgRole role = ArgRole::kInput;
  ScalarType type = ScalarType::kI64;  // a dim is always i64
  std::vector<std::string> shape;      // dim names or integer literals, outermost first
  InitSpec init;                       // inputs and inouts
  double value = 0.0;                  // scalars
  bool IsBuffer() const { return role == ArgRole::kInput || role == ArgRole::kOutput || role == ArgRole::kInOut; }
};

// One assignment of sizes to the task's dims, e.g. {rows: 2048, cols: 1024}.
using Shape = std::map<std::string, std::int64_t>;

std::string ToString(const Shape& shape);  // "cols=1024 rows=2048" (name order)

struct Tolerance {
  double rtol = 1e-4;
  double atol = 1e-7;
};

struct SourceFile {
  std::string name;  // file name inside the task folder, e.g. "seed.cpp"
  std::string text;
};

struct Task {
  std::string name;
  std::string description;
  // The suite level (docs/SUITE.md): 1 single operators, 2 fused chains,
  // 3 blocks; 0 when the task is in no suite level.
  int level = 0;
  std::string language;  // "cpp" (cpu evaluator), "cuda", or "c"/"python" (command evaluator)
  std::string entry;     // the kernel function's name
  std::vector<ArgSpec> args;
  std::vector<Shape> shapes;        // timed and checked
  std::vector<Shape> check_shapes;  // checked only
  // Hidden shapes (EVALUATION.md): the sizes a dim may take, inclusive.
  // Before a result counts as confirmed, it is also checked on shapes drawn
  // from these ranges (core/hidden_shapes.h) with a fresh input seed, never
  // shown in a prompt. A dim without a range keeps its first timed size.
  std::map<std::string, std::pair<std::int64_t, std::int64_t>> shape_ranges;
  Tolerance tolerance;
  std::string flops;  // expression over dims; empty when absent
  std::string bytes;  // expression over dims; empty when absent
  std::filesystem::path dir;
  SourceFile reference;
  std::vector<SourceFile> seeds;
  std::optional<SourceFile> baseline;
  // Libraries the baseline links with ("openblas" -> -lopenblas); a
  // candidate links with none.
  std::vector<std::string> baseline_libs;
  std::string spec_text;  // task.json as read, stored with runs for re-audit

  // What a measurement of this task means: the SHA-256 of task.json and the
  // reference's source together. A graph is searched under one definition
  // (Store::GraphForTask): an edited task (its shapes, tolerance, inputs or
  // reference) searches a graph of its own.
  std::string Definition() const;

  // The C++ declaration the entry must match, e.g.
  // "void softmax(const float* x, float* y, int64_t rows, int64_t cols)".
  std::string Signature() const;
  // Elements of a buffer argument at a shape (product of its dims).
  std::int64_t ElementCount(const ArgSpec& arg, const Shape& shape) const;
  // flops / bytes at a shape; nullopt when the task has no formula.
  std::optional<double> Flops(const Shape& shape) const;
  std::optional<double> Bytes(const Shape& shape) const;
};

// Parses and validates DIR/task.json and reads the sources it names.
Result<Task> LoadTask(const std::filesystem::path& dir);

// Task folders (a subfolder holding task.json) are found directly under
// each of `dirs`. dirs[0] is the built-in folder (TaskDirs puts it first);
// the later ones are the user's. A user's folder named like a built-in task
// shadows it: copying a built-in task to change it is the common case. Two
// user folders with the same name are an InvalidArgument error naming both;
// a dir given twice (or the built-in one again) counts once. A task's name
// is its folder's (LoadTask checks it), so a folder is chosen before it is
// loaded, and a command loads only the tasks it names.
struct TaskFolder {
  std::string name;  // the folder's name
  std::filesystem::path dir;
  std::optional<std::filesystem::path> shadowed;  // the built-in folder it hides, if any
};

// Every task folder under `dirs`, one per name, in name order, none loaded.
// A dir that is not a folder is an InvalidArgument error.
Result<std::vector<TaskFolder>> FindTaskFolders(const std::vector<std::filesystem::path>& dirs);

// One task folder and what loading it gave: the task, or why it is broken.
struct ListedTask {
  TaskFolder folder;
  Result<Task> task;
};

// Every task folder under `dirs`, each loaded on its own: a broken task
// keeps its error and does not hide the others.
Result<std::vector<ListedTask>> ListTasks(const std::vector<std::filesystem::path>& dirs);

// Every task under `dirs`, in name order; the first broken one is the error.
Result<std::vector<Task>> LoadTasks(const std::vector<std::filesystem::path>& dirs);

// The task called `name` under `dirs`, loading only its folder (a broken
// sibling does not matter); NotFound lists the known names. When a user's
// folder shadows the built-in one, says so in one line on `notes`.
Result<Task> FindTask(const std::string& name, const std::vector<std::filesystem::path>& dirs,
                      std::ostream* notes = nullptr);

// "task 'NAME' from DIR shadows the built-in one".
std::string ShadowNote(const TaskFolder& folder);

// The built-in task folder (configs/tasks), found next to the executable or
// at the source tree baked in at build time.
std::filesystem::path BuiltinTasksDir();

}  // namespace kestrel
