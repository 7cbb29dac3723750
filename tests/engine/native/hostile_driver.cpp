// Hostile input through the engine's C++ API (the entry both the collector and the Python replay use), built
// with ASan/UBSan by tests/engine/test_engine_sanitized.py: every call must either succeed or throw
// EngineError; a memory error or undefined behaviour stops the process with the sanitizer's report.
//
//   hostile_driver TRACE BX BY BZ [ADDRESS SIZE]   replays one .rltrace file (a launch of BX*BY*BZ threads,
//                                                  after add_allocation(ADDRESS, SIZE)), prints "ok" or
//                                                  "error: <message>"
//   hostile_driver --fuzz SEED [ROUNDS]            random allocations, launch shapes and records with every field
//                                                  drawn from its whole range, also packed with random forms;
//                                                  prints "ok N" (N calls refused)
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "reuselens/engine.h"

using namespace reuselens;

namespace {

std::vector<RlRecord> read_records(const char* path) {
  std::vector<RlRecord> out;
  FILE* f = std::fopen(path, "rb");
  if (!f) return out;
  RlTraceHeader header;
  if (std::fread(&header, sizeof header, 1, f) == 1) {
    RlRecord r;
    while (std::fread(&r, sizeof r, 1, f) == 1) out.push_back(r);
  }
  std::fclose(f);
  return out;
}

int replay(int argc, char** argv) {
  const std::vector<RlRecord> recs = read_records(argv[1]);
  try {
    Engine engine({2, 1ull << 30});
    if (argc == 7) engine.add_allocation(std::strtoull(argv[5], nullptr, 0), std::strtoull(argv[6], nullptr, 0));
    LaunchInfo launch;
    for (int d = 0; d < 3; ++d) launch.block[d] = uint32_t(std::strtoul(argv[2 + d], nullptr, 0));
    engine.begin_launch(launch);
    engine.consume(recs.data(), recs.size());
    engine.end_launch(true);
    std::printf("ok %zu\n", engine.to_json().size());
  } catch (const EngineError& e) {
    std::printf("error: %s\n", e.what());
  }
  return 0;
}

// A value from the edges of a field's range as often as from its middle.
uint64_t edgy(std::mt19937_64& rng, uint64_t max) {
  switch (rng() % 4) {
    case 0:
      return rng() % 4;
    case 1:
      return max - rng() % 4;
    case 2:
      return max >> (rng() % 64);
    default:
      return max == ~0ull ? rng() : rng() % (max + 1);
  }
}

int fuzz(unsigned seed, int rounds) {
  std::mt19937_64 rng(seed);
  unsigned refused = 0;
  for (int round = 0; round < rounds; ++round) {
    // Odd rounds also draw values outside each field's valid range (the batch is then refused in validation);
    // even rounds only valid ones, however extreme, so the records reach the shadow.
    const bool wild = round % 2 == 1;
    Engine engine({unsigned(1 + rng() % 3), 64ull << 20});
    auto attempt = [&](auto&& call) {
      try {
        call();
        return true;
      } catch (const EngineError&) {
        ++refused;
        return false;
      }
    };
    for (int i = 0; i < 3; ++i) attempt([&] { engine.add_allocation(edgy(rng, ~0ull) & ~3ull, edgy(rng, ~0ull)); });
    LaunchInfo launch;
    for (int d = 0; d < 3; ++d) launch.block[d] = uint32_t(rng() % 3 ? 1 + rng() % 64 : edgy(rng, 0xffffffffu));
    if (!wild) launch.block[1] = launch.block[2] = 1;
    if (!wild) launch.block[0] = 1 + launch.block[0] % 1024;
    LaunchInfo valid = launch;  // a launch the engine accepts, so that every round's packed stream gets consumed
    valid.block[0] = 1 + launch.block[0] % 1024;
    valid.block[1] = valid.block[2] = 1;
    const bool launched = attempt([&] { engine.begin_launch(launch); });
    const LaunchInfo& shape = launched ? launch : valid;
    const uint32_t warps = (shape.block[0] * shape.block[1] * shape.block[2] + 31) / 32;
    std::vector<RlRecord> recs(100);
    for (RlRecord& r : recs) {
      std::memset(&r, 0, sizeof r);
      r.type = uint8_t(wild && rng() % 32 == 0 ? edgy(rng, 255) : 1 + rng() % 3);
      r.space = uint8_t(wild && rng() % 32 == 0 ? edgy(rng, 255) : 1 + rng() % 3);
      r.access = uint8_t(rng());
      r.size = uint16_t(rng() % 16 ? 1u << (rng() % 5) : edgy(rng, 0xffff));
      if (r.size == 0 && !wild) r.size = 0xffff;
      r.warp = uint16_t(wild && rng() % 32 == 0 ? edgy(rng, 0xffff) : rng() % warps);
      r.active_mask = uint32_t(rng() % 2 ? 0xffffffffu : rng());
      r.pc = rng() % 16 * 16;
      r.block = rng() % 8 ? rng() % 4 : edgy(rng, wild ? ~0ull : (1ull << 40) - 1);
      const uint64_t base = rng() % 2 ? edgy(rng, ~0ull) : rng() % 4096;
      for (int lane = 0; lane < 32; ++lane) r.addr[lane] = rng() % 8 ? base + uint64_t(lane) * (rng() % 3) * 4 : rng();
    }
    // The same records packed (packed_records.h) into a second engine: each record full, header-only or strided
    // (strides from the whole range), padding between, and in a wild round one defect (each would stop the stream's
    // walk before any other was met): forms from the whole 3 bits, stride groups from the whole 32, or a cut stream.
    std::vector<RlSlot> packed;
    const int defect = wild ? int(1 + rng() % 3) : 0;
    for (const RlRecord& r : recs) {
      const auto* whole = reinterpret_cast<const RlSlot*>(&r);
      if (rng() % 8 == 0) packed.push_back(RlSlot{{uint64_t(RL_FORM_PADDING) << RL_FORM_SHIFT, 0, 0, 0}});
      const uint64_t form = defect == 1 && rng() % 16 == 0 ? rng() % 8 : rng() % 3;
      RlSlot head = whole[0];
      head.w[0] = (head.w[0] & ~uint64_t(0xE0)) | (form << RL_FORM_SHIFT);
      if (form == RL_FORM_FULL) {
        packed.insert(packed.end(), whole, whole + RL_FULL_SLOTS);
        packed[packed.size() - RL_FULL_SLOTS] = head;
      } else {
        packed.push_back(head);
        if (form == RL_FORM_STRIDED)
          packed.push_back(RlSlot{{r.addr[0], edgy(rng, ~0ull), edgy(rng, ~0ull),
                                   defect == 2 ? 1 + edgy(rng, 0xfffffffeu) : 1 + rng() % 32}});
      }
    }
    if (defect == 3) packed.resize(rng() % (packed.size() + 1));
    Engine packed_engine({unsigned(1 + rng() % 3), 64ull << 20});
    if (attempt([&] { packed_engine.begin_launch(shape); }) &&
        attempt([&] { packed_engine.consume_packed(packed.data(), packed.size()); }))
      attempt([&] { packed_engine.end_launch(true); });
    if (!launched || !attempt([&] { engine.consume(recs.data(), recs.size()); })) continue;
    attempt([&] { engine.end_launch(rng() % 2 == 0); });
    attempt([&] { return engine.to_json().size(); });
  }
  std::printf("ok %u refused of %d rounds\n", refused, rounds);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if ((argc == 3 || argc == 4) && std::strcmp(argv[1], "--fuzz") == 0)
    return fuzz(unsigned(std::strtoul(argv[2], nullptr, 0)), argc == 4 ? std::atoi(argv[3]) : 16);
  if (argc == 5 || argc == 7) return replay(argc, argv);
  std::fprintf(stderr, "usage: hostile_driver TRACE BX BY BZ [ADDRESS SIZE] | --fuzz SEED [ROUNDS]\n");
  return 2;
}
