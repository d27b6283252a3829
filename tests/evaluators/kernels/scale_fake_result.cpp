// Prints a result JSON that claims success and computes nothing: the engine
// must not believe it (wrong: the outputs are still NaN).
#include <cstdint>
#include <cstdio>

void scale_add(const float*, float*, int64_t, float) {
  const char* fake =
      "{\"nonce\":\"00000000000000000000000000000000\",\"error\":\"\",\"checks\":[],"
      "\"timings\":[{\"candidate\":[1e-9],\"reference\":[1.0],\"candidate_batch\":1,\"reference_batch\":1}]}";
  std::printf("%s\n", fake);
  std::fprintf(stderr, "%s\n", fake);
  std::fflush(stdout);
}
