// What run.json says about the GPU: its name and architecture (through the driver the application loaded)
// and the driver version.
#pragma once

#include <cuda.h>

#include <string>

namespace rlc {

// Sets *name and *arch ("sm_90") for what the driver answers; leaves them alone otherwise.
void query_device(CUdevice dev, std::string* name, std::string* arch);
// The NVIDIA kernel module's version from /proc/driver/nvidia/version, or "".
std::string nvidia_driver_version();

}  // namespace rlc
