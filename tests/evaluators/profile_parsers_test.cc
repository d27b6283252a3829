// The profile's parsers on fixed text (evaluators/instruction_mix.h,
// compiler_remarks.h, profile_sources.h): objdump's disassembly, GCC's and
// clang's vectorization remarks and cachegrind's output file, each as the
// tool prints it; and the PMU's detection on this machine.

#include <doctest.h>

#include <string>

#include "evaluators/compiler_remarks.h"
#include "evaluators/instruction_mix.h"
#include "evaluators/profile_sources.h"

namespace kestrel {
namespace {

// objdump -h -s -d --no-show-raw-insn of a kernel: an AVX-512 loop with an
// FMA, a scalar tail, a division, a square root, a gather and a libm call.
constexpr const char* kObjdump = R"(
kernel.so:     file format elf64-x86-64

Sections:
Idx Name          Size      VMA               LMA               File off  Algn
  8 .plt          00000020  0000000000001020  0000000000001020  00001020  2**4
  9 .text         00000200  0000000000001040  0000000000001040  00001040  2**4

Disassembly of section .plt:

0000000000001030 <expf@plt>:
    1030:	jmp    *0x2fe2(%rip)        # 4018 <expf@GLIBC_2.27>

Disassembly of section .text:

0000000000001040 <frame_dummy>:
    1040:	vaddps %zmm0,%zmm0,%zmm0
    1046:	ret

0000000000001100 <_Z5scalePKfPfl>:
    1100:	vbroadcastss %xmm0,%zmm1
    1106:	vmovups (%rdi,%rax,4),%zmm2
    110d:	vfmadd213ps %zmm3,%zmm1,%zmm2
    1113:	vmovups %zmm2,(%rsi,%rax,4)
    111a:	vaddss %xmm1,%xmm2,%xmm3
    111e:	vdivss %xmm1,%xmm2,%xmm3
    1122:	vsqrtps %ymm1,%ymm2
    1126:	vgatherdps %ymm1,(%rax,%ymm2,4),%ymm3
    112c:	call   1030 <expf@plt>
    1131:	call   1180 <_Z6helperf>
    1136:	jne    1100 <_Z5scalePKfPfl>
    1138:	nopw   0x0(%rax,%rax,1)
    1140:	ret

0000000000001180 <_Z6helperf>:
    1180:	vxorps %xmm0,%xmm0,%xmm0
    1184:	vmulss %xmm1,%xmm0,%xmm0
    1188:	cvtsi2ss %rax,%xmm0
    118d:	ret
)";

TEST_CASE("the instruction mix counts the kernel's own functions by kind") {
  const InstructionMix mix = ParseInstructionMix(kObjdump, 512);
  // frame_dummy (the C runtime's) and the padding nop are not the kernel's.
  CHECK(mix.total == 16);
  CHECK(mix.packed_fp == 2);  // vfmadd213ps, vsqrtps
  CHECK(mix.scalar_fp == 3);  // vaddss, vdivss, vmulss
  CHECK(mix.fma == 1);
  CHECK(mix.vector_bits == 512);
  CHECK(mix.isa_vector_bits == 512);
  CHECK(mix.divisions == 2);  // vdivss, vsqrtps
  CHECK(mix.gathers == 1);
  REQUIRE(mix.calls.size() == 1);  // the helper is the kernel's own
  CHECK(mix.calls[0] == "expf");
}

TEST_CASE("scalar code on xmm registers is not vector code") {
  constexpr const char* kScalar = R"(
Disassembly of section .text:

0000000000001100 <scale_add>:
    1100:	vxorps %xmm0,%xmm0,%xmm0
    1104:	vmovss (%rdi,%rax,4),%xmm1
    1108:	vmovaps %xmm0,%xmm1
    1109:	vfmadd132ss %xmm2,%xmm3,%xmm1
    110e:	vmovss %xmm1,(%rsi,%rax,4)
    1113:	vcvtsi2ss %rax,%xmm0,%xmm0
    1118:	ret
)";
  const InstructionMix mix = ParseInstructionMix(kScalar, 256);
  CHECK(mix.total == 7);
  CHECK(mix.packed_fp == 0);
  CHECK(mix.scalar_fp == 1);
  CHECK(mix.fma == 1);
  CHECK(mix.vector_bits == 0);
  CHECK(mix.isa_vector_bits == 256);
  CHECK(mix.calls.empty());
}

TEST_CASE("an xmm move with memory is vector code") {
  constexpr const char* kSse = R"(
Disassembly of section .text:

0000000000001100 <scale_add>:
    1100:	movups (%rdi,%rax,4),%xmm1
    1104:	mulps %xmm2,%xmm1
    1108:	ret
)";
  const InstructionMix mix = ParseInstructionMix(kSse, 128);
  CHECK(mix.packed_fp == 1);
  CHECK(mix.vector_bits == 128);
}

TEST_CASE("a text without kernel functions is an empty mix") {
  CHECK(ParseInstructionMix("", 512).total == 0);
  CHECK(ParseInstructionMix("objdump: kernel.so: file format not recognized\n", 512).total == 0);
}

TEST_CASE("the ISA's widest vectors come from the host's flags") {
  CHECK(IsaVectorBits("sse4_2 avx avx2 fma avx512f avx512bw") == 512);
  CHECK(IsaVectorBits("sse4_2 avx avx2 fma") == 256);
  CHECK(IsaVectorBits("sse sse2") == 128);
  CHECK(IsaVectorBits("") == 0);
  CHECK(IsaVectorBits("avx512fp16") == 0);  // whole flags only
}

TEST_CASE("GCC's remarks are trimmed to the kernel's file, deduplicated and ordered by line") {
  constexpr const char* kLog =
      "kernel.cpp:12:21: optimized: loop vectorized using 32 byte vectors\n"
      "kernel.cpp:12:21: optimized: loop vectorized using 32 byte vectors\n"
      "kernel.cpp:12:21: optimized:  loop versioned for vectorization because of possible aliasing\n"
      "kernel.cpp:5:3: missed: couldn't vectorize loop\n"
      "kernel.cpp:6:12: missed: not vectorized: complicated access pattern.\n"
      "shim.cpp:40:5: missed: statement clobbers memory: kestrel_entry (_1);\n"
      "/usr/include/c++/12/bits/stl_algo.h:3000:7: optimized: basic block part vectorized\n"
      "kernel.cpp: In function 'void f()':\n";
  const CompilerRemarks remarks = ParseVectorizationRemarks(kLog, "kernel.cpp");
  REQUIRE(remarks.vectorized.size() == 2);
  CHECK(remarks.vectorized[0] == "kernel.cpp:12: loop vectorized using 32 byte vectors");
  CHECK(remarks.vectorized[1] == "kernel.cpp:12: loop versioned for vectorization because of possible aliasing");
  REQUIRE(remarks.missed.size() == 2);
  CHECK(remarks.missed[0] == "kernel.cpp:5: couldn't vectorize loop");
  CHECK(remarks.missed[1] == "kernel.cpp:6: not vectorized: complicated access pattern.");
}

TEST_CASE("clang's remarks are sorted by the flag that asked for them") {
  constexpr const char* kLog =
      "In file included from shim.cpp:1:\n"
      "./kernel.cpp:7:3: remark: vectorized loop (vectorization width: 8, interleaved count: 4) "
      "[-Rpass=loop-vectorize]\n"
      "  for (int64_t i = 0; i < n; ++i) y[i] = a * x[i] + 1.0f;\n"
      "  ^\n"
      "kernel.cpp:9:5: remark: loop not vectorized [-Rpass-missed=loop-vectorize]\n";
  const CompilerRemarks remarks = ParseVectorizationRemarks(kLog, "kernel.cpp");
  REQUIRE(remarks.vectorized.size() == 1);
  CHECK(remarks.vectorized[0] == "kernel.cpp:7: vectorized loop (vectorization width: 8, interleaved count: 4)");
  REQUIRE(remarks.missed.size() == 1);
  CHECK(remarks.missed[0] == "kernel.cpp:9: loop not vectorized");
  CHECK(RemarkFlags("clang version 16.0.6")[0] == "-Rpass=loop-vectorize");
  CHECK(RemarkFlags("g++ (Debian 12.2.0-14) 12.2.0")[0] == "-fopt-info-vec-optimized");
}

TEST_CASE("remarks are capped") {
  std::string log;
  for (int line = 1; line <= 40; ++line) log += "kernel.cpp:" + std::to_string(line) + ":1: missed: not vectorized\n";
  const CompilerRemarks remarks = ParseVectorizationRemarks(log, "kernel.cpp");
  CHECK(remarks.missed.size() == kMaxRemarks);
  CHECK(remarks.missed.front() == "kernel.cpp:1: not vectorized");
}

// A cachegrind.out file (valgrind 3.19, --cache-sim=yes, --demangle=no): the
// worker's own code and the loader are not the kernel's.
constexpr const char* kCachegrind = R"(desc: I1 cache:         32768 B, 64 B, 8-way associative
desc: D1 cache:         49152 B, 64 B, 12-way associative
desc: LL cache:         4194304 B, 64 B, 16-way associative
cmd: /kestrel/kestrel-worker /kestrel/kernel.so 0 0
events: Ir I1mr ILmr Dr D1mr DLmr Dw D1mw DLmw
fl=???
fn=_dl_relocate_object
0 100000 50 40 30000 900 800 10000 300 200
fn=_Z9transposePKfPfl
0 8000 2 2 2000 500 100 2000 1000 50
0 2000 0 0 0 0 0 0
fn=main
0 5000 5 5 1000 10 10 500 5 5
summary: 115000 57 47 33000 1410 910 12500 1305 255
)";

TEST_CASE("cachegrind's counts are summed over the kernel's functions only") {
  auto totals = ParseCachegrind(kCachegrind, {"_Z9transposePKfPfl", "kestrel_entry"});
  REQUIRE(totals);
  CHECK((*totals)["Ir"] == 10000);
  CHECK((*totals)["Dr"] == 2000);
  CHECK((*totals)["Dw"] == 2000);
  CHECK((*totals)["D1mr"] == 500);
  CHECK((*totals)["D1mw"] == 1000);
  CHECK((*totals)["DLmw"] == 50);
  const CounterProfile counters = CachegrindCounters(*totals, 2, 1000, "n=1000");
  CHECK(counters.source == "cachegrind");
  CHECK(counters.shape == "n=1000");
  REQUIRE(counters.instructions);
  CHECK(*counters.instructions == doctest::Approx(5.0));        // 10000 over 2 calls of 1000
  CHECK(*counters.d1_miss_rate == doctest::Approx(1500.0 / 4000));
  CHECK(*counters.ll_miss_rate == doctest::Approx(150.0 / 4000));
  CHECK(*counters.cache_misses == doctest::Approx(0.75));
  CHECK(!counters.cycles);  // a simulation has no clock
}

TEST_CASE("the PMU's counts per element: cycles, instructions, IPC, miss rates per L1 load; an event never on a counter is left out") {
  // 10 calls of a 1000-element shape; branch-misses never got a counter.
  const std::vector<EventCount> counts = {{"cycles", 2e6, 1e6, 0.002, 0.001},
                                          {"instructions", 4e6, 4e6, 0.002, 0.002},
                                          {"cache-misses", 1e4, 1e4, 0.002, 0.002},
                                          {"branch-misses", 0, 0, 0.002, 0},
                                          {"L1-dcache-loads", 1e6, 1e6, 0.002, 0.002},
                                          {"L1-dcache-load-misses", 1e5, 1e5, 0.002, 0.002}};
  const CounterProfile counters = PmuCounters(counts, 10, 1000, "n=1000");
  CHECK(counters.source == "pmu");
  CHECK(counters.shape == "n=1000");
  REQUIRE(counters.cycles);
  CHECK(*counters.cycles == doctest::Approx(200));  // the scaled value (multiplexed: counted half the time)
  CHECK(*counters.instructions == doctest::Approx(400));
  CHECK(*counters.ipc == doctest::Approx(2));
  CHECK(*counters.d1_miss_rate == doctest::Approx(0.1));
  CHECK(*counters.ll_miss_rate == doctest::Approx(0.01));
  CHECK(*counters.cache_misses == doctest::Approx(10));
  CHECK_FALSE(counters.branch_misses);
  const std::string digest = ProfileDigest(Profile{.counters = counters});
  CHECK(digest.find("counters (pmu, n=1000): cycles/elem 200, instructions/elem 400, IPC 2.00") != std::string::npos);
  // Nothing counted: nothing claimed.
  const CounterProfile none = PmuCounters({}, 10, 1000, "n=1000");
  CHECK_FALSE(none.cycles);
  CHECK_FALSE(none.ipc);
  CHECK_FALSE(none.d1_miss_rate);
}

TEST_CASE("a file that is not cachegrind's is refused with the line") {
  auto none = ParseCachegrind("hello\n", {"f"});
  REQUIRE(!none);
  CHECK(none.error().message().find("events:") != std::string::npos);
  auto bad = ParseCachegrind("events: Ir Dr\nfn=f\n0 12 x\n", {"f"});
  REQUIRE(!bad);
  CHECK(bad.error().message().find("line 3") != std::string::npos);
}

TEST_CASE("a forged cachegrind file is refused: no summary, one that does not add up, or more misses than accesses") {
  // The kernel runs in valgrind's process and can write the file itself.
  REQUIRE(ParseCachegrind(kCachegrind, {"f"}));  // valgrind's own adds up
  std::string text = kCachegrind;
  const std::string summary = "summary: 115000 57 47 33000 1410 910 12500 1305 255\n";
  const std::size_t at = text.find(summary);
  REQUIRE(at != std::string::npos);

  auto none = ParseCachegrind(text.substr(0, at), {"f"});
  REQUIRE(!none);
  CHECK(none.error().message().find("no summary") != std::string::npos);

  // The kernel's function made cheaper, the summary left as it was.
  std::string cheaper = text;
  cheaper.replace(cheaper.find("0 8000 2 2 2000"), 15, "0 80 2 2 2000");
  auto unbalanced = ParseCachegrind(cheaper, {"_Z9transposePKfPfl"});
  REQUIRE(!unbalanced);
  INFO(unbalanced.error().message());
  CHECK(unbalanced.error().message().find("add up to 107080 Ir but its summary says 115000") != std::string::npos);

  // Lines and summary made to agree, but a level missing more than it is accessed.
  std::string impossible = text;
  impossible.replace(impossible.find("0 100000 50 40 30000 900 800 "), 29, "0 100000 50 40 30000 900 8000 ");
  impossible.replace(impossible.find(summary), summary.size(), "summary: 115000 57 47 33000 1410 8110 12500 1305 255\n");
  auto nested = ParseCachegrind(impossible, {"f"});
  REQUIRE(!nested);
  CHECK(nested.error().message().find("more DLmr than D1mr") != std::string::npos);
}

TEST_CASE("the PMU's detection says why it cannot be read, and doctor lists every source") {
  const std::string pmu = PmuUnavailableReason();
  if (!pmu.empty()) {
    CHECK(pmu.rfind("pmu: perf_event_open(PERF_TYPE_HARDWARE) failed: ", 0) == 0);
    CHECK(pmu.find('(') != std::string::npos);
  }
  const std::vector<ProfileSource> sources = DetectProfileSources("c++");
  REQUIRE(sources.size() == 5);
  CHECK(sources[0].name == "pmu");
  CHECK(sources[0].works == pmu.empty());
  CHECK(sources[1].name == "cachegrind");
  CHECK(sources[2].name == "objdump");
  CHECK(sources[2].works);  // binutils: the code fingerprint needs it too
  CHECK(sources[3].name == "compiler remarks");
  CHECK(sources[3].works);
  CHECK(sources[4].name == "ncu");
  for (const auto& source : sources) CHECK(!source.detail.empty());
  CHECK(DetectProfileSources("no-such-compiler-kestrel")[3].works == false);
}

}  // namespace
}  // namespace kestrel
