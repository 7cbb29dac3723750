// The device state of an instrumented launch, armed on the host (device_buffers.h): apart from the allocations, so
// that tests/collector/native/drain_test.cpp runs the launches' generations on a CPU stand-in for the GPU.
#include "device_buffers.h"

#include <cstring>

namespace rlc {

void arm_device_state(ContextState& cs) {
  RlDeviceState* st = cs.h_stage;
  memset(st, 0, sizeof *st);
  st->enabled = 1;
  st->nbuf = cs.nbuf;
  st->capacity = cs.capacity;
  st->buffers = cs.buffers;
  st->host_allowed = cs.host_allowed;
  st->host_ready = cs.host_ready;
  if (cs.restart_generations) {  // the context's first launch, or the first after a fault
    for (uint32_t b = 0; b < cs.nbuf; ++b) {
      cs.host_allowed[b] = b;
      cs.host_ready[b] = 0;
    }
    cs.next_gen = 0;
    cs.restart_generations = false;
  }
  st->head = cs.next_gen * cs.capacity;
  for (uint32_t b = 0; b < cs.nbuf; ++b) {
    st->committed[b] = committed_before(cs, cs.next_gen, b);
    // What the host allowed so far: the buffer of the last launch's last generation may still be draining, and
    // then its writers wait for the drain thread's hand-back as within a launch.
    st->allowed_cache[b] = *(volatile uint64_t*)(cs.host_allowed + b);
  }
}

uint64_t committed_before(const ContextState& cs, uint64_t base, uint32_t b) {
  const uint64_t first = base + (b + cs.nbuf - base % cs.nbuf) % cs.nbuf;  // buffer b's first generation >= base
  return first / cs.nbuf * cs.capacity;
}

}  // namespace rlc
