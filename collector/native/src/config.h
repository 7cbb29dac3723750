// The collector's configuration: the REUSELENS_* variables collector/launcher.py sets (docs/collector.md lists
// them), read once at start-up.
#pragma once

#include <cstdint>
#include <string>

namespace rlc {

constexpr const char* kToolVersion = "0.1.0";
constexpr uint64_t kDefaultBufferBytes = 16ull << 20;  // per buffer
constexpr uint64_t kMinBufferRecords = 16;             // smallest buffer accepted (forces many flushes)

struct Config {
  std::string run_dir;
  std::string patch_path;
  std::string header_json;  // members given by the launcher (command, cwd, start_time)
  std::string regex_text, names_file;
  uint64_t range_first = 0, range_end = UINT64_MAX;
  bool range_end_set = false;
  bool write_traces = false;
  bool debug = false;
  bool lazy_patch = true;
  bool object_level = false;  // REUSELENS_OBJECT_LEVEL=1: object marks, no access trace (object_launches.cpp)
  // REUSELENS_OBJECT_ELEMENTS=1 (with object_level): each object's element map too (element_maps.cpp)
  bool object_elements = false;
  // REUSELENS_VALUES=1 (not with object_level): the value patch, whose MEM records carry their lanes' values in a
  // companion record (docs/trace-format.md, "Value companions"), for the value redundancy analysis
  bool values = false;
  // REUSELENS_VALUES_EVERY=k (value mode): values on the first of every k instrumented launches only (launch
  // sampling for long runs); the other launches are traced without them
  uint64_t values_every = 1;
  double values_approx = 0.01;  // REUSELENS_VALUES_APPROX (support.h, values_approx_from_env)
  // REUSELENS_ELEMENT_MAP_BYTES: at most this much device memory for the maps made at one table upload, besides
  // the share of the free memory (a test of the coarse maps; default: no cap)
  uint64_t element_map_cap = UINT64_MAX;
  // The device patch writes each record in the cheapest exact packed form (reuselens/packed_records.h) instead of
  // the full one (288 bytes); the same records reach the sinks either way. REUSELENS_PACKED_RECORDS=0 writes every
  // record full (docs/collector.md, "Packed records")
  bool packed = true;
  uint64_t buffer_bytes = kDefaultBufferBytes;
  uint32_t nbuf = 2;

  uint64_t buffer_records() const;  // full-form records per buffer
};

// The environment's configuration; an invalid value is clamped to the accepted range.
Config read_config();
// Read when the run directory is claimed: the online engine's queue (0 = in the drain thread) and the
// threads that copy each buffer into it.
uint64_t engine_queue_bytes();
unsigned queue_copy_threads();

}  // namespace rlc
