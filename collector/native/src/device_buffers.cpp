#include "device_buffers.h"

#include <cstring>

#include <sanitizer.h>

namespace rlc {

bool allocate_context_buffers(CUcontext ctx, ContextState& cs, Diagnostics& diag) {
  // The disabled state is zeroed memory at least as large as either mode's state: both start with `enabled`.
  static_assert(sizeof(RlDeviceState) >= sizeof(RlObjectState), "the disabled state serves both modes");
  bool ok = diag.check(sanitizerAlloc(ctx, reinterpret_cast<void**>(&cs.d_state), sizeof(RlDeviceState)),
                       "sanitizerAlloc(state)", true) &&
            diag.check(sanitizerAlloc(ctx, reinterpret_cast<void**>(&cs.d_disabled), sizeof(RlDeviceState)),
                       "sanitizerAlloc(disabled state)", true) &&
            diag.check(sanitizerAllocHost(ctx, reinterpret_cast<void**>(&cs.h_stage), sizeof(RlDeviceState)),
                       "sanitizerAllocHost(staging)", true) &&
            diag.check(sanitizerAllocHost(ctx, reinterpret_cast<void**>(&cs.host_allowed), 2 * RL_MAX_BUFFERS * 8),
                       "sanitizerAllocHost(flags)", true);
  if (ok && cs.capacity > 0)
    ok = diag.check(sanitizerAllocHost(ctx, reinterpret_cast<void**>(&cs.buffers),
                                       cs.capacity * cs.nbuf * sizeof(reuselens::RlSlot)),
                    "sanitizerAllocHost(record buffers)", true);
  return ok;
}

bool allocate_object_buffers(CUcontext ctx, ContextState& cs, Diagnostics& diag) {
  const size_t table = kObjectTableCapacity * sizeof(RlObjectEntry),
               marks = kObjectTableCapacity * sizeof(RlObjectMark), block = kObjectStateBytes + marks;
  void* device_block = nullptr;
  void* staging = nullptr;
  const bool ok =
      diag.check(sanitizerAlloc(ctx, &device_block, block), "sanitizerAlloc(object state and marks)", true) &&
      diag.check(sanitizerAllocHost(ctx, &staging, block), "sanitizerAllocHost(object state and marks)", true) &&
      diag.check(sanitizerAlloc(ctx, reinterpret_cast<void**>(&cs.d_objects), table), "sanitizerAlloc(objects)",
                 true) &&
      diag.check(sanitizerAllocHost(ctx, reinterpret_cast<void**>(&cs.h_objects), table), "sanitizerAllocHost(objects)",
                 true) &&
      diag.check(sanitizerAllocHost(ctx, reinterpret_cast<void**>(&cs.h_marks), marks), "sanitizerAllocHost(marks)",
                 true);
  if (!ok) return false;
  memset(staging, 0, block);  // the staging's marks are never written: they zero the device's at each launch
  cs.d_object_state = static_cast<RlObjectState*>(device_block);
  cs.h_object_state = static_cast<RlObjectState*>(staging);
  cs.d_marks = reinterpret_cast<RlObjectMark*>(static_cast<char*>(device_block) + kObjectStateBytes);
  return true;
}

bool clear_context_state(ContextState& cs, Diagnostics& diag) {
  cs.host_ready = cs.host_allowed + RL_MAX_BUFFERS;
  memset(cs.h_stage, 0, sizeof(RlDeviceState));
  // The disabled state: a patched kernel launched outside the filter returns from every callback at once.
  return diag.check(sanitizerMemset(cs.d_disabled, 0, sizeof(RlDeviceState), nullptr), "sanitizerMemset(disabled)",
                    true);
}

}  // namespace rlc
