// Device memory through the driver's virtual memory management (cuMemAddressReserve, cuMemCreate, cuMemMap),
// next to a plain cudaMalloc: what the collector records of each (issue 18, "VMM maps"). Two mappings share one
// reservation; the first is used by a kernel, the second is never touched (an unused allocation), and both are
// unmapped and released before the program ends. Build: nvcc -g -O0 -lineinfo -arch=sm_90 -lcuda.
#include <cuda.h>
#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>

#define CHECK_DRV(call)                                                     \
  do {                                                                      \
    CUresult r_ = (call);                                                   \
    if (r_ != CUDA_SUCCESS) {                                               \
      const char* s_ = nullptr;                                             \
      cuGetErrorString(r_, &s_);                                            \
      std::fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__, s_ ? s_ : "?"); \
      std::exit(1);                                                         \
    }                                                                       \
  } while (0)

__global__ void fill(float* out, size_t n, float value) {
  size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
  if (i < n) out[i] = value;
}

int main() {
  float* plain = nullptr;
  if (cudaMalloc(&plain, 1 << 20) != cudaSuccess) return 1;  // site:plain (control: an ordinary allocation)
  fill<<<(1 << 18) / 256, 256>>>(plain, 1 << 18, 1.0f);

  CUdevice device;
  CHECK_DRV(cuCtxGetDevice(&device));
  CUmemAllocationProp prop = {};
  prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
  prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  prop.location.id = device;
  size_t granularity = 0;
  CHECK_DRV(cuMemGetAllocationGranularity(&granularity, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM));
  const size_t bytes = 2 * granularity;  // 4 MiB on the H200 (2 MiB granularity)

  CUdeviceptr base;
  CHECK_DRV(cuMemAddressReserve(&base, 2 * bytes, 0, 0, 0));  // site:reserve
  CUmemGenericAllocationHandle used_handle, unused_handle;
  CHECK_DRV(cuMemCreate(&used_handle, bytes, &prop, 0));    // site:used_create
  CHECK_DRV(cuMemCreate(&unused_handle, bytes, &prop, 0));  // site:unused_create
  CHECK_DRV(cuMemMap(base, bytes, 0, used_handle, 0));             // site:used_map
  CHECK_DRV(cuMemMap(base + bytes, bytes, 0, unused_handle, 0));   // site:unused_map
  CUmemAccessDesc access = {};
  access.location = prop.location;
  access.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
  CHECK_DRV(cuMemSetAccess(base, 2 * bytes, &access, 1));

  const size_t n = bytes / sizeof(float);
  fill<<<(unsigned)((n + 255) / 256), 256>>>(reinterpret_cast<float*>(base), n, 2.0f);
  float first = 0.0f;
  if (cudaMemcpy(&first, reinterpret_cast<void*>(base), sizeof first, cudaMemcpyDeviceToHost) != cudaSuccess)
    return 1;
  std::printf("mapped[0] = %f\n", first);

  CHECK_DRV(cuMemUnmap(base, bytes));
  CHECK_DRV(cuMemUnmap(base + bytes, bytes));
  CHECK_DRV(cuMemRelease(used_handle));
  CHECK_DRV(cuMemRelease(unused_handle));
  CHECK_DRV(cuMemAddressFree(base, 2 * bytes));
  cudaFree(plain);
  return 0;
}
