#include "core/task.h"

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <sstream>
#include <system_error>
#include <utility>

#include "core/candidate.h"
#include "core/expr.h"
#include "core/hash.h"
#include "core/task_spec.h"

#ifndef KESTREL_SOURCE_DIR
#define KESTREL_SOURCE_DIR "."
#endif

namespace kestrel {
namespace {

namespace fs = std::filesystem;

constexpr const char* kSpecFile = "task.json";

std::optional<std::string> ReadText(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) return std::nullopt;
  return std::move(text).str();
}

// The name of the folder `dir` denotes, also for "tasks/softmax/" or ".".
std::string FolderName(const fs::path& dir) {
  std::error_code ignored;
  fs::path path = fs::absolute(dir, ignored).lexically_normal();
  if (path.filename().empty()) path = path.parent_path();
  return path.filename().string();
}

// Reads `source` (named in field `field` of `spec_file`) from `dir`.
Status ReadSource(const fs::path& dir, const std::string& spec_file, const std::string& field, SourceFile& source) {
  const fs::path path = dir / source.name;
  std::error_code error;
  if (!fs::is_regular_file(path, error)) {
    return Fail(Error::InvalidArgument(spec_file + ": " + field + ": expected an existing file, got \"" +
                                       source.name + "\" (" + path.string() + " does not exist)"));
  }
  auto text = ReadText(path);
  if (!text) return Fail(Error::Io(spec_file + ": " + field + ": cannot read " + path.string()));
  source.text = std::move(*text);
  return {};
}

std::optional<double> Formula(const std::string& expr, const Shape& shape) {
  if (expr.empty()) return std::nullopt;
  auto value = EvalExpr(expr, shape);
  if (!value) return std::nullopt;
  return *value;
}

}  // namespace

std::string_view ToString(ArgRole role) {
  switch (role) {
    case ArgRole::kInput: return "input";
    case ArgRole::kOutput: return "output";
    case ArgRole::kInOut: return "inout";
    case ArgRole::kDim: return "dim";
    case ArgRole::kScalar: return "scalar";
  }
  return "?";
}

std::string ToString(const Shape& shape) {
  std::string out;
  for (const auto& [dim, size] : shape) {
    if (!out.empty()) out += ' ';
    out += dim + "=" + std::to_string(size);
  }
  return out;
}

std::string Task::Definition() const {
  std::string text = spec_text;
  text += '\0';
  text += reference.text;
  return Sha256Hex(text);
}

std::string Task::Signature() const {
  std::string out = "void " + entry + "(";
  for (std::size_t i = 0; i < args.size(); ++i) {
    const ArgSpec& arg = args[i];
    if (i > 0) out += ", ";
    if (arg.role == ArgRole::kInput) out += "const ";
    out += CppType(arg.role == ArgRole::kDim ? ScalarType::kI64 : arg.type);
    if (arg.IsBuffer()) out += "*";
    out += " " + arg.name;
  }
  return out + ")";
}

// Precondition: `shape` gives every dim `arg` names (LoadTask checks this
// for the task's own shapes); a missing dim counts as 0.
std::int64_t Task::ElementCount(const ArgSpec& arg, const Shape& shape) const {
  std::int64_t count = 1;
  for (const auto& dim : arg.shape) {
    const auto it = shape.find(dim);
    if (it != shape.end()) {
      count *= it->second;
    } else if (!dim.empty() && std::all_of(dim.begin(), dim.end(), [](char c) { return c >= '0' && c <= '9'; })) {
      count *= std::strtoll(dim.c_str(), nullptr, 10);
    } else {
      return 0;
    }
  }
  return count;
}

std::optional<double> Task::Flops(const Shape& shape) const { return Formula(flops, shape); }
std::optional<double> Task::Bytes(const Shape& shape) const { return Formula(bytes, shape); }

Result<Task> LoadTask(const fs::path& dir) {
  const fs::path spec_path = dir / kSpecFile;
  const std::string spec_file = spec_path.string();
  std::error_code error;
  if (!fs::is_regular_file(spec_path, error)) {
    return Fail(Error::InvalidArgument(spec_file + ": not found (a task folder holds task.json, reference.cpp and "
                                       "seed.cpp; see CONTRACT.md, \"Tasks\")"));
  }
  auto text = ReadText(spec_path);
  if (!text) return Fail(Error::Io(spec_file + ": cannot read"));
  auto task = ParseTaskSpec(*text, spec_file, FolderName(dir));
  if (!task) return task;
  task->dir = dir;
  if (auto read = ReadSource(dir, spec_file, "reference", task->reference); !read) return Fail(read.error());
  for (std::size_t i = 0; i < task->seeds.size(); ++i) {
    const std::string field = "seeds[" + std::to_string(i) + "]";
    if (auto read = ReadSource(dir, spec_file, field, task->seeds[i]); !read) return Fail(read.error());
    // A seed's knob declarations are read by every run; one that cannot be
    // read makes the task unusable, so it is refused here, with the task.
    if (auto knobs = ParseKnobs(task->seeds[i].text); !knobs) {
      return Fail(Error::InvalidArgument((dir / task->seeds[i].name).string() + ": " + knobs.error().message()));
    }
  }
  if (task->baseline) {
    if (auto read = ReadSource(dir, spec_file, "baseline", *task->baseline); !read) return Fail(read.error());
  }
  return task;
}

Result<std::vector<TaskFolder>> FindTaskFolders(const std::vector<fs::path>& dirs) {
  std::vector<TaskFolder> found;
  std::size_t builtin_count = 0;  // found[0, builtin_count) came from dirs[0]
  std::vector<fs::path> listed;
  for (std::size_t d = 0; d < dirs.size(); ++d) {
    const fs::path& dir = dirs[d];
    std::error_code error;
    if (!fs::is_directory(dir, error)) {
      return Fail(Error::InvalidArgument(dir.string() + ": not a directory (expected a folder of task folders)"));
    }
    const bool again = std::any_of(listed.begin(), listed.end(), [&](const fs::path& seen) {
      std::error_code ignored;
      return fs::equivalent(seen, dir, ignored);
    });
    if (again) continue;
    if (d > 0 && fs::is_regular_file(dir / kSpecFile, error)) {
      // A task folder given as a folder of task folders: it was searched
      // for task folders inside it, found none, and the task was "unknown".
      return Fail(Error::InvalidArgument(dir.string() + " is a task folder (it holds " + std::string(kSpecFile) +
                                         "): --tasks-dir takes the folder above it, " +
                                         (dir.has_filename() ? dir : dir.parent_path()).parent_path().string()));
    }
    listed.push_back(dir);
    std::vector<fs::path> folders;
    for (fs::directory_iterator it(dir, error), end; !error && it != end; it.increment(error)) {
      std::error_code ignored;
      if (it->is_directory(ignored) && fs::is_regular_file(it->path() / kSpecFile, ignored)) {
        folders.push_back(it->path());
      }
    }
    if (error) return Fail(Error::Io(dir.string() + ": cannot list: " + error.message()));
    for (const auto& folder : folders) {
      TaskFolder entry{folder.filename().string(), folder, std::nullopt};
      const auto same = std::find_if(found.begin(), found.end(), [&](const TaskFolder& f) { return f.name == entry.name; });
      if (same == found.end()) {
        found.push_back(std::move(entry));
      } else if (static_cast<std::size_t>(same - found.begin()) < builtin_count && !same->shadowed) {
        entry.shadowed = same->dir;
        *same = std::move(entry);
      } else {
        return Fail(Error::InvalidArgument("task '" + entry.name + "' is defined twice: in " + same->dir.string() +
                                           " and in " + folder.string()));
      }
    }
    if (d == 0) builtin_count = found.size();
  }
  std::sort(found.begin(), found.end(), [](const TaskFolder& a, const TaskFolder& b) { return a.name < b.name; });
  return found;
}

Result<std::vector<ListedTask>> ListTasks(const std::vector<fs::path>& dirs) {
  auto folders = FindTaskFolders(dirs);
  if (!folders) return Fail(folders.error());
  std::vector<ListedTask> listed;
  for (auto& folder : *folders) {
    auto task = LoadTask(folder.dir);
    listed.push_back({std::move(folder), std::move(task)});
  }
  return listed;
}

Result<std::vector<Task>> LoadTasks(const std::vector<fs::path>& dirs) {
  auto listed = ListTasks(dirs);
  if (!listed) return Fail(listed.error());
  std::vector<Task> tasks;
  for (auto& entry : *listed) {
    if (!entry.task) return Fail(entry.task.error());
    tasks.push_back(std::move(*entry.task));
  }
  return tasks;
}

Result<Task> FindTask(const std::string& name, const std::vector<fs::path>& dirs, std::ostream* notes) {
  auto folders = FindTaskFolders(dirs);
  if (!folders) return Fail(folders.error());
  std::string known;
  for (const auto& folder : *folders) {
    if (folder.name != name) {
      known += (known.empty() ? "" : " ") + folder.name;
      continue;
    }
    if (notes && folder.shadowed) *notes << "kestrel: " << ShadowNote(folder) << "\n" << std::flush;
    return LoadTask(folder.dir);
  }
  return Fail(Error::NotFound("unknown task '" + name + "' (known: " + (known.empty() ? "none" : known) + ")"));
}

std::string ShadowNote(const TaskFolder& folder) {
  return "task '" + folder.name + "' from " + folder.dir.parent_path().string() + " shadows the built-in one";
}

fs::path BuiltinTasksDir() {
  std::error_code error;
  const fs::path exe = fs::read_symlink("/proc/self/exe", error);
  if (!error) {
    const fs::path bin = exe.parent_path();
    for (const char* relative : {"../configs/tasks", "../../configs/tasks", "../../../configs/tasks",
                                    "../share/kestrel/tasks"}) {
      const fs::path candidate = (bin / relative).lexically_normal();
      std::error_code ignored;
      if (fs::is_directory(candidate, ignored)) return candidate;
    }
  }
  if (const char* env = std::getenv("KESTREL_TASKS_DIR"); env != nullptr && *env != '\0') return env;
  return fs::path(KESTREL_SOURCE_DIR) / "configs" / "tasks";
}

}  // namespace kestrel
