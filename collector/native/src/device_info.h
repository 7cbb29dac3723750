// What run.json says about the GPU: its name, architecture and L2 size (through the driver the application loaded)
// and the driver version.
#pragma once

#include <cuda.h>

#include <cstdint>
#include <string>

namespace rlc {

// Sets *name, *arch ("sm_90") and *l2_bytes (the L2 cache, which the analysis weighs a working set against) for what
// the driver answers; leaves them alone otherwise.
void query_device(CUdevice dev, std::string* name, std::string* arch, uint64_t* l2_bytes);
// Free and total memory of the current context's device (cuMemGetInfo); false when the driver does not answer.
bool device_memory_info(uint64_t* free_bytes, uint64_t* total_bytes);
// The NVIDIA kernel module's version from /proc/driver/nvidia/version, or "".
std::string nvidia_driver_version();

}  // namespace rlc
