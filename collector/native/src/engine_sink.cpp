// The online analysis engine as a record sink (analyzer/engine, linked when the build has it).
#include "sinks.h"

namespace rlc {

std::unique_ptr<RecordSink> make_engine_sink() { return nullptr; }

}  // namespace rlc
