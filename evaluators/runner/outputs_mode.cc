// RunOutputs: see modes.h.

#include <cstring>
#include <fstream>
#include <vector>

#include "evaluators/runner/inputs.h"
#include "evaluators/runner/kernel_library.h"
#include "evaluators/runner/modes.h"
#include "evaluators/runner/seccomp_filter.h"

namespace kestrel::runner {
namespace {

bool IsInput(ArgRole role) { return role == ArgRole::kInput || role == ArgRole::kInOut; }
bool IsResult(ArgRole role) { return role == ArgRole::kOutput || role == ArgRole::kInOut; }

// Copies of the bytes of every argument selected by `keep`.
std::vector<std::vector<std::byte>> Snapshot(const ArgSet& args, const JobShape& shape, bool (*keep)(ArgRole)) {
  std::vector<std::vector<std::byte>> copies(args.size());
  for (std::size_t a = 0; a < args.size(); ++a) {
    if (!keep(shape.args[a].role)) continue;
    const auto bytes = args.Bytes(a);
    copies[a].assign(bytes.begin(), bytes.end());
  }
  return copies;
}

bool Same(std::span<const std::byte> bytes, const std::vector<std::byte>& copy) {
  return bytes.size() == copy.size() && (bytes.empty() || std::memcmp(bytes.data(), copy.data(), copy.size()) == 0);
}

}  // namespace

Status RunOutputs(const Job& job, JobResult& result) {
  if (job.libraries.size() != 1) return Fail(Error::InvalidArgument("outputs mode takes one library"));
  // Opened before the sandbox, which refuses opening files for writing.
  std::ofstream out(job.output_file, std::ios::binary | std::ios::trunc);
  if (!out) return Fail(Error::Io("cannot write " + job.output_file.string()));
  if (auto sandboxed = EnterSandbox(job); !sandboxed) return Fail(sandboxed.error());
  auto library = KernelLibrary::Open(job.libraries[0]);
  if (!library) return Fail(library.error());

  for (int s = 0; s < static_cast<int>(job.shapes.size()); ++s) {
    const JobShape& shape = job.shapes[s];
    for (int set = 0; set < job.input_sets; ++set) {
      ArgSet args(shape, {job.seed, s, set});
      const auto pristine = Snapshot(args, shape, IsInput);
      SetCheck check{s, set, {}, false};

      library->entry()(args.Pointers());
      for (std::size_t a = 0; a < args.size(); ++a) {
        if (shape.args[a].role == ArgRole::kInput && !Same(args.Bytes(a), pristine[a])) {
          check.inputs_modified.push_back(shape.args[a].name);
        }
      }
      const auto first = Snapshot(args, shape, IsResult);

      // Second call: the same inputs, outputs poisoned differently.
      for (std::size_t a = 0; a < args.size(); ++a) {
        if (IsInput(shape.args[a].role)) std::memcpy(args.Bytes(a).data(), pristine[a].data(), pristine[a].size());
      }
      args.PoisonOutputs(1);
      library->entry()(args.Pointers());
      for (std::size_t a = 0; a < args.size(); ++a) {
        if (IsResult(shape.args[a].role) && !Same(args.Bytes(a), first[a])) check.nondeterministic = true;
      }

      for (std::size_t a = 0; a < args.size(); ++a) {
        if (!IsResult(shape.args[a].role)) continue;
        out.write(reinterpret_cast<const char*>(first[a].data()), static_cast<std::streamsize>(first[a].size()));
      }
      result.checks.push_back(std::move(check));
    }
  }
  out.close();
  if (!out) return Fail(Error::Io("cannot write " + job.output_file.string()));
  return {};
}

}  // namespace kestrel::runner
