// Trace format shared by the collector (device patch and host) and the analysis engine.
// docs/trace-format.md is the prose description; this header is the only definition.
#pragma once

#include <stdint.h>

#ifdef __cplusplus
namespace reuselens {
#endif

#define RL_TRACE_MAGIC "RLTRACE"  // 8 bytes with the terminating NUL
#define RL_TRACE_VERSION 3u       // 3: companions may be uniform (RL_COMPANION_UNIFORM); 2: value companions; 1: none
#define RL_TRACE_MIN_VERSION 1u   // the oldest version readers accept
#define RL_WARP_SIZE 32

// VALUES: the value companion of the MEM record just before it (value mode, docs/trace-format.md "Value
// companions"), or padding (active_mask 0, no MEM record before it flagged RL_FLAG_VALUES).
enum RlRecordType { RL_REC_MEM = 1, RL_REC_BARRIER = 2, RL_REC_BLOCK_EXIT = 3, RL_REC_VALUES = 4 };
enum RlSpace { RL_SPACE_GLOBAL = 1, RL_SPACE_SHARED = 2, RL_SPACE_LOCAL = 3 };
enum RlBarrierKind { RL_BARRIER_BLOCK = 1, RL_BARRIER_WARP = 2, RL_BARRIER_MBARRIER = 3 };
// Sanitizer access flags as received (SANITIZER_MEMORY_DEVICE_FLAG_*): READ|WRITE together = atomic.
enum RlAccessFlags { RL_ACCESS_READ = 0x1, RL_ACCESS_WRITE = 0x2, RL_ACCESS_ATOMIC_SYSTEM = 0x4 };
// ASYNC_COPY: one half of a cp.async or bulk copy; MATRIX: ldmatrix/stmatrix rows; BULK: cp.async.bulk blocks;
// VALUES: a MEM record whose value companion (RL_REC_VALUES) is the next record of the trace.
// ONE_ADDRESS and ONE_STRIDE: never in a trace file or a device buffer; only on records the online engine is handed
// unpacked (packed_records.h, unpack_for_engine), global records without a companion, two or more lanes active, of
// which some addr slots are not written (they hold whatever the memory held). ONE_ADDRESS: at most 4 bytes per lane,
// every active lane on one address, written in the first active lane's slot alone. ONE_STRIDE: active lane l at
// a + stride * (l - lo), lo and hi the first and last active lanes, a = addr[lo], the stride not negative and the span
// a .. a + stride * (hi - lo) + size - 1 below 2^64; written in the slots of lo and hi alone, the stride being
// (addr[hi] - addr[lo]) / (hi - lo).
enum RlRecordFlags {
  RL_FLAG_ASYNC_COPY = 0x1,
  RL_FLAG_MATRIX = 0x2,
  RL_FLAG_BULK = 0x4,
  RL_FLAG_VALUES = 0x8,
  RL_FLAG_ONE_ADDRESS = 0x10,
  RL_FLAG_ONE_STRIDE = 0x20
};
// Flags of a companion (RL_REC_VALUES): UNIFORM, every lane of its active_mask has the value in addr[0] (the other
// addr slots are not written: a warp's values are often one value, or all zero, and the patch says so instead of
// writing 32 copies; the engine reads it in place).
enum RlCompanionFlags { RL_COMPANION_UNIFORM = 0x1 };
enum RlFileFlags { RL_FILE_COMPLETE = 0x1 };

struct RlTraceHeader {
  char magic[8];
  uint32_t version;
  uint32_t header_bytes;
  uint32_t record_bytes;
  uint32_t flags;
  uint64_t launch_id;
  uint64_t record_count;
  uint32_t kernel_function_id;
  uint8_t reserved[20];
};

struct RlRecord {
  uint8_t type;
  uint8_t space;
  uint8_t access;
  uint8_t flags;
  uint16_t size;
  uint16_t warp;
  uint32_t function_id;
  uint32_t active_mask;
  uint64_t pc;
  uint64_t block;
  uint64_t addr[RL_WARP_SIZE];
};

#ifdef __cplusplus
static_assert(sizeof(RlTraceHeader) == 64, "trace header layout is part of the file format");
static_assert(sizeof(RlRecord) == 288, "trace record layout is part of the file format");
}  // namespace reuselens
#endif
