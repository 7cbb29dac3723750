// Structures read member by member (analyzer/operands.py, tests/analyzer/test_operands.py): the SASS addresses the
// members of one element from one base register at consecutive offsets. Built with
//   nvcc -cubin -lineinfo -O3 -arch=sm_90 -o elements.sm_90.cubin elements.cu   (nvcc 13.0.88, the PyPI wheel)
// and listed with nvdisasm -c elements.sm_90.cubin > elements.sm_90.sass (CUDA 13.0).
struct Quad {  // four ints, aligned to 4 only: four 4-byte loads a copy
  int x, y, z, w;
};
struct __align__(16) Pair {  // a 32-byte element: two 16-byte halves, the widest access there is
  float4 lo, hi;
};

__global__ void copy_quads(const Quad* in, Quad* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = in[i];
}

__global__ void copy_pairs(const Pair* in, Pair* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = in[i];
}

// every fourth int, unrolled by two: lanes 16 bytes apart like a Quad's, but two iterations, not two members
__global__ void every_fourth(const int* in, int* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (4 * i + 4 * n < 8 * n) out[i] = in[4 * i] + in[4 * i + 4 * n];
}
