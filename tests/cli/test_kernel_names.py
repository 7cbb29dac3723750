"""Kernel names in finding tables and exports (analyzer.reportview.short_kernel_name): the parameter list goes,
whatever parentheses the name holds before it, as PyTorch's and CUB's kernels have (names from a profiled
PyTorch run on the H200)."""

from __future__ import annotations

import pytest

from analyzer.reportview import short_kernel_name

TORCH_CLAMP = (
    "void at::native::vectorized_elementwise_kernel<4, at::native::(anonymous namespace)::launch_clamp_scalar("
    "at::TensorIteratorBase&, c10::Scalar, c10::Scalar, at::native::detail::ClampLimits)::{lambda()#1}::operator()"
    "() const::{lambda()#7}::operator()() const::{lambda(float)#1}, std::array<char*, 2ul> >(int, at::native::("
    "anonymous namespace)::launch_clamp_scalar(at::TensorIteratorBase&, c10::Scalar, c10::Scalar, at::native::"
    "detail::ClampLimits)::{lambda()#1}::operator()() const::{lambda()#7}::operator()() const::{lambda(float)#1}, "
    "std::array<char*, 2ul>)")


@pytest.mark.parametrize("name, short", [
    (TORCH_CLAMP, TORCH_CLAMP[5:TORCH_CLAMP.index(" >(int, ") + 2]),
    ("void (anonymous namespace)::softmax_warp_forward<float, float, float, 9, false, false>(float*, float const*, "
     "int, int, int, bool const*, int, bool)",
     "(anonymous namespace)::softmax_warp_forward<float, float, float, 9, false, false>"),
    ("vecadd(float const*, float const*, float*, int)", "vecadd"),
    ("kern()", "kern"),
    ("sm80_xmma_gemm_f32f32_f32f32_f32_nn_n_tilesize64x64x8_stage3_warpsize1x4x1_ffma_aligna4_alignc4_execute_kernel"
     "__5x_cublas", "sm80_xmma_gemm_f32f32_f32f32_f32_nn_n_tilesize64x64x8_stage3_warpsize1x4x1_ffma_aligna4_alignc4_"
     "execute_kernel__5x_cublas"),  # extern "C" or no demangled form: the name as it is
    ("_Z6vecaddPKfS0_Pfi", "_Z6vecaddPKfS0_Pfi"),
    ("broken)", "broken)"),  # unbalanced: left alone rather than cut
])
def test_short_kernel_name_drops_only_the_parameter_list(name, short):
    assert short_kernel_name({"name": name}) == short


def test_short_kernel_name_falls_back_to_mangled_then_id():
    assert short_kernel_name({"mangled": "_Z4kernv"}) == "_Z4kernv"
    assert short_kernel_name({"id": 7}) == "7"
