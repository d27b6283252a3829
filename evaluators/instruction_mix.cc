#include "evaluators/instruction_mix.h"

#include <algorithm>
#include <array>
#include <set>

#include "evaluators/code_fingerprint.h"

namespace kestrel {
namespace {

bool StartsWith(std::string_view text, std::string_view prefix) { return text.substr(0, prefix.size()) == prefix; }
bool EndsWith(std::string_view text, std::string_view suffix) {
  return text.size() >= suffix.size() && text.substr(text.size() - suffix.size()) == suffix;
}

// Floating-point arithmetic, without the leading `v` of VEX/EVEX forms and
// without the FMA operand order (132/213/231) or the type suffix.
constexpr std::array<std::string_view, 20> kFpArithmetic = {
    "add", "sub", "mul", "div", "min", "max", "sqrt", "rcp14", "rcp", "rsqrt14", "rsqrt", "hadd", "hsub", "dp",
    "fmaddsub", "fmsubadd", "fmadd", "fmsub", "fnmadd", "fnmsub"};

enum class FpKind { kNone, kPacked, kScalar };

// "vfmadd231ps" -> packed; "addsd" -> scalar; "movss", "cvtsi2sd" -> none.
FpKind Classify(std::string_view mnemonic, bool* fma) {
  std::string_view op = mnemonic;
  if (StartsWith(op, "v")) op.remove_prefix(1);
  FpKind kind = FpKind::kNone;
  for (std::string_view suffix : {"ps", "pd", "ph", "ss", "sd", "sh"}) {
    if (!EndsWith(op, suffix)) continue;
    kind = suffix[0] == 'p' ? FpKind::kPacked : FpKind::kScalar;
    op.remove_suffix(2);
    break;
  }
  if (kind == FpKind::kNone) return kind;
  for (std::string_view order : {"132", "213", "231"}) {
    if (EndsWith(op, order)) op.remove_suffix(3);
  }
  if (std::find(kFpArithmetic.begin(), kFpArithmetic.end(), op) == kFpArithmetic.end()) return FpKind::kNone;
  *fma = StartsWith(op, "fm") || StartsWith(op, "fnm");
  return kind;
}

// The widest register an instruction names; a scalar instruction's xmm
// (vaddss %xmm1,...), the zeroing idiom (vxorps %xmm0,%xmm0,%xmm0) and an
// xmm register copy do not count as vector code.
int RegisterBits(std::string_view operands) {
  if (operands.find("%zmm") != std::string_view::npos) return 512;
  if (operands.find("%ymm") != std::string_view::npos) return 256;
  if (operands.find("%xmm") != std::string_view::npos) return 128;
  return 0;
}

bool IsZeroingIdiom(std::string_view mnemonic, std::string_view operands) {
  if (mnemonic.find("xor") == std::string_view::npos) return false;
  const std::size_t comma = operands.find(',');
  if (comma == std::string_view::npos) return false;
  const std::string_view first = operands.substr(0, comma);
  std::string_view rest = operands.substr(comma + 1);
  while (!rest.empty()) {
    const std::size_t next = rest.find(',');
    if (rest.substr(0, next) != first) return false;
    rest = next == std::string_view::npos ? std::string_view() : rest.substr(next + 1);
  }
  return true;
}

// "vmovaps %xmm0,%xmm1": a scalar kept in a register being copied (the
// compiler copies whole xmm registers); with memory or wider registers it
// is vector code.
bool IsRegisterCopy(std::string_view mnemonic, std::string_view operands) {
  if (mnemonic.find("mov") == std::string_view::npos || operands.empty()) return false;
  while (!operands.empty()) {
    const std::size_t comma = operands.find(',');
    if (!StartsWith(operands.substr(0, comma), "%xmm")) return false;
    operands = comma == std::string_view::npos ? std::string_view() : operands.substr(comma + 1);
  }
  return true;
}

bool IsScalarOnly(std::string_view mnemonic) {
  std::string_view op = mnemonic;
  if (StartsWith(op, "v")) op.remove_prefix(1);
  // Scalar moves, conversions and compares touch one lane of an xmm register.
  // A broadcast fills every lane; a packed conversion (cvtps2pd) is vector code.
  if (StartsWith(op, "broadcast")) return false;
  if (StartsWith(op, "cvt")) {
    return op.find("ss") != std::string_view::npos || op.find("sd") != std::string_view::npos ||
           op.find("si") != std::string_view::npos;
  }
  return EndsWith(op, "ss") || EndsWith(op, "sd") || EndsWith(op, "sh") || StartsWith(op, "ucomis") ||
         StartsWith(op, "comis") || op == "movd" || op == "movq";
}

// "call <expf@plt>", "jmp <expf@plt>", "call *(%rip) @.got+0x8 <expf@GLIBC_2.27>"
// -> "expf"; "" for anything else.
std::string CallTarget(std::string_view instruction) {
  const std::size_t open = instruction.rfind('<');
  const std::size_t close = instruction.rfind('>');
  if (open == std::string_view::npos || close == std::string_view::npos || close < open) return "";
  std::string_view name = instruction.substr(open + 1, close - open - 1);
  name = name.substr(0, std::min(name.find('@'), name.find('+')));
  return std::string(name);
}

}  // namespace

int IsaVectorBits(std::string_view isa) {
  std::set<std::string_view> flags;
  while (!isa.empty()) {
    const std::size_t space = isa.find(' ');
    const std::string_view flag = isa.substr(0, space);
    if (!flag.empty()) flags.insert(flag);
    isa = space == std::string_view::npos ? std::string_view() : isa.substr(space + 1);
  }
  if (flags.count("avx512f")) return 512;
  if (flags.count("avx") || flags.count("avx2")) return 256;
  for (std::string_view flag : flags) {
    if (StartsWith(flag, "sse")) return 128;
  }
  return 0;
}

InstructionMix ParseInstructionMix(std::string_view objdump_output, int isa_vector_bits) {
  InstructionMix mix;
  mix.isa_vector_bits = isa_vector_bits;
  const std::map<std::string, std::string> functions = KernelFunctions(objdump_output);
  std::set<std::string> calls;
  for (const auto& [name, body] : functions) {
    std::string_view text = body;
    while (!text.empty()) {
      const std::size_t end = text.find('\n');
      const std::string_view line = text.substr(0, end);
      text = end == std::string_view::npos ? std::string_view() : text.substr(end + 1);
      if (line.empty()) continue;
      ++mix.total;
      const std::size_t space = line.find(' ');
      std::string_view mnemonic = line.substr(0, space);
      // A prefix ("rep stos", "lock add", "notrack jmp") is not the instruction.
      std::string_view operands = space == std::string_view::npos ? std::string_view() : line.substr(space + 1);
      for (std::string_view prefix : {"rep", "repz", "repnz", "lock", "notrack", "bnd", "data16"}) {
        if (mnemonic != prefix || operands.empty()) continue;
        const std::size_t next = operands.find(' ');
        mnemonic = operands.substr(0, next);
        operands = next == std::string_view::npos ? std::string_view() : operands.substr(next + 1);
      }
      operands = operands.substr(0, operands.find(' '));  // the operands, not the target comment
      bool fma = false;
      const FpKind kind = Classify(mnemonic, &fma);
      if (kind == FpKind::kPacked) ++mix.packed_fp;
      if (kind == FpKind::kScalar) ++mix.scalar_fp;
      if (fma) ++mix.fma;
      std::string_view op = StartsWith(mnemonic, "v") ? mnemonic.substr(1) : mnemonic;
      if (StartsWith(op, "div") || StartsWith(op, "idiv") || StartsWith(op, "sqrt")) ++mix.divisions;
      if (StartsWith(op, "gather") || StartsWith(op, "pgather")) ++mix.gathers;
      if (!IsScalarOnly(mnemonic) && !IsZeroingIdiom(mnemonic, operands) && !IsRegisterCopy(mnemonic, operands)) {
        mix.vector_bits = std::max(mix.vector_bits, RegisterBits(operands));
      }
      if (StartsWith(mnemonic, "call") || StartsWith(mnemonic, "jmp")) {
        const std::string target = CallTarget(line);
        if (!target.empty() && functions.count(target) == 0) calls.insert(target);
      }
    }
  }
  mix.calls.assign(calls.begin(), calls.end());
  return mix;
}

Result<InstructionMix> InstructionMixOf(const std::filesystem::path& library, int isa_vector_bits) {
  const std::optional<std::string> text = ObjdumpText(library);
  if (!text) return Fail(Error::NotFound("objdump -d " + library.string() + " failed (is binutils installed?)"));
  InstructionMix mix = ParseInstructionMix(*text, isa_vector_bits);
  if (mix.total == 0) return Fail(Error::NotFound("objdump found no kernel function in " + library.string()));
  return mix;
}

}  // namespace kestrel
