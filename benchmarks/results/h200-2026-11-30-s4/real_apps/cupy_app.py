import cupy as cp
a = cp.arange(1 << 20, dtype=cp.float32)
b = float((a * 2 + 1).sum())                          # NVRTC-compiled elementwise + reduction
k = cp.ElementwiseKernel("float32 x, float32 y", "float32 z", "z = x * y + 1.0f", "fma_like")
c = k(a, a)
r = cp.RawKernel(r'''
extern "C" __global__ void shift(const float* x, float* y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i + 1 < n) y[i] = x[i + 1] - x[i];
}''', "shift")
d = cp.empty_like(a)
r(((1 << 20) // 256,), (256,), (a, d, cp.int32(1 << 20)))
cp.cuda.Device().synchronize()
print("cupy ok", b, float(c[10]), float(d[5]))
