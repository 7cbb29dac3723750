// Strong and weak global accesses (analyzer/memory_order.py, tests/analyzer/test_memory_order.py): volatile loads and
// stores, scoped relaxed and acquire loads, next to plain and read-only ones. Built with
//   nvcc -cubin -lineinfo -O3 -arch=sm_90 -o volatile.sm_90.cubin volatile.cu   (nvcc 13.0)
// and listed with nvdisasm -c volatile.sm_90.cubin > volatile.sm_90.sass (CUDA 13.0).
#include <cuda/atomic>

// SHOC BFS's shape: a volatile cost read twice around an atomic other threads also do.
__global__ void volatile_reload(volatile int* cost, const int* next, int* out) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  int before = cost[i];
  atomicMin((int*)&cost[next[i]], before + 1);
  out[i] = cost[i] - before;  // the same volatile word again
}

// A flag polled until another block sets it, then a volatile store of progress.
__global__ void poll_flag(volatile int* flag, volatile int* progress, const float* __restrict__ in, float* out) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (blockIdx.x > 0)
    while (flag[0] == 0) {
    }
  out[i] = __ldg(&in[i]) * 2.0f;
  progress[blockIdx.x] = 1;
  progress[blockIdx.x] = 2;
}

// Scoped loads through cuda::atomic_ref: relaxed at device scope, acquire at system scope.
__global__ void scoped_loads(int* data, int* out) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  cuda::atomic_ref<int, cuda::thread_scope_device> device(data[i]);
  cuda::atomic_ref<int, cuda::thread_scope_block> block(data[i + 1]);
  out[i] = device.load(cuda::memory_order_relaxed) + block.load(cuda::memory_order_relaxed) + data[i + 2];
}
