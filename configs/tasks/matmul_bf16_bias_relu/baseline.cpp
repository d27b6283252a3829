// Expert baseline: oneDNN's bf16 matmul (f32 accumulation and output) with a
// bias and a ReLU post-op in one primitive, on one thread (Debian's libdnnl
// runs on OpenMP: the runner sets OMP_NUM_THREADS and this pins it again).
// On a host with avx512_bf16 oneDNN uses its bf16 dot-product instructions.
// Engine and stream are made once; the primitive per call (a lookup in
// oneDNN's primitive cache for a repeated shape).
//
// oneDNN 2.6 has no bf16 matmul for a CPU without AVX-512 (an AMD EPYC with
// AVX2 only: "could not create a primitive descriptor iterator"). There it
// does what a user of the library would: a and b widened to f32 (bf16 is the
// top half of an f32, so every product is the same), and oneDNN's f32 matmul
// with the same post-ops, in buffers kept from call to call.
#include <dnnl.hpp>

#include <cstdint>
#include <optional>
#include <vector>

extern "C" void omp_set_num_threads(int);

namespace {

using dt = dnnl::memory::data_type;
using tag = dnnl::memory::format_tag;

std::optional<dnnl::matmul::primitive_desc> Matmul(dt type, int64_t m, int64_t n, int64_t k,
                                                   const dnnl::engine& engine) {
  const dnnl::memory::desc a_desc({m, k}, type, tag::ab);
  const dnnl::memory::desc b_desc({k, n}, type, tag::ab);
  const dnnl::memory::desc bias_desc({1, n}, dt::f32, tag::ab);
  const dnnl::memory::desc c_desc({m, n}, dt::f32, tag::ab);
  dnnl::post_ops ops;
  ops.append_eltwise(1.f, dnnl::algorithm::eltwise_relu, 0.f, 0.f);
  dnnl::primitive_attr attr;
  attr.set_post_ops(ops);
  try {
    return dnnl::matmul::primitive_desc(dnnl::matmul::desc(a_desc, b_desc, bias_desc, c_desc), attr, engine);
  } catch (const dnnl::error&) {
    return std::nullopt;  // no implementation for this type on this CPU
  }
}

void Widen(const uint16_t* from, std::vector<uint32_t>& to, int64_t count) {
  to.resize(static_cast<size_t>(count));
  for (int64_t i = 0; i < count; ++i) to[i] = static_cast<uint32_t>(from[i]) << 16;
}

}  // namespace

void matmul_bf16_bias_relu(const uint16_t* a, const uint16_t* b, const float* bias, float* c, int64_t m, int64_t n,
                           int64_t k) {
  static const bool pinned = (omp_set_num_threads(1), true);
  (void)pinned;
  static dnnl::engine engine(dnnl::engine::kind::cpu, 0);
  static dnnl::stream stream(engine);
  std::optional<dnnl::matmul::primitive_desc> pd = Matmul(dt::bf16, m, n, k, engine);
  const void* a_data = a;
  const void* b_data = b;
  static std::vector<uint32_t> a_wide, b_wide;  // f32 bits
  if (!pd) {
    pd = Matmul(dt::f32, m, n, k, engine);
    Widen(a, a_wide, m * k);
    Widen(b, b_wide, k * n);
    a_data = a_wide.data();
    b_data = b_wide.data();
  }
  dnnl::memory am(pd->src_desc(), engine, const_cast<void*>(a_data));
  dnnl::memory bm(pd->weights_desc(), engine, const_cast<void*>(b_data));
  dnnl::memory biasm(pd->bias_desc(), engine, const_cast<float*>(bias));
  dnnl::memory cm(pd->dst_desc(), engine, c);
  dnnl::matmul(*pd).execute(stream, {{DNNL_ARG_SRC, am}, {DNNL_ARG_WEIGHTS, bm}, {DNNL_ARG_BIAS, biasm}, {DNNL_ARG_DST, cm}});
  stream.wait();
}
