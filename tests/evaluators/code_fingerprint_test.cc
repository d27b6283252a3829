// The code fingerprint (evaluators/code_fingerprint.h) of builds made by the
// real compiler through the CPU evaluator: sources that differ only where the
// compiler does not look share it; a change of code or of a constant does not.

#include "evaluators/code_fingerprint.h"

#include <doctest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "scale_task.h"

namespace kestrel {
namespace {

Evaluator& Shared() {
  static std::unique_ptr<Evaluator> evaluator = [] {
    auto made = MakeCpuEvaluator(testing::MakeScaleTask(), testing::FastOptions());
    if (!made) FAIL("MakeCpuEvaluator: " << made.error().message());
    return std::move(*made);
  }();
  return *evaluator;
}

// The scale task's kernel; OFFSET is a constant of the code, UNUSED a knob it never reads.
constexpr const char* kKernel = R"(// kestrel:knob UNUSED 1 2
// kestrel:knob OFFSET 1 2
#include <cstdint>

void scale_add(const float* x, float* y, int64_t n, float a) {
  for (int64_t i = 0; i < n; ++i) y[i] = a * x[i] + (float)OFFSET;
}
)";

constexpr const char* kCommentedRenamed = R"(// kestrel:knob UNUSED 1 2
// kestrel:knob OFFSET 1 2
// The same kernel with a comment and another name for its counter.
#include <cstdint>

void scale_add(const float* x, float* y, int64_t n, float a) {
  // one element per iteration
  for (int64_t index = 0; index < n; ++index) y[index] = a * x[index] + (float)OFFSET;  // y = a x + offset
}
)";

constexpr const char* kOtherLoop = R"(// kestrel:knob UNUSED 1 2
// kestrel:knob OFFSET 1 2
#include <cstdint>

void scale_add(const float* x, float* y, int64_t n, float a) {
  for (int64_t i = n - 1; i >= 0; --i) y[i] = a * x[i] + (float)OFFSET;
}
)";

std::string HashOf(const std::string& source, const std::string& unused, const std::string& offset) {
  Evaluator& evaluator = Shared();
  const Candidate candidate{source, {{"UNUSED", unused}, {"OFFSET", offset}}, evaluator.Toolchain(), evaluator.Flags()};
  const BuildResult build = evaluator.Build(candidate);
  INFO(build.log);
  REQUIRE(build.ok);
  return build.code_hash;
}

TEST_SUITE("code_fingerprint") {
  TEST_CASE("the same code built from different sources has one fingerprint; other code another") {
    const std::string base = HashOf(kKernel, "1", "1");
    REQUIRE(base.size() == 64);
    CHECK(base.find_first_not_of("0123456789abcdef") == std::string::npos);
    SUBCASE("a comment and a renamed local") { CHECK(HashOf(kCommentedRenamed, "1", "1") == base); }
    SUBCASE("a knob the code never reads") { CHECK(HashOf(kKernel, "2", "1") == base); }
    SUBCASE("a knob that changes a constant of the code") {
      const std::string offset2 = HashOf(kKernel, "1", "2");
      CHECK(offset2.size() == 64);
      CHECK(offset2 != base);
      CHECK(HashOf(kCommentedRenamed, "2", "2") == offset2);
    }
    SUBCASE("another loop") { CHECK(HashOf(kOtherLoop, "1", "1") != base); }
    SUBCASE("the build cache keeps the fingerprint with the artifact") { CHECK(HashOf(kKernel, "1", "1") == base); }
  }

  TEST_CASE("a build folder's fingerprint: every file but the source, ELF files as code; none without one") {
    Evaluator& evaluator = Shared();
    const BuildResult build = evaluator.Build(
        Candidate{kKernel, {{"UNUSED", "1"}, {"OFFSET", "1"}}, evaluator.Toolchain(), evaluator.Flags()});
    REQUIRE_MESSAGE(build.ok, build.log);
    testing::TempDir one, two;
    for (const auto* folder : {&one, &two}) {
      std::filesystem::copy_file(build.library, *folder / "kernel.so");
      // A file that names its own folder (a dependency list) says the same in both.
      std::ofstream(*folder / "kernel.d") << "kernel.o: " << folder->path().string() << "/kernel.c\n";
      std::ofstream(*folder / "table.txt") << "1 2 3\n";
    }
    std::ofstream(one / "kernel.c") << "/* a source */";
    std::ofstream(two / "kernel.c") << "/* another source of the same code */";
    const std::string hash = FolderFingerprint(one.path(), "kernel.c");
    CHECK(hash.size() == 64);
    CHECK(FolderFingerprint(two.path(), "kernel.c") == hash);  // the source is left out
    CHECK(FolderFingerprint(two.path()) != hash);               // unless it is not named
    // Data the run command may read is part of what it runs.
    std::ofstream(two / "table.txt") << "1 2 4\n";
    CHECK(FolderFingerprint(two.path(), "kernel.c") != hash);
    std::ofstream(two / "table.txt") << "1 2 3\n";
    REQUIRE(FolderFingerprint(two.path(), "kernel.c") == hash);
    std::filesystem::create_symlink("table.txt", two / "link.txt");
    CHECK(FolderFingerprint(two.path(), "kernel.c") != hash);
    std::filesystem::remove(two / "link.txt");
    std::filesystem::create_directory(two / "lib");
    std::filesystem::rename(two / "kernel.so", two / "lib" / "kernel.so");
    CHECK(FolderFingerprint(two.path(), "kernel.c") != hash);  // named by its place in the folder
    // No machine code: the source is the code, and unknown is not a hash.
    testing::TempDir text;
    std::ofstream(text / "kernel.py") << "def kernel(): pass\n";
    std::ofstream(text / "notes.txt") << "anything\n";
    CHECK(FolderFingerprint(text.path(), "kernel.py").empty());
    CHECK(FolderFingerprint(text / "missing").empty());
  }

  TEST_CASE("normalization: no addresses, no padding, symbols in name order, targets by name") {
    // Two layouts of the same two functions (objdump -h -s -d --no-show-raw-insn).
    const std::string first = R"(k.so:     file format elf64-x86-64

Sections:
Idx Name          Size      VMA               LMA               File off  Algn
  9 .text         00000100  0000000000001100  0000000000001100  00001100  2**4
                  CONTENTS, ALLOC, LOAD, READONLY, CODE
 11 .rodata       00000008  0000000000002000  0000000000002000  00002000  2**2
                  CONTENTS, ALLOC, LOAD, READONLY, DATA
Contents of section .rodata:
 2000 9a99d93f 00002040                    ...?.. @        

Disassembly of section .text:

0000000000001100 <frame_dummy>:
    1100:	jmp    1080 <register_tm_clones>

0000000000001110 <alpha>:
    1110:	vmovss 0xeec(%rip),%xmm1        # 2004 <_fini+0xcd8>
    1118:	jne    1110 <alpha>
    111a:	ret
    111b:	nopl   0x0(%rax,%rax,1)

0000000000001120 <beta>:
    1120:	call   1110 <alpha>
    1125:	ret
)";
    const std::string second = R"(k.so:     file format elf64-x86-64

Sections:
Idx Name          Size      VMA               LMA               File off  Algn
  9 .text         00000100  0000000000001200  0000000000001200  00001200  2**4
                  CONTENTS, ALLOC, LOAD, READONLY, CODE
 11 .rodata       00000008  0000000000003000  0000000000003000  00003000  2**2
                  CONTENTS, ALLOC, LOAD, READONLY, DATA
Contents of section .rodata:
 3000 9a99d93f 00002040                    ...?.. @        

Disassembly of section .text:

0000000000001200 <beta>:
    1200:	call   1230 <alpha>
    1205:	ret
    1206:	cs nopw 0x0(%rax,%rax,1)

0000000000001230 <alpha>:
    1230:	vmovss 0x1dcc(%rip),%xmm1        # 3004 <_fini+0xdd8>
    1238:	jne    1230 <alpha>
    123a:	ret
)";
    const std::string text = NormalizeDisassembly(first);
    CHECK(text == NormalizeDisassembly(second));
    CHECK(text ==
          "function alpha\nvmovss (%rip),%xmm1 @.rodata+0x4\njne <alpha>\nret\n"
          "function beta\ncall <alpha>\nret\n"
          "data .rodata\n9a99d93f00002040\n");
    // Another constant is other code.
    std::string other = second;
    other.replace(other.find("9a99d93f"), 8, "0000803f");
    CHECK(NormalizeDisassembly(other) != text);
    // A call through another GOT slot's function at the same offset is other code.
    const std::string via_got = R"(Sections:
Idx Name          Size      VMA               LMA               File off  Algn
  9 .text         00000100  0000000000001100  0000000000001100  00001100  2**4
 20 .got          00000020  0000000000003fe0  0000000000003fe0  00002fe0  2**3

Disassembly of section .text:

0000000000001110 <alpha>:
    1110:	call   *0x2eca(%rip)        # 3fe0 <expf@GLIBC_2.27>
)";
    std::string other_function = via_got;
    other_function.replace(other_function.find("expf"), 4, "logf");
    CHECK(NormalizeDisassembly(via_got) == "function alpha\ncall *(%rip) @.got+0x0 <expf@GLIBC_2.27>\n");
    CHECK(NormalizeDisassembly(other_function) != NormalizeDisassembly(via_got));
    // Nothing of the kernel: no fingerprint.
    CHECK(NormalizeDisassembly("k.so:     file format elf64-x86-64\n").empty());
    CHECK(CodeFingerprint("/nonexistent/kernel.so").empty());
  }
}

}  // namespace
}  // namespace kestrel
