// What the engine queue's copy costs per record, without a GPU: a packed stream unpacked into a ring as the trace
// sink unpacks it (unpack_record, whole records) and as the queue hands records to the engine (unpack_for_engine,
// reuselens/packed_records.h), alternating, on one thread.
//   unpack_speed RING_KIB BROADCAST_PERCENT BARRIER_PERCENT
// The stream: 4 M records in runs of 32 of one kind (the warps of one instruction), that share of them broadcasts (a
// global 4-byte load whose 32 lanes read one address, two slots), that share barriers (one slot), the rest coalesced
// 4-byte loads (two slots). The ring: RING_KIB of records,
// written round and round (a few MiB: the queue short and its pages in the cache; 1 GiB: the whole ring, from memory).
// Prints ns a record for each way, three rounds.
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "reuselens/packed_records.h"

using reuselens::RlRecord;
using reuselens::RlSlot;

namespace {

std::vector<const RlSlot*> fill(std::vector<RlSlot>& stream, size_t records, unsigned broadcast, unsigned barrier) {
  std::vector<const RlSlot*> starts;
  uint64_t rng = 7;
  unsigned pick = 0;
  for (size_t k = 0; k < records; ++k) {
    if (k % 32 == 0) {  // the warps of one instruction come together (the drain's order): a kind per 32 records
      rng = rng * 6364136223846793005ull + 1442695040888963407ull;
      pick = unsigned(rng >> 33) % 100;
    }
    starts.push_back(reinterpret_cast<const RlSlot*>(stream.size()));  // an offset until the stream stops growing
    RlSlot head{};
    if (pick < barrier) {
      head.w[0] = reuselens::RL_REC_BARRIER | uint64_t(reuselens::RL_FORM_NO_ADDRESSES) << RL_FORM_SHIFT |
                  uint64_t(reuselens::RL_BARRIER_BLOCK) << 8;
      head.w[1] = uint64_t(0xffffffffu) << 32;
      head.w[2] = 0x200;
      head.w[3] = k / 1024;
      stream.push_back(head);
      continue;
    }
    head.w[0] = reuselens::RL_REC_MEM | uint64_t(reuselens::RL_FORM_STRIDED) << RL_FORM_SHIFT |
                uint64_t(reuselens::RL_SPACE_GLOBAL) << 8 | uint64_t(reuselens::RL_ACCESS_READ) << 16 |
                uint64_t(4) << 32;
    head.w[1] = uint64_t(0xffffffffu) << 32;
    head.w[2] = 0x100 + 16 * (k % 40);
    head.w[3] = k / 1024;
    stream.push_back(head);
    const bool one_address = pick < barrier + broadcast;
    stream.push_back(RlSlot{{0x7f0000000000ull + 128 * (k % (1 << 20)), one_address ? 0u : 4u, 0, 32}});
  }
  for (auto& s : starts) s = stream.data() + reinterpret_cast<uintptr_t>(s);
  return starts;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 4) {
    std::fprintf(stderr, "usage: unpack_speed RING_KIB BROADCAST_PERCENT BARRIER_PERCENT\n");
    return 2;
  }
  const size_t ring_records =
      std::max<size_t>(1, size_t(std::strtoull(argv[1], nullptr, 10)) * 1024 / sizeof(RlRecord));
  const unsigned broadcast = unsigned(std::atoi(argv[2])), barrier = unsigned(std::atoi(argv[3]));
  constexpr size_t kRecords = 4u << 20;
  std::vector<RlSlot> stream;
  stream.reserve(2 * kRecords);
  const std::vector<const RlSlot*> starts = fill(stream, kRecords, broadcast, barrier);
  std::vector<RlRecord> ring(ring_records);
  std::memset(ring.data(), 1, ring.size() * sizeof(RlRecord));  // its pages mapped, as a warm queue's are
  for (int round = 0; round < 3; ++round) {
    for (int engine = 0; engine < 2; ++engine) {
      const auto t0 = std::chrono::steady_clock::now();
      size_t at = 0;
      for (size_t k = 0; k < kRecords; ++k) {
        if (engine)
          reuselens::unpack_for_engine(starts[k], &ring[at]);
        else
          reuselens::unpack_record(starts[k], &ring[at]);
        if (++at == ring_records) at = 0;
      }
      const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      std::printf("%s %.1f", engine ? " for the engine" : "whole", 1e9 * s / kRecords);
    }
    std::printf("\n");
  }
  volatile uint64_t sink = ring[ring_records / 2].addr[0];
  (void)sink;
  return 0;
}
