// PC resolution: absolute device PCs in drained records become (function id, offset in the function's
// section), through the address ranges of every loaded function.
#pragma once

#include <cuda.h>

#include <cstddef>
#include <cstdint>
#include <map>
#include <vector>

#include "reuselens/trace_format.h"
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
// Resolves the records still marked RL_UNRESOLVED_FUNCTION; counts those no range holds in *unresolved.
void resolve_records(const std::vector<Range>& ranges, reuselens::RlRecord* r, size_t n, uint64_t* unresolved);

}  // namespace rlc
