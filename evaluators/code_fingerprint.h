#pragma once
// The code fingerprint of a built kernel: the SHA-256 of its normalized
// disassembly, so that two candidates whose sources differ only where the
// compiler does not look (a comment, a local's name, a knob the code never
// reads) are known to be the same code, and the engine times only one of
// them (the `same_code` edge, docs/ARCHITECTURE.md). KernelAgent fingerprints
// PTX the same way.
//
// What is hashed (objdump -h -s -d of the shared object):
//   - every function of the kernel's translation unit (the code sections
//     .text*, without the C runtime's own helpers), keyed and sorted by
//     symbol name: its instructions (mnemonic and operands) without
//     addresses or raw bytes, no-op padding dropped, a branch or call target
//     written as the symbol it names (`<name+0x12>`), a rip-relative
//     operand as the section and offset it reaches (`.rodata+0x8`), with
//     the symbol it names when it names one exactly (`.got+0x8 <expf@...>`);
//   - the contents of the data sections (.rodata*, .data*, and .bss's size),
//     so that code loading a different constant is different code;
//   - for a CUDA build, the device code: the .nv_fatbin section's bytes
//     (the cubin nvcc embeds; the same for sources that differ only in a
//     comment or a file name, checked with nvcc 12).
// A difference the normalization cannot see through (a reordered constant
// pool, a changed line number in an assert message) gives two hashes: the
// fingerprint may miss a twin, never invent one.

#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>

namespace kestrel {

// The normalized text of `objdump -h -s -d --no-show-raw-insn` output (the
// input of the hash; exposed for tests). Empty when the text holds no
// function of the kernel.
std::string NormalizeDisassembly(std::string_view objdump_output);

// The kernel's functions in that text, by symbol name: each its normalized
// instructions, one a line (the profile's instruction mix reads them).
std::map<std::string, std::string> KernelFunctions(std::string_view objdump_output);

// `objdump -h -s -d --no-show-raw-insn` of `library` (objdump from $PATH,
// a 60 s limit, LC_ALL=C); nullopt when objdump is missing, fails or prints
// more than it may.
std::optional<std::string> ObjdumpText(const std::filesystem::path& library);

// Hex SHA-256 of the normalized disassembly of `library` (objdump from
// $PATH, a 60 s limit). Empty when objdump is missing, fails, prints more
// than it may, or finds no kernel function: unknown, never an error.
std::string CodeFingerprint(const std::filesystem::path& library);

// The code fingerprint of what a build command left in `folder` (the
// command evaluator's build folder), every file but `source` (the
// candidate's source, a name in the folder): each ELF file (executables,
// shared objects, object files) normalized as above, each other file (a
// table, a config the harness reads) byte for byte with the folder's own
// path written as "{build_dir}", each symbolic link by its target; named by
// its path in the folder and hashed together. Empty when the folder holds no
// ELF file (a Python kernel: its source is its code), holds more than 64
// files or 64 MiB besides its ELF files, or when one cannot be read:
// unknown, never an error. The source is left out so that two sources of
// the same code share the hash: the run command must then not read it
// (command_sandbox.h hides it).
std::string FolderFingerprint(const std::filesystem::path& folder, const std::filesystem::path& source = {});

}  // namespace kestrel
