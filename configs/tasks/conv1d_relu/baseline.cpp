// Expert baseline: oneDNN's f32 1-D convolution (direct algorithm, ncw
// layout, batch 1) with bias and a ReLU post-op, on one thread (Debian's
// libdnnl runs on OpenMP: the runner sets OMP_NUM_THREADS and this pins it
// again). Engine and stream are made once; the primitive per call (oneDNN's
// primitive cache makes a repeated shape a lookup).
#include <dnnl.hpp>

#include <cstdint>

extern "C" void omp_set_num_threads(int);

void conv1d_relu(const float* x, const float* w, const float* bias, float* y, int64_t cin, int64_t cout, int64_t len,
                 int64_t taps) {
  using dt = dnnl::memory::data_type;
  using tag = dnnl::memory::format_tag;
  static const bool pinned = (omp_set_num_threads(1), true);
  (void)pinned;
  static dnnl::engine engine(dnnl::engine::kind::cpu, 0);
  static dnnl::stream stream(engine);
  const dnnl::memory::desc src_desc({1, cin, len}, dt::f32, tag::ncw);
  const dnnl::memory::desc w_desc({cout, cin, taps}, dt::f32, tag::oiw);
  const dnnl::memory::desc bias_desc({cout}, dt::f32, tag::a);
  const dnnl::memory::desc dst_desc({1, cout, len}, dt::f32, tag::ncw);
  const int64_t left = taps / 2;
  const dnnl::convolution_forward::desc op(dnnl::prop_kind::forward_inference, dnnl::algorithm::convolution_direct,
                                           src_desc, w_desc, bias_desc, dst_desc, {1}, {left}, {taps - 1 - left});
  dnnl::post_ops ops;
  ops.append_eltwise(1.f, dnnl::algorithm::eltwise_relu, 0.f, 0.f);
  dnnl::primitive_attr attr;
  attr.set_post_ops(ops);
  const dnnl::convolution_forward::primitive_desc pd(op, attr, engine);
  dnnl::memory src(src_desc, engine, const_cast<float*>(x));
  dnnl::memory weights(w_desc, engine, const_cast<float*>(w));
  dnnl::memory b(bias_desc, engine, const_cast<float*>(bias));
  dnnl::memory dst(dst_desc, engine, y);
  dnnl::convolution_forward(pd).execute(
      stream, {{DNNL_ARG_SRC, src}, {DNNL_ARG_WEIGHTS, weights}, {DNNL_ARG_BIAS, b}, {DNNL_ARG_DST, dst}});
  stream.wait();
}
