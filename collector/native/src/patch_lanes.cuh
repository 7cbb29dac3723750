// Lane helpers shared by the device patches (patch.cu, object_patch.cu).
#pragma once

#include <stdint.h>

// Internal linkage: a patch is built with --keep-device-functions, which would emit an external helper on its own.
static __device__ __forceinline__ uint32_t lane_id() {
  uint32_t r;
  asm volatile("mov.u32 %0, %%laneid;" : "=r"(r));
  return r;
}
