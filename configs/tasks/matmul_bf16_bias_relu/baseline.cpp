// Expert baseline: oneDNN's bf16 matmul (f32 accumulation and output) with a
// bias and a ReLU post-op in one primitive, on one thread (Debian's libdnnl
// runs on OpenMP: the runner sets OMP_NUM_THREADS and this pins it again).
// On a host with avx512_bf16 oneDNN uses its bf16 dot-product instructions.
// Engine and stream are made once; the primitive per call (a lookup in
// oneDNN's primitive cache for a repeated shape).
#include <dnnl.hpp>

#include <cstdint>

extern "C" void omp_set_num_threads(int);

void matmul_bf16_bias_relu(const uint16_t* a, const uint16_t* b, const float* bias, float* c, int64_t m, int64_t n,
                           int64_t k) {
  using dt = dnnl::memory::data_type;
  using tag = dnnl::memory::format_tag;
  static const bool pinned = (omp_set_num_threads(1), true);
  (void)pinned;
  static dnnl::engine engine(dnnl::engine::kind::cpu, 0);
  static dnnl::stream stream(engine);
  const dnnl::memory::desc a_desc({m, k}, dt::bf16, tag::ab);
  const dnnl::memory::desc b_desc({k, n}, dt::bf16, tag::ab);
  const dnnl::memory::desc bias_desc({1, n}, dt::f32, tag::ab);
  const dnnl::memory::desc c_desc({m, n}, dt::f32, tag::ab);
  dnnl::post_ops ops;
  ops.append_eltwise(1.f, dnnl::algorithm::eltwise_relu, 0.f, 0.f);
  dnnl::primitive_attr attr;
  attr.set_post_ops(ops);
  const dnnl::matmul::primitive_desc pd(dnnl::matmul::desc(a_desc, b_desc, bias_desc, c_desc), attr, engine);
  dnnl::memory am(a_desc, engine, const_cast<uint16_t*>(a));
  dnnl::memory bm(b_desc, engine, const_cast<uint16_t*>(b));
  dnnl::memory biasm(bias_desc, engine, const_cast<float*>(bias));
  dnnl::memory cm(c_desc, engine, c);
  dnnl::matmul(pd).execute(stream, {{DNNL_ARG_SRC, am}, {DNNL_ARG_WEIGHTS, bm}, {DNNL_ARG_BIAS, biasm}, {DNNL_ARG_DST, cm}});
  stream.wait();
}
