// Two sibling loops (a second pass over what the first pass summed) and a nested loop: the SASS listing beside this
// file (loops.sm_90.sass) is this file's, for tests/analyzer/test_loops.py. Rebuild it with
//   nvcc -cubin -O3 -lineinfo -arch=sm_90 -o loops.sm_90.cubin loops.cu && nvdisasm -c loops.sm_90.cubin > loops.sm_90.sass
// (both kept: the CUBIN for the branch decoder, the listing for what nvdisasm makes of it)
__global__ void two_passes(const float* a, float* out, int n) {
  int j = blockIdx.x * blockDim.x + threadIdx.x;
  float sum = 0.f;
  for (int i = 0; i < n; ++i) sum += a[i * 1024 + j];
  for (int i = 0; i < n; ++i) out[i * 1024 + j] = a[i * 1024 + j] / sum;
}

__global__ void nested(const float* a, float* out, int n, int m) {
  int j = blockIdx.x * blockDim.x + threadIdx.x;
  float total = 0.f;
  for (int i = 0; i < n; ++i) {
    for (int k = 0; k < m; ++k) total += a[(i * m + k) * 1024 + j];
    out[i * 1024 + j] = total;
  }
}
