// What run.json says about the GPU: its name and architecture (through the driver the application loaded)
// and the driver version.
#pragma once

#include <cuda.h>

#include <cstdint>
#include <string>

namespace rlc {

// Sets *name and *arch ("sm_90") for what the driver answers; leaves them alone otherwise.
void query_device(CUdevice dev, std::string* name, std::string* arch);
// Free and total memory of the current context's device (cuMemGetInfo); false when the driver does not answer.
bool device_memory_info(uint64_t* free_bytes, uint64_t* total_bytes);
// The NVIDIA kernel module's version from /proc/driver/nvidia/version, or "".
std::string nvidia_driver_version();

}  // namespace rlc
