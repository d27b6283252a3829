// kestrel export NODE [-o FILE]: the node's final source, knob values
// substituted, so that it builds on its own.

#include <fstream>
#include <iostream>
#include <memory>

#include "cli/cli.h"

namespace kestrel::cli {

void AddExportCommand(CLI::App& app, Cli& cli) {
  auto node_id = std::make_shared<std::int64_t>(0);
  auto output = std::make_shared<std::string>();
  CLI::App* exp = app.add_subcommand("export", "write a node's final source (knob values substituted)");
  exp->add_option("node", *node_id, "the node's id")->required()->check(AboveZero());
  exp->add_option("-o,--output", *output, "the file to write (default: standard output)");
  exp->callback([node_id, output, &cli] {
    auto store = cli.OpenForReading();
    if (!store) return (void)cli.Report(store.error());
    auto node = NamedNode(**store, *node_id);
    if (!node) return (void)cli.Report(node.error());
    const std::string text = SubstituteKnobs(node->source, node->knobs);
    if (output->empty()) {
      std::cout << text;
      return;
    }
    std::ofstream out(*output, std::ios::binary);
    out << text;
    if (!out.flush()) return (void)cli.Report(Error::Io("cannot write " + *output));
    std::cerr << "kestrel: wrote node " << node->id << " to " << *output << "\n";
  });
}

}  // namespace kestrel::cli
