// Expert baseline: oneDNN's f32 matmul with a bias and a GELU (erf) post-op,
// fused in one primitive, on one thread (Debian's libdnnl runs on OpenMP:
// the runner sets OMP_NUM_THREADS, and this pins it again). Engine and
// stream are made once; the primitive per call (oneDNN caches it by its
// descriptor, so a repeated shape is a lookup).
#include <dnnl.hpp>

#include <cstdint>

extern "C" void omp_set_num_threads(int);

void gemm_bias_gelu(const float* a, const float* b, const float* bias, float* c, int64_t m, int64_t n, int64_t k) {
  using dt = dnnl::memory::data_type;
  using tag = dnnl::memory::format_tag;
  static const bool pinned = (omp_set_num_threads(1), true);
  (void)pinned;
  static dnnl::engine engine(dnnl::engine::kind::cpu, 0);
  static dnnl::stream stream(engine);
  const dnnl::memory::desc a_desc({m, k}, dt::f32, tag::ab);
  const dnnl::memory::desc b_desc({k, n}, dt::f32, tag::ab);
  const dnnl::memory::desc bias_desc({1, n}, dt::f32, tag::ab);
  const dnnl::memory::desc c_desc({m, n}, dt::f32, tag::ab);
  dnnl::post_ops ops;
  ops.append_eltwise(1.f, dnnl::algorithm::eltwise_gelu_erf, 0.f, 0.f);
  dnnl::primitive_attr attr;
  attr.set_post_ops(ops);
  const dnnl::matmul::primitive_desc pd(dnnl::matmul::desc(a_desc, b_desc, bias_desc, c_desc), attr, engine);
  dnnl::memory am(a_desc, engine, const_cast<float*>(a));
  dnnl::memory bm(b_desc, engine, const_cast<float*>(b));
  dnnl::memory biasm(bias_desc, engine, const_cast<float*>(bias));
  dnnl::memory cm(c_desc, engine, c);
  dnnl::matmul(pd).execute(stream, {{DNNL_ARG_SRC, am}, {DNNL_ARG_WEIGHTS, bm}, {DNNL_ARG_BIAS, biasm}, {DNNL_ARG_DST, cm}});
  stream.wait();
}
