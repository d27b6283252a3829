/* The command protocol example's harness (docs/COMMAND_PROTOCOL.md): checks
   and times one candidate of the `poly` task against its reference, both
   linked in, and writes the answer document.

     bench ANSWER NONCE SEED MIN_TIME MIN_SAMPLES SHAPES_JSON

   What it does is what any harness should do, on any hardware:
   - inputs from the run's seed (uniform in [-1, 1]); 3 input sets per shape,
     plus odd sizes (7 and 33 elements) that catch remainder bugs;
   - outputs poisoned with NaN before each call, inputs compared after it,
     every element checked against |y - ref| <= atol + rtol * |ref|;
   - candidate and reference timed in turns, each sample long enough for the
     clock, until both have MIN_TIME seconds and MIN_SAMPLES samples;
   - one JSON answer, written to ANSWER, echoing NONCE. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

void candidate_poly(const float* x, float* y, int64_t n);
void reference_poly(const float* x, float* y, int64_t n);
typedef void (*kernel_fn)(const float*, float*, int64_t);

static const double kRtol = 1e-5, kAtol = 1e-6;  /* task.json's tolerance */
enum { kInputSets = 3, kMaxShapes = 16, kMaxSamples = 100000 };

static uint64_t state;
static double uniform(void) { /* xorshift64*, in [-1, 1) */
  state ^= state >> 12; state ^= state << 25; state ^= state >> 27;
  return (double)((state * 2685821657736338717ULL) >> 11) / 9007199254740992.0 * 2.0 - 1.0;
}

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static FILE* answer;
static const char* nonce;

static void fail(const char* outcome, const char* reason) {
  fprintf(answer, "{\"protocol\": 1, \"nonce\": \"%s\", \"outcome\": \"%s\", \"reason\": \"%s\"}\n", nonce, outcome, reason);
  fclose(answer);
  exit(0);
}

/* Checks the candidate on n elements and input set `set`; updates the error measures. */
static void check(int64_t n, uint64_t seed, int set, double* max_abs, double* max_rel) {
  float* x = malloc(sizeof(float) * (size_t)n);
  float* x_copy = malloc(sizeof(float) * (size_t)n);
  float* want = malloc(sizeof(float) * (size_t)n);
  float* got = malloc(sizeof(float) * (size_t)n);
  state = seed * 1000003u + (uint64_t)n * 31u + (uint64_t)set + 1u;
  for (int64_t i = 0; i < n; ++i) x[i] = (float)uniform();
  memcpy(x_copy, x, sizeof(float) * (size_t)n);
  for (int64_t i = 0; i < n; ++i) want[i] = got[i] = NAN;
  reference_poly(x, want, n);
  candidate_poly(x, got, n);
  if (memcmp(x, x_copy, sizeof(float) * (size_t)n) != 0) fail("wrong", "the kernel modified its input x");
  for (int64_t i = 0; i < n; ++i) {
    const double d = fabs((double)got[i] - (double)want[i]);
    if (!(d <= kAtol + kRtol * fabs((double)want[i]))) {
      char reason[200];
      snprintf(reason, sizeof reason, "y[%lld] is %g, expected %g (n=%lld, input set %d)", (long long)i, (double)got[i],
               (double)want[i], (long long)n, set);
      fail("wrong", reason);
    }
    if (d > *max_abs) *max_abs = d;
    if (want[i] != 0 && d / fabs((double)want[i]) > *max_rel) *max_rel = d / fabs((double)want[i]);
  }
  free(x); free(x_copy); free(want); free(got);
}

/* Seconds per call of one sample of at least 200 us (batched calls). */
static double sample(kernel_fn f, const float* x, float* y, int64_t n, int64_t* batch) {
  for (;;) {
    const double start = now();
    for (int64_t b = 0; b < *batch; ++b) f(x, y, n);
    const double seconds = now() - start;
    if (seconds >= 2e-4 || *batch >= (1 << 20)) return seconds / (double)*batch;
    *batch *= 2;
  }
}

static void print_samples(const double* s, int count) {
  fputc('[', answer);
  for (int i = 0; i < count; ++i) fprintf(answer, "%s%.9g", i ? ", " : "", s[i]);
  fputc(']', answer);
}

int main(int argc, char** argv) {
  if (argc != 7) {
    fprintf(stderr, "usage: bench ANSWER NONCE SEED MIN_TIME MIN_SAMPLES SHAPES_JSON\n");
    return 2;
  }
  answer = fopen(argv[1], "w");
  if (!answer) { perror(argv[1]); return 1; }
  nonce = argv[2];
  const uint64_t seed = strtoull(argv[3], NULL, 10);
  const double min_time = atof(argv[4]);
  const int min_samples = atoi(argv[5]);
  int64_t shapes[kMaxShapes];
  int count = 0;
  for (const char* p = strstr(argv[6], "\"n\":"); p && count < kMaxShapes; p = strstr(p + 1, "\"n\":")) {
    shapes[count++] = strtoll(p + 4, NULL, 10);
  }
  if (count == 0) { fprintf(stderr, "no shapes in %s\n", argv[6]); return 2; }

  double max_abs[kMaxShapes] = {0}, max_rel[kMaxShapes] = {0}, odd_abs = 0, odd_rel = 0;
  for (int set = 0; set < kInputSets; ++set) {
    for (int s = 0; s < count; ++s) check(shapes[s], seed, set, &max_abs[s], &max_rel[s]);
    check(7, seed, set, &odd_abs, &odd_rel);
    check(33, seed, set, &odd_abs, &odd_rel);
  }

  static double cand[kMaxSamples], ref[kMaxSamples];
  fprintf(answer, "{\"protocol\": 1, \"nonce\": \"%s\", \"outcome\": \"measured\", \"shapes\": [", nonce);
  for (int s = 0; s < count; ++s) {
    const int64_t n = shapes[s];
    float* x = malloc(sizeof(float) * (size_t)n);
    float* y = malloc(sizeof(float) * (size_t)n);
    state = seed * 7919u + (uint64_t)n;
    for (int64_t i = 0; i < n; ++i) x[i] = (float)uniform();
    int64_t cand_batch = 1, ref_batch = 1;
    double cand_total = 0, ref_total = 0;
    int samples = 0;
    while (samples < kMaxSamples && (samples < min_samples || cand_total < min_time || ref_total < min_time)) {
      cand[samples] = sample(candidate_poly, x, y, n, &cand_batch); /* in turns: the same machine state for both */
      ref[samples] = sample(reference_poly, x, y, n, &ref_batch);
      cand_total += cand[samples] * (double)cand_batch;
      ref_total += ref[samples] * (double)ref_batch;
      ++samples;
    }
    fprintf(answer, "%s{\"shape\": {\"n\": %lld}, \"candidate_s\": ", s ? ", " : "", (long long)n);
    print_samples(cand, samples);
    fprintf(answer, ", \"reference_s\": ");
    print_samples(ref, samples);
    fprintf(answer, ", \"max_abs_error\": %.9g, \"max_rel_error\": %.9g}", max_abs[s], max_rel[s]);
    free(x); free(y);
  }
  fprintf(answer, "], \"log\": \"3 input sets per shape and sizes 7 and 33 checked\"}\n");
  return fclose(answer) == 0 ? 0 : 1;
}
