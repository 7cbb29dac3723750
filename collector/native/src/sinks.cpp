#include "sinks.h"

#include <sys/stat.h>
#include <cerrno>
#include <cstring>

namespace rlc {

using reuselens::RlRecord;
using reuselens::RlTraceHeader;

namespace {
RlTraceHeader make_header(uint64_t launch, uint32_t kernel, uint64_t count, bool complete) {
  RlTraceHeader h;
  memset(&h, 0, sizeof h);
  memcpy(h.magic, RL_TRACE_MAGIC, 8);
  h.version = RL_TRACE_VERSION;
  h.header_bytes = sizeof(RlTraceHeader);
  h.record_bytes = sizeof(RlRecord);
  h.flags = complete ? reuselens::RL_FILE_COMPLETE : 0;
  h.launch_id = launch;
  h.record_count = count;
  h.kernel_function_id = kernel;
  return h;
}
}  // namespace

TraceFileSink::~TraceFileSink() {
  if (f_) fclose(f_);
}

void TraceFileSink::begin_launch(const LaunchMeta& meta) {
  if (f_) end_launch(false);
  std::string tdir = dir_ + "/traces";
  mkdir(tdir.c_str(), 0755);
  std::string path = tdir + "/" + std::to_string(meta.id) + ".rltrace";
  f_ = fopen(path.c_str(), "wb");
  if (!f_) {
    error = "cannot write " + path + ": " + strerror(errno);
    return;
  }
  launch_ = meta.id;
  kernel_ = meta.function_id;
  count_ = 0;
  RlTraceHeader h = make_header(launch_, kernel_, 0, false);
  if (fwrite(&h, sizeof h, 1, f_) != 1) error = "cannot write " + path;
}

// Full records go to the file where they lie, a run at a time (the default: no copy on the drain thread); packed
// ones are unpacked into unpacked_ first. Order is kept: whatever waits in unpacked_ is written before a run.
void TraceFileSink::consume(const reuselens::RlSlot* slots, size_t n) {
  if (!f_ || n == 0) return;
  constexpr size_t kPerWrite = 4096;
  unpacked_.resize(kPerWrite);
  size_t waiting = 0;                      // records in unpacked_
  const reuselens::RlSlot* run = nullptr;  // a run of full records in `slots`, `run_length` long
  size_t run_length = 0;
  bool failed = false;  // a write failed: nothing more of this call is written
  const auto write = [&](const void* records, size_t k) {
    if (k == 0 || failed) return;
    failed = fwrite(records, sizeof(RlRecord), k, f_) != k;
    if (failed)
      error = "cannot write trace of launch " + std::to_string(launch_) + ": " + strerror(errno);
    else
      count_ += k;
  };
  const auto write_waiting = [&] {
    write(unpacked_.data(), waiting);
    waiting = 0;
  };
  const auto write_run = [&] {
    write(run, run_length);
    run_length = 0;
  };
  reuselens::PackedCursor cursor(slots, n);
  while (const reuselens::RlSlot* r = cursor.next()) {
    if (reuselens::packed_form(*r) == reuselens::RL_FORM_FULL) {
      if (run_length > 0 && r != run + run_length * RL_FULL_SLOTS)
        write_run();  // padding between: a new run  // padding between: a new run
      if (run_length == 0) {
        write_waiting();
        run = r;
      }
      ++run_length;
      continue;
    }
    write_run();
    reuselens::unpack_record(r, &unpacked_[waiting]);
    if (++waiting == kPerWrite) write_waiting();
  }
  write_run();
  write_waiting();
  if (cursor.malformed() && !failed)
    error = "trace of launch " + std::to_string(launch_) + ": a record the host cannot read";
}

void TraceFileSink::end_launch(bool complete) {
  if (!f_) return;
  RlTraceHeader h = make_header(launch_, kernel_, count_, complete);
  if (fseek(f_, 0, SEEK_SET) != 0 || fwrite(&h, sizeof h, 1, f_) != 1)
    error = "cannot finish trace of launch " + std::to_string(launch_);
  fclose(f_);
  f_ = nullptr;
}

}  // namespace rlc
