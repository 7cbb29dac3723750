// Every strided form (group 1..32, strides and group strides of several sizes and signs, full and partial masks)
// unpacked by reuselens/packed_records.h, against the definition computed lane by lane with products. Built at
// each optimisation level the package may be built with (test_packed_records.py): the unpacking's loops are what
// compilers vectorize, and one (GCC 12.2, -O2) got a former form of them wrong.
#include <cstdint>
#include <cstdio>
#include <cstring>

#include "reuselens/packed_records.h"

using namespace reuselens;

int main() {
  const uint64_t strides[] = {0, 1, 4, 8, 16, 144, 4096, ~uint64_t(3), ~uint64_t(0) - 271};
  const uint32_t masks[] = {0xFFFFFFFFu, 0x0000FFFFu, 0x80000001u, 0x5A5A5A5Au, 1u};
  unsigned long checked = 0;
  for (uint32_t group = 1; group <= RL_WARP_SIZE; ++group) {
    for (uint64_t stride : strides) {
      for (uint64_t group_stride : strides) {
        for (uint32_t mask : masks) {
          RlRecord header{};
          header.type = RL_REC_MEM;
          header.active_mask = mask;
          RlSlot slots[2] = {};
          std::memcpy(&slots[0], &header, RL_SLOT_BYTES);
          slots[0].w[0] |= uint64_t(RL_FORM_STRIDED) << RL_FORM_SHIFT;
          const uint64_t base = 0x7fd31be08d80ull + group;
          slots[1].w[0] = base;
          slots[1].w[1] = stride;
          slots[1].w[2] = group_stride;
          slots[1].w[3] = group;
          RlRecord out;
          unpack_record(slots, &out);
          for (uint32_t lane = 0; lane < RL_WARP_SIZE; ++lane) {
            const uint64_t want =
                (mask >> lane & 1u) ? base + stride * (lane % group) + group_stride * (lane / group) : 0;
            if (out.addr[lane] != want || out.type != RL_REC_MEM || out.active_mask != mask) {
              std::printf("group %u stride %llx group stride %llx mask %x lane %u: %llx, want %llx\n", group,
                          (unsigned long long)stride, (unsigned long long)group_stride, mask, lane,
                          (unsigned long long)out.addr[lane], (unsigned long long)want);
              return 1;
            }
          }
          ++checked;
        }
      }
    }
  }
  std::printf("%lu forms unpacked as defined\n", checked);
  return 0;
}
