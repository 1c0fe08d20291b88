// The net's record of its kernels: every primitive by kind and
// implementation, and a reference kernel named with its measured share of
// the time the net's programs ran.
#include <gtest/gtest.h>

#include <regex>

#include "engines/onednn/net.h"

namespace nnbench::engines::onednn {
namespace {

using dnnl::algorithm;

// A convolution's backward-weights primitive in nhwc/ohwi layouts, which
// oneDNN 2.6 runs only with its reference kernel (on AVX2 and AVX-512);
// the survey test (tests/kernels) checks the engine never builds it.
dnnl::convolution_backward_weights::primitive_desc slow_pd(
    const dnnl::engine& eng) {
  const Dims src{2, 3, 8, 8}, w{4, 3, 3, 3}, dst{2, 4, 6, 6}, s{1, 1}, p{0, 0};
  const dnnl::convolution_forward::primitive_desc hint(
      {dnnl::prop_kind::forward_training, algorithm::convolution_direct,
       Md(src, Dt::f32, Tag::nhwc), Md(w, Dt::f32, Tag::ohwi), Md(),
       Md(dst, Dt::f32, Tag::nhwc), s, p, p},
      eng);
  return {
      {algorithm::convolution_direct, Md(src, Dt::f32, Tag::nhwc),
       Md(w, Dt::f32, Tag::ohwi), Md(), Md(dst, Dt::f32, Tag::nhwc), s, p, p},
      eng,
      hint};
}

TEST(NetKernels, AReferenceKernelIsNamedWithItsMeasuredShare) {
  const dnnl::engine eng(dnnl::engine::kind::cpu, 0);
  const auto pd = slow_pd(eng);
  ASSERT_TRUE(is_reference_name(pd.impl_info_str())) << pd.impl_info_str();
  Net net(eng, Dt::f32, 1);
  EXPECT_EQ(net.reference_kernels(), "none");
  const memory src = net.alloc(pd.src_desc()),
               dst = net.alloc(pd.diff_dst_desc());
  const memory dw = net.alloc(pd.diff_weights_desc());
  net.set_layer_name("conv_x");
  net.fwd(When::kAlways, dnnl::convolution_backward_weights(pd),
          {{DNNL_ARG_SRC, src},
           {DNNL_ARG_DIFF_DST, dst},
           {DNNL_ARG_DIFF_WEIGHTS, dw}});
  net.finalize();
  // Built, not run: named, no share yet (never a made-up 0 %).
  EXPECT_EQ(net.reference_kernels(),
            "conv_x convolution " + std::string(pd.impl_info_str()));
  for (int i = 0; i < 3; ++i) net.run_forward(true);
  const std::string text = net.reference_kernels();
  std::smatch m;
  ASSERT_TRUE(std::regex_match(
      text, m,
      std::regex("conv_x convolution ref:any \\(([0-9]+) % of the net's "
                 "forward and backward time over 3 steps\\)")))
      << text;
  // The program is this one step: nearly all of its time.
  EXPECT_GE(std::stoi(m[1]), 50) << text;
  EXPECT_LE(std::stoi(m[1]), 100) << text;
  EXPECT_NE(net.kernels().find("convolution ref:any"), std::string::npos)
      << net.kernels();
}

TEST(NetKernels, OptimisedKernelsAreListedByKind) {
  const dnnl::engine eng(dnnl::engine::kind::cpu, 0);
  Net net(eng, Dt::f32, 1);
  const Md md({2, 16}, Dt::f32, Tag::ab);
  const dnnl::eltwise_forward::primitive_desc pd(
      {dnnl::prop_kind::forward_inference, algorithm::eltwise_relu, md, 0.f,
       0.f},
      eng);
  const memory a = net.alloc(md), b = net.alloc(md);
  net.fwd(When::kAlways, dnnl::eltwise_forward(pd),
          {{DNNL_ARG_SRC, a}, {DNNL_ARG_DST, b}});
  net.finalize();
  net.run_forward(false);
  EXPECT_EQ(net.kernels(), "eltwise " + std::string(pd.impl_info_str()));
  EXPECT_EQ(net.reference_kernels(), "none");
}

}  // namespace
}  // namespace nnbench::engines::onednn
