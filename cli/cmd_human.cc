// A person in the loop (docs/ARCHITECTURE.md, "A person in the loop"):
//   kestrel note NODE TEXT        a note; the LLM sees the notes of a parent's lineage
//   kestrel label NODE WORD       clean | reward_hack | suspicious | wrong | interesting
//   kestrel steer [--run ID] TEXT a standing instruction for a run's LLM prompts (--clear)
//   kestrel ban NODE / pin NODE   never expand its subtree / expand it first (--undo)
// Each is one human_actions row with its author; a running search picks it up.

#include <cstdlib>
#include <iostream>
#include <memory>

#include <fmt/format.h>

#include "cli/cli.h"
#include "cli/human_flags.h"

namespace kestrel::cli {

// The run a steer without --run is for: the one running now (a person
// steers the search they watch), else the newest. With several running,
// the person must say which: a guess could steer another task's search.
Result<RunRecord> RunToSteer(Store& store) {
  auto runs = store.ListRuns();  // newest first
  if (!runs) return Fail(runs.error());
  if (runs->empty()) return Fail(Error::InvalidArgument("steer: the database has no run"));
  std::vector<const RunRecord*> running;
  for (const RunRecord& run : *runs) {
    if (run.status == RunStatus::kRunning) running.push_back(&run);
  }
  if (running.empty()) return runs->front();
  if (running.size() == 1) return *running.front();
  std::string which;
  for (const RunRecord* run : running) which += fmt::format("{}{} ({})", which.empty() ? "" : ", ", run->id, run->task_name);
  return Fail(Error::InvalidArgument("steer: runs " + which + " are running; say which with --run ID"));
}

void AddAuthorFlag(CLI::App& command, std::string& author) {
  command.add_option("--as", author, "who acts (default: $USER)");
}

std::string Author(const std::string& author) {
  if (!author.empty()) return author;
  const char* user = std::getenv("USER");
  return user != nullptr && *user != '\0' ? user : "unknown";
}

Result<std::unique_ptr<Store>> OpenForActing(const Cli& cli) {
  if (!std::filesystem::exists(cli.db)) {
    return Fail(Error::InvalidArgument("no database at " + cli.db + " (start a search with `kestrel run`, or pass --db PATH)"));
  }
  return Store::Open(cli.db, Store::Mode::kExisting);
}

namespace {

struct ActionFlags {
  std::int64_t node = 0;
  std::int64_t run = 0;
  std::string text;
  std::string author;
  bool undo = false;
};

// Records one action about `flags.node` of kind `kind`; prints what it did.
void ActOnNode(Cli& cli, const ActionFlags& flags, HumanActionKind kind, const std::string& text) {
  auto store = OpenForActing(cli);
  if (!store) return (void)cli.Report(store.error());
  auto node = NamedNode(**store, flags.node);
  if (!node) return (void)cli.Report(node.error());
  auto id = (*store)->AddHumanAction({0, node->graph_id, node->id, 0, kind, text, Author(flags.author), 0});
  if (!id) return (void)cli.Report(id.error());
  std::cout << fmt::format("node {}: {}{} (action {})\n", node->id, ToString(kind), text.empty() ? "" : " " + text, *id);
  cli.exit_code = kExitOk;
}

std::string LabelWords() {
  std::string words;
  for (std::string_view word : kLabelWords) words += (words.empty() ? "" : "|") + std::string(word);
  return words;
}

void AddNodeAction(CLI::App& app, Cli& cli, const std::string& name, const std::string& help,
                   HumanActionKind kind, HumanActionKind undo) {
  auto flags = std::make_shared<ActionFlags>();
  CLI::App* command = app.add_subcommand(name, help);
  command->add_option("node", flags->node, "the node's id")->required()->check(AboveZero());
  command->add_flag("--undo", flags->undo, "lift it");
  AddAuthorFlag(*command, flags->author);
  command->callback([flags, &cli, kind, undo] { ActOnNode(cli, *flags, flags->undo ? undo : kind, ""); });
}

}  // namespace

void AddHumanCommands(CLI::App& app, Cli& cli) {
  auto note = std::make_shared<ActionFlags>();
  CLI::App* note_command = app.add_subcommand("note", "a note on a node (shown by show; the LLM sees the notes of a parent's lineage)");
  note_command->add_option("node", note->node, "the node's id")->required()->check(AboveZero());
  note_command->add_option("text", note->text, "the note")->required();
  AddAuthorFlag(*note_command, note->author);
  note_command->callback([note, &cli] {
    if (note->text.find_first_not_of(" \t\r\n") == std::string::npos) {
      return (void)cli.Report(Error::InvalidArgument("note: the note has no text"));
    }
    ActOnNode(cli, *note, HumanActionKind::kNote, note->text);
  });

  auto label = std::make_shared<ActionFlags>();
  CLI::App* label_command = app.add_subcommand("label", "label a node (" + LabelWords() + "); it replaces its label");
  label_command->add_option("node", label->node, "the node's id")->required()->check(AboveZero());
  label_command->add_option("word", label->text, LabelWords())->required();
  AddAuthorFlag(*label_command, label->author);
  label_command->callback([label, &cli] {
    if (!IsLabelWord(label->text)) {
      return (void)cli.Report(Error::InvalidArgument("label: '" + label->text + "' is not a label; use one of " + LabelWords()));
    }
    ActOnNode(cli, *label, HumanActionKind::kLabel, label->text);
  });

  AddNodeAction(app, cli, "ban", "never expand this node or its subtree again (--undo lifts the ban)",
                HumanActionKind::kBan, HumanActionKind::kUnban);
  AddNodeAction(app, cli, "pin", "expand this node first, while it is pinned (--undo unpins it)",
                HumanActionKind::kPin, HumanActionKind::kUnpin);

  auto steer = std::make_shared<ActionFlags>();
  auto clear = std::make_shared<bool>(false);
  CLI::App* steer_command =
      app.add_subcommand("steer", "a standing instruction for a run's LLM prompts; a running search picks it up");
  steer_command->add_option("text", steer->text, "the instruction, e.g. \"use AVX-512\"");
  steer_command->add_option("--run", steer->run, "the run (default: the one running, else the newest)")->check(AboveZero());
  steer_command->add_flag("--clear", *clear, "drop the run's standing instructions");
  AddAuthorFlag(*steer_command, steer->author);
  steer_command->callback([steer, clear, &cli] {
    if (*clear == !steer->text.empty()) {
      return (void)cli.Report(Error::InvalidArgument("steer: give an instruction or --clear, not both or neither"));
    }
    auto store = OpenForActing(cli);
    if (!store) return (void)cli.Report(store.error());
    RunRecord run;
    if (steer->run != 0) {
      auto found = NamedRun(**store, steer->run);
      if (!found) return (void)cli.Report(found.error());
      run = *found;
    } else {
      auto chosen = RunToSteer(**store);
      if (!chosen) return (void)cli.Report(chosen.error());
      run = *chosen;
    }
    const auto kind = *clear ? HumanActionKind::kUnsteer : HumanActionKind::kSteer;
    auto id = (*store)->AddHumanAction({0, run.graph_id, 0, run.id, kind, steer->text, Author(steer->author), 0});
    if (!id) return (void)cli.Report(id.error());
    std::cout << (*clear ? fmt::format("run {}: standing instructions cleared (action {})\n", run.id, *id)
                         : fmt::format("run {}: steer \"{}\" (action {})\n", run.id, steer->text, *id));
    cli.exit_code = kExitOk;
  });
}

}  // namespace kestrel::cli
