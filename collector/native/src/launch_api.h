// The launch API calls (cudaLaunchKernel*, cuLaunchKernel*), subscribed only to read the dynamic shared
// memory size, which Sanitizer_LaunchData lacks. The size is kept per thread from the call's ENTER to its
// EXIT, so the LAUNCH_BEGIN nested inside the call finds it.
#pragma once

#include <sanitizer.h>

#include <cstdint>
#include <string>
#include <vector>

namespace rlc {

// Enables the launch API callbacks; each one that fails is appended to *errors.
void enable_launch_api_callbacks(Sanitizer_SubscriberHandle sub, std::vector<std::string>* errors);
// A RUNTIME_API or DRIVER_API callback.
void on_launch_api_call(Sanitizer_CallbackDomain domain, Sanitizer_CallbackId cbid, const Sanitizer_CallbackData* cd);
// Dynamic shared memory of the launch being made on this thread; -1 = unknown.
int64_t pending_dynamic_smem();

}  // namespace rlc
