// The text of run.json (format reuselens-run, version 1; docs/run-directory.md), rewritten while the run goes
// on and once more, final, at exit.
#pragma once

#include <string>

#include "config.h"
#include "diagnostics.h"
#include "run_state.h"

namespace rlc {

std::string run_json_text(const Config& config, const RunState& run, const Diagnostics& diag, bool final_write);

}  // namespace rlc
