#pragma once
// What a built kernel's code is made of (the profile's InstructionMix,
// core/profile.h): the kernel's own functions of `objdump -d`
// (code_fingerprint.h selects them) counted by kind of instruction.

#include <filesystem>
#include <string>
#include <string_view>

#include "core/profile.h"

namespace kestrel {

// The widest vector registers the host's ISA flags (HostInfo::isa) offer:
// avx512f 512, avx/avx2 256, sse* 128, else 0.
int IsaVectorBits(std::string_view isa);

// The mix of the kernel functions in `objdump_output` (the text of
// `objdump -h -s -d --no-show-raw-insn`, AT&T syntax). Pure; an empty mix
// (total 0) when the text holds no kernel function.
InstructionMix ParseInstructionMix(std::string_view objdump_output, int isa_vector_bits);

// objdump of `library`, parsed; an Error naming why when objdump is missing
// or fails or the library holds no kernel function.
Result<InstructionMix> InstructionMixOf(const std::filesystem::path& library, int isa_vector_bits);

}  // namespace kestrel
