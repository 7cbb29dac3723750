// The instrumentation floor: the device patch's callbacks (same names and signatures as
// collector/native/src/patch.cu) that return at once. A run with REUSELENS_PATCH pointing at this fatbin pays
// the Compute Sanitizer's patching, the call into the patch at every memory instruction and the collector's
// per-launch work, but writes no record: what no record encoding or engine change can remove (issue 14).
// Built by benchmarks/patch_variants/build.sh; never used for a real run (it records nothing).
#include <sanitizer_patching.h>

#include <stdint.h>

#define FLOOR_CB extern "C" __device__ __noinline__ SanitizerPatchResult

FLOOR_CB rl_global(void*, uint64_t, void*, uint32_t, uint32_t, const void*) { return SANITIZER_PATCH_SUCCESS; }
FLOOR_CB rl_shared(void*, uint64_t, void*, uint32_t, uint32_t, const void*) { return SANITIZER_PATCH_SUCCESS; }
FLOOR_CB rl_local(void*, uint64_t, void*, uint32_t, uint32_t, const void*) { return SANITIZER_PATCH_SUCCESS; }
FLOOR_CB rl_memcpy_async(void*, uint64_t, void*, uint32_t, uint32_t) { return SANITIZER_PATCH_SUCCESS; }
FLOOR_CB rl_matrix(void*, uint64_t, uint32_t, uint32_t, uint32_t, uint32_t, const void*) {
  return SANITIZER_PATCH_SUCCESS;
}
FLOOR_CB rl_barrier(void*, uint64_t, uint32_t, uint32_t, uint32_t) { return SANITIZER_PATCH_SUCCESS; }
FLOOR_CB rl_syncwarp(void*, uint64_t, uint32_t) { return SANITIZER_PATCH_SUCCESS; }
FLOOR_CB rl_cuda_barrier(void*, uint64_t, void*, uint32_t, uint32_t) { return SANITIZER_PATCH_SUCCESS; }
FLOOR_CB rl_block_exit(void*, uint64_t) { return SANITIZER_PATCH_SUCCESS; }
FLOOR_CB rl_smem_size(void*, uint64_t, uint32_t) { return SANITIZER_PATCH_SUCCESS; }
FLOOR_CB rl_bulk_g2s(void*, uint64_t, uint64_t, uint32_t, uint32_t, uint32_t, uint32_t) {
  return SANITIZER_PATCH_SUCCESS;
}
FLOOR_CB rl_bulk_s2g(void*, uint64_t, uint64_t, uint32_t, uint32_t) { return SANITIZER_PATCH_SUCCESS; }
