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

void TraceFileSink::consume(const reuselens::RlSlot* slots, size_t n) {
  if (!f_ || n == 0) return;
  constexpr size_t kPerWrite = 4096;
  unpacked_.resize(kPerWrite);
  reuselens::PackedCursor cursor(slots, n);
  for (bool more = true; more;) {
    size_t k = 0;
    while (k < kPerWrite) {
      const reuselens::RlSlot* r = cursor.next();
      if (r == nullptr) {
        more = false;
        break;
      }
      reuselens::unpack_record(r, &unpacked_[k++]);
    }
    if (k > 0 && fwrite(unpacked_.data(), sizeof(RlRecord), k, f_) != k) {
      error = "cannot write trace of launch " + std::to_string(launch_) + ": " + strerror(errno);
      return;
    }
    count_ += k;
  }
  if (cursor.malformed()) error = "trace of launch " + std::to_string(launch_) + ": a record the host cannot read";
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
