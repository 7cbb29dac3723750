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
// The staging copy of the device state for a new instrumented launch, whose tickets start at generation
// cs.next_gen (drain.h: generations are numbered on through the context's launches; the flags start again after
// a fault, cs.restart_generations).
void arm_device_state(ContextState& cs);
// Slots of buffer b counted as committed before generation `base` (commit() in patch.cu completes generation g of
// buffer b when the count reaches (g / nbuf + 1) * capacity).
uint64_t committed_before(const ContextState& cs, uint64_t base, uint32_t b);

}  // namespace rlc
