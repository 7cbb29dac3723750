// Each context's collector memory: the device state the patch reads, its disabled twin, the pinned staging
// copy, the record buffers and the flags of the transfer protocol (device_state.h).
#pragma once

#include <cuda.h>

#include "diagnostics.h"
#include "run_state.h"

namespace rlc {

// Allocates cs.nbuf buffers of cs.capacity records and the rest; false (fault recorded) on failure.
bool allocate_context_buffers(CUcontext ctx, ContextState& cs, Diagnostics& diag);
// Object-level mode: the object table, marks and state (kObjectTableCapacity entries), device and pinned host.
bool allocate_object_buffers(CUcontext ctx, ContextState& cs, Diagnostics& diag);
// Zeroes the staging copy and the disabled state; true when the context is ready for launches.
bool clear_context_state(ContextState& cs, Diagnostics& diag);
// The staging copy of the device state for a new instrumented launch, every buffer free.
void arm_device_state(ContextState& cs);

}  // namespace rlc
