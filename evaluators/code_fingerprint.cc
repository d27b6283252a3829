#include "evaluators/code_fingerprint.h"

#include <algorithm>
#include <array>
#include <cstdint>
#include <fstream>
#include <iterator>
#include <map>
#include <optional>
#include <vector>

#include "core/hash.h"
#include "evaluators/subprocess.h"

namespace kestrel {
namespace {

// The C runtime's helpers every shared object has: not the kernel's code.
constexpr std::array<std::string_view, 4> kRuntimeHelpers = {"deregister_tm_clones", "register_tm_clones",
                                                             "__do_global_dtors_aux", "frame_dummy"};
// objdump's output above this is refused rather than cut (a cut text could
// make two kernels look alike).
constexpr std::size_t kMaxOutputBytes = 48ULL << 20;

struct Section {
  std::string name;
  std::uint64_t address = 0;
  std::uint64_t size = 0;
};

bool StartsWith(std::string_view text, std::string_view prefix) { return text.substr(0, prefix.size()) == prefix; }
bool IsCodeSection(std::string_view name) { return name == ".text" || StartsWith(name, ".text."); }
// .nv_fatbin: a CUDA build's device code (the cubin inside a fatbin).
bool IsDataSection(std::string_view name) {
  return name == ".rodata" || StartsWith(name, ".rodata.") || name == ".data" || StartsWith(name, ".data.") ||
         name == ".bss" || StartsWith(name, ".bss.") || name == ".nv_fatbin";
}
bool IsHex(std::string_view text) {
  return !text.empty() && std::all_of(text.begin(), text.end(), [](char c) {
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
  });
}
std::optional<std::uint64_t> ParseHex(std::string_view text) {
  if (StartsWith(text, "0x")) text.remove_prefix(2);
  if (!IsHex(text) || text.size() > 16) return std::nullopt;
  return std::stoull(std::string(text), nullptr, 16);
}
std::string Hex(std::uint64_t value) {
  char text[24];
  std::snprintf(text, sizeof(text), "0x%llx", static_cast<unsigned long long>(value));
  return text;
}

std::vector<std::string_view> Tokens(std::string_view line) {
  std::vector<std::string_view> tokens;
  std::size_t at = 0;
  while (at < line.size()) {
    const std::size_t start = line.find_first_not_of(" \t", at);
    if (start == std::string_view::npos) break;
    const std::size_t end = std::min(line.find_first_of(" \t", start), line.size());
    tokens.push_back(line.substr(start, end - start));
    at = end;
  }
  return tokens;
}

const Section* SectionAt(const std::vector<Section>& sections, std::uint64_t address) {
  for (const Section& section : sections) {
    if (address >= section.address && address < section.address + section.size) return &section;
  }
  return nullptr;
}

// "vmovss 0xeb8(%rip),%xmm2  # 2000 <_fini+0xcd4>" -> "vmovss (%rip),%xmm2 @.rodata+0x0";
// "call 1030 <memset@plt>" -> "call <memset@plt>"; "" for padding.
std::string NormalizeInstruction(std::string_view text, const std::vector<Section>& sections) {
  std::string_view comment;
  if (const std::size_t hash = text.find(" # "); hash != std::string_view::npos) {
    comment = text.substr(hash + 3);
    text = text.substr(0, hash);
  } else if (const std::size_t tab_hash = text.find("\t# "); tab_hash != std::string_view::npos) {
    comment = text.substr(tab_hash + 3);
    text = text.substr(0, tab_hash);
  }
  const std::vector<std::string_view> tokens = Tokens(text);
  std::string out;
  for (std::size_t i = 0; i < tokens.size(); ++i) {
    std::string_view token = tokens[i];
    if (StartsWith(token, "nop")) return "";  // alignment padding, wherever it falls
    // A direct target "1180 <f+0x70>": the symbol, not the address.
    if (IsHex(token) && i + 1 < tokens.size() && StartsWith(tokens[i + 1], "<")) continue;
    std::string operand(token);
    // A rip-relative displacement depends on the layout: the comment names its target.
    for (std::size_t rip = operand.find("(%rip)"); rip != std::string::npos; rip = operand.find("(%rip)", rip + 1)) {
      std::size_t start = rip;
      while (start > 0 && operand[start - 1] != ',' && operand[start - 1] != '*') --start;
      operand.erase(start, rip - start);
      rip = start;
    }
    if (!out.empty()) out += ' ';
    out += operand;
  }
  const std::vector<std::string_view> target = Tokens(comment);
  if (!target.empty()) {
    const auto address = ParseHex(target[0]);
    const Section* section = address ? SectionAt(sections, *address) : nullptr;
    if (section != nullptr && IsCodeSection(section->name) && target.size() > 1) {
      out += " ";
      out += target[1];
    } else if (section != nullptr) {
      out += " @" + section->name + "+" + Hex(*address - section->address);
      // An exact symbol (a GOT slot's function, a named table) is named too:
      // two slots at one offset may hold different functions.
      if (target.size() > 1 && target[1].find('+') == std::string_view::npos) {
        out += " ";
        out += target[1];
      }
    } else {
      out += " @?";  // outside every section: kept as it is
      out += target[0];
    }
  }
  return out;
}

}  // namespace

namespace {

// The kernel's functions (normalized, by name) and data sections of
// objdump's text: what NormalizeDisassembly hashes and KernelFunctions lists.
struct Disassembly {
  std::vector<Section> sections;
  std::map<std::string, std::string> functions;  // by name: order in the file does not matter
  std::map<std::string, std::string> data;       // section -> hex contents
};

Disassembly ParseDisassembly(std::string_view output) {
  Disassembly parsed;
  std::vector<Section>& sections = parsed.sections;
  std::map<std::string, std::string>& functions = parsed.functions;
  std::map<std::string, std::string>& data = parsed.data;
  enum class Mode { kNone, kSections, kContents, kCode } mode = Mode::kNone;
  std::string current;          // the data section or the function being read
  bool keep = false;            // the current function or data section is hashed
  while (!output.empty()) {
    const std::size_t end = output.find('\n');
    const std::string_view line = output.substr(0, end);
    output.remove_prefix(end == std::string_view::npos ? output.size() : end + 1);
    const std::vector<std::string_view> tokens = Tokens(line);
    if (tokens.empty()) continue;
    if (line == "Sections:") {
      mode = Mode::kSections;
    } else if (StartsWith(line, "Contents of section ")) {
      mode = Mode::kContents;
      current = std::string(line.substr(20, line.size() - 21));
      keep = IsDataSection(current);
    } else if (StartsWith(line, "Disassembly of section ")) {
      mode = Mode::kCode;
      keep = IsCodeSection(line.substr(23, line.size() - 24));
      current.clear();
    } else if (mode == Mode::kSections) {
      // "  7 .plt  00000020  0000000000001020  ...": index, name, size, address.
      if (tokens.size() >= 4 && IsHex(tokens[2]) && IsHex(tokens[3]) && ParseHex(tokens[2]) && ParseHex(tokens[3])) {
        sections.push_back({std::string(tokens[1]), *ParseHex(tokens[3]), *ParseHex(tokens[2])});
      }
    } else if (mode == Mode::kContents && keep && line[0] == ' ' && tokens.size() >= 2) {
      // " 2000 9a99d93f 00002040   ...?.. @": the hex columns, neither address nor text.
      const std::size_t start = line.find(tokens[0]) + tokens[0].size() + 1;
      std::string& hex = data[current];
      for (char c : line.substr(std::min(start, line.size()), 35)) {
        if (c != ' ') hex += c;
      }
    } else if (mode == Mode::kCode && tokens.size() == 2 && line.back() == ':' && StartsWith(tokens[1], "<")) {
      // "0000000000001110 <_Z7softmaxPKfPfll>:"
      const std::string_view name = tokens[1].substr(1, tokens[1].size() - 3);
      const bool runtime = std::find(kRuntimeHelpers.begin(), kRuntimeHelpers.end(), name) != kRuntimeHelpers.end();
      current = runtime || !keep ? "" : std::string(name);
      if (!current.empty()) functions[current] += "";  // a function may be empty after padding is dropped
    } else if (mode == Mode::kCode && !current.empty()) {
      // "    1140:\tvmovss 0xeb8(%rip),%xmm2 ...": the instruction after "address:".
      const std::size_t colon = line.find(':');
      if (colon == std::string_view::npos) continue;
      const std::vector<std::string_view> address = Tokens(line.substr(0, colon));
      if (address.size() != 1 || !IsHex(address[0])) continue;
      std::string instruction = NormalizeInstruction(line.substr(colon + 1), sections);
      if (!instruction.empty()) functions[current] += instruction + "\n";
    }
  }
  return parsed;
}

}  // namespace

std::map<std::string, std::string> KernelFunctions(std::string_view objdump_output) {
  return ParseDisassembly(objdump_output).functions;
}

std::string NormalizeDisassembly(std::string_view output) {
  Disassembly parsed = ParseDisassembly(output);
  if (parsed.functions.empty()) return "";
  std::string text;
  for (const auto& [name, body] : parsed.functions) text += "function " + name + "\n" + body;
  for (const Section& section : parsed.sections) {
    if (IsDataSection(section.name) && StartsWith(section.name, ".bss")) {
      parsed.data[section.name] = "size " + Hex(section.size);
    }
  }
  for (const auto& [name, hex] : parsed.data) text += "data " + name + "\n" + hex + "\n";
  return text;
}

std::optional<std::string> ObjdumpText(const std::filesystem::path& library) {
  try {
    SubprocessOptions options;
    options.argv = {"objdump", "-h", "-s", "-d", "--no-show-raw-insn", library.string()};
    options.env = EnvironmentWith({"LC_ALL=C"});
    options.timeout_s = 60;
    options.log_limit_bytes = kMaxOutputBytes;
    auto run = RunSubprocess(options);
    if (!run || !run->Succeeded() || run->log.size() >= kMaxOutputBytes / 2) return std::nullopt;
    return std::move(run->log);
  } catch (...) {
    return std::nullopt;
  }
}

std::string CodeFingerprint(const std::filesystem::path& library) {
  try {
    const std::optional<std::string> text = ObjdumpText(library);
    if (!text) return "";
    const std::string normalized = NormalizeDisassembly(*text);
    return normalized.empty() ? "" : Sha256Hex(normalized);
  } catch (...) {
    return "";  // a fingerprint is a saving, never a reason to fail a build
  }
}

std::string FolderFingerprint(const std::filesystem::path& folder, const std::filesystem::path& source) {
  constexpr std::size_t kMaxFiles = 64;
  constexpr std::uintmax_t kMaxDataBytes = 64ULL << 20;
  constexpr std::string_view kOwnPath = "{build_dir}";
  try {
    std::vector<std::filesystem::path> files;
    for (const auto& entry : std::filesystem::recursive_directory_iterator(folder)) {
      if (entry.is_directory() && !entry.is_symlink()) continue;
      std::filesystem::path name = entry.path().lexically_relative(folder);
      if (name == source) continue;
      if (files.size() == kMaxFiles) return "";
      files.push_back(std::move(name));
    }
    std::sort(files.begin(), files.end());
    // A file that names its folder (a dependency list, a linker map) names
    // every candidate's own: written as the placeholder, it says the same.
    const std::string own_path = std::filesystem::absolute(folder).lexically_normal().string();
    std::string text;
    bool any_elf = false;
    std::uintmax_t data_bytes = 0;
    for (const auto& name : files) {
      const std::filesystem::path path = folder / name;
      if (std::filesystem::is_symlink(path)) {
        text += "link " + name.generic_string() + " -> " + std::filesystem::read_symlink(path).generic_string() + "\n";
        continue;
      }
      if (!std::filesystem::is_regular_file(path)) return "";  // a FIFO, a socket: not a build's output
      std::ifstream in(path, std::ios::binary);
      char magic[4] = {};
      if (in.read(magic, sizeof magic) && std::string_view(magic, sizeof magic) == "\x7f" "ELF") {
        const std::optional<std::string> dump = ObjdumpText(path);  // objdump reads the file itself
        if (!dump) return "";
        text += "file " + name.generic_string() + "\n" + NormalizeDisassembly(*dump);
        any_elf = true;
        continue;
      }
      data_bytes += std::filesystem::file_size(path);
      if (data_bytes > kMaxDataBytes) return "";  // before reading it
      in.clear();
      in.seekg(0);
      std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
      if (in.bad()) return "";
      for (std::size_t at = bytes.find(own_path); at != std::string::npos; at = bytes.find(own_path, at + kOwnPath.size())) {
        bytes.replace(at, own_path.size(), kOwnPath);
      }
      text += "data " + name.generic_string() + " " + std::to_string(bytes.size()) + "\n" + bytes + "\n";
    }
    return any_elf ? Sha256Hex(text) : "";
  } catch (...) {
    return "";  // as CodeFingerprint: a saving, never a reason to fail a build
  }
}

}  // namespace kestrel
