// Expert baseline: oneDNN's softmax over the last axis, f32, one thread
// (Debian's libdnnl runs on OpenMP: the runner sets OMP_NUM_THREADS and this
// pins it again). Engine and stream are made once; the primitive per call
// (oneDNN's primitive cache makes a repeated shape a lookup).
#include <dnnl.hpp>

#include <cstdint>

extern "C" void omp_set_num_threads(int);

void softmax(const float* x, float* y, int64_t rows, int64_t cols) {
  static const bool pinned = (omp_set_num_threads(1), true);
  (void)pinned;
  static dnnl::engine engine(dnnl::engine::kind::cpu, 0);
  static dnnl::stream stream(engine);
  const dnnl::memory::desc desc({rows, cols}, dnnl::memory::data_type::f32, dnnl::memory::format_tag::ab);
  const dnnl::softmax_forward::primitive_desc pd(
      dnnl::softmax_forward::desc(dnnl::prop_kind::forward_inference, desc, 1), engine);
  dnnl::memory src(desc, engine, const_cast<float*>(x));
  dnnl::memory dst(desc, engine, y);
  dnnl::softmax_forward(pd).execute(stream, {{DNNL_ARG_SRC, src}, {DNNL_ARG_DST, dst}});
  stream.wait();
}
