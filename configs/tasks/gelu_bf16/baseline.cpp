// Expert baseline: oneDNN's eltwise GELU (erf) on bf16 memory, one thread.
// Debian's libdnnl is built on OpenMP (DNNL_CPU_RUNTIME OMP): the runner sets
// OMP_NUM_THREADS and this pins it again. The engine and stream are made
// once (a function-local static); the primitive is made per call, since the
// buffers change, and oneDNN's primitive cache makes that a lookup.
//
// oneDNN 2.6 has no bf16 GELU for a CPU without AVX-512 (an AMD EPYC with
// AVX2 only: "could not create a primitive descriptor iterator"). There it
// does what a user of the library would: x widened to f32 (bf16 is the top
// half of an f32), oneDNN's f32 GELU, and the result rounded to bf16 (to
// nearest, ties to even), in buffers kept from call to call.
#include <dnnl.hpp>

#include <cstdint>
#include <cstring>
#include <optional>
#include <vector>

extern "C" void omp_set_num_threads(int);

namespace {

float Widen(uint16_t bits) {
  const uint32_t word = static_cast<uint32_t>(bits) << 16;
  float value;
  std::memcpy(&value, &word, sizeof value);
  return value;
}

uint16_t Narrow(float value) {
  uint32_t word;
  std::memcpy(&word, &value, sizeof word);
  if ((word & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((word >> 16) | 0x40);  // NaN stays NaN
  return static_cast<uint16_t>((word + 0x7fffu + ((word >> 16) & 1u)) >> 16);
}

std::optional<dnnl::eltwise_forward::primitive_desc> Gelu(dnnl::memory::data_type type, int64_t n,
                                                          const dnnl::engine& engine) {
  const dnnl::memory::desc desc({n}, type, dnnl::memory::format_tag::a);
  const dnnl::eltwise_forward::desc op(dnnl::prop_kind::forward_inference, dnnl::algorithm::eltwise_gelu_erf, desc, 0.f,
                                       0.f);
  try {
    return dnnl::eltwise_forward::primitive_desc(op, engine);
  } catch (const dnnl::error&) {
    return std::nullopt;  // no implementation for this type on this CPU
  }
}

}  // namespace

void gelu_bf16(const uint16_t* x, uint16_t* y, int64_t n) {
  static const bool pinned = (omp_set_num_threads(1), true);
  (void)pinned;
  static dnnl::engine engine(dnnl::engine::kind::cpu, 0);
  static dnnl::stream stream(engine);
  if (auto pd = Gelu(dnnl::memory::data_type::bf16, n, engine)) {
    dnnl::memory src(pd->src_desc(), engine, const_cast<uint16_t*>(x));
    dnnl::memory dst(pd->dst_desc(), engine, y);
    dnnl::eltwise_forward(*pd).execute(stream, {{DNNL_ARG_SRC, src}, {DNNL_ARG_DST, dst}});
    stream.wait();
    return;
  }
  static std::vector<float> in, out;
  in.resize(static_cast<size_t>(n));
  out.resize(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) in[i] = Widen(x[i]);
  const auto pd = Gelu(dnnl::memory::data_type::f32, n, engine);
  dnnl::memory src(pd->src_desc(), engine, in.data());
  dnnl::memory dst(pd->dst_desc(), engine, out.data());
  dnnl::eltwise_forward(*pd).execute(stream, {{DNNL_ARG_SRC, src}, {DNNL_ARG_DST, dst}});
  stream.wait();
  for (int64_t i = 0; i < n; ++i) y[i] = Narrow(out[i]);
}
