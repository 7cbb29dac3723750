// PC resolution: absolute device PCs in drained records become (function id, offset in the function's
// section), through the address ranges of every loaded function.
#pragma once

#include <cuda.h>

#include <cstddef>
#include <cstdint>
#include <map>
#include <vector>

#include "reuselens/packed_records.h"
#include "run_state.h"

namespace rlc {

struct Range {
  uint64_t start, end;
  uint32_t fid;
  uint64_t value;
};

// The ranges of every function whose section address is known, sorted by start (outer before nested).
std::vector<Range> function_ranges(const std::map<CUmodule, ModuleEntry>& modules,
                                   const std::vector<FunctionEntry>& functions);
// What resolve_records saw in a packed stream.
struct PackedCounts {
  uint64_t records = 0;     // records (padding not counted), value companions included
  uint64_t companions = 0;  // value companions (RL_REC_VALUES) among them
  uint64_t unresolved = 0;  // records whose PC no range holds
  bool malformed = false;   // the walk stopped at a record it could not read (packed_record_slots)
  bool packed = false;      // some record is in a form other than FULL
};

// Resolves the records still marked RL_UNRESOLVED_FUNCTION in a packed stream of `n` slots, and counts them.
// With `starts`, also keeps each record's first slot there (in order, PADDING left out; cleared first): the engine
// queue needs them to unpack the stream, and finding them is a second serial walk of the stream otherwise.
void resolve_records(const std::vector<Range>& ranges, reuselens::RlSlot* slots, size_t n, PackedCounts* counts,
                     std::vector<const reuselens::RlSlot*>* starts = nullptr);

}  // namespace rlc
