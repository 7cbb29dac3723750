// The drain thread (collector/native/src/drain.cpp) over many launches, without a GPU: CPU threads stand in for
// the device patch and take tickets, wait for buffers and commit records as patch.cu does (device_state.h), the
// launches armed by the collector's own arm_device_state, ended as Tool::finish_job ends them (the drain of a
// launch's last generation overlapping the next launch) and settled one launch late. A sink checks that every
// launch's records arrive between its begin and its end, in launch order, all of them, each launch complete.
// Launches go to several contexts, a context is destroyed and made again (its flags new memory), some kernels
// fault (tickets taken and never committed, writers stopped), the sink may be slow, the PC ranges change, and a
// launch's begin settles the one before when the drain thread is done with it, as the collector does.
//
//   drain_test CAPACITY_RECORDS BUFFERS LAUNCHES WRITERS SEED [CONTEXTS FAULT_PERCENT SLOW_SINK_US]
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <thread>
#include <vector>

#include "device_buffers.h"
#include "drain.h"

using reuselens::RlSlot;

// expect.h's EXPECT returns from the function; these checks run in sinks and lambdas too, so they end the process.
#define CHECK(cond)                                           \
  do {                                                        \
    if (!(cond)) {                                            \
      std::printf("failed: %s (line %d)\n", #cond, __LINE__); \
      std::fflush(stdout);                                    \
      std::_Exit(1);                                          \
    }                                                         \
  } while (0)

namespace {

std::atomic<bool> g_fault{false};  // a faulted kernel: writers waiting for a buffer give up, as the GPU's stop

// patch.cu's protocol on host atomics (one writer per thread instead of a warp's leader); false: the kernel faulted.
bool wait_for_buffer(RlDeviceState* s, unsigned long long gen) {
  const uint32_t b = (uint32_t)(gen % s->nbuf);
  while (__atomic_load_n(s->host_allowed + b, __ATOMIC_ACQUIRE) < gen) {
    if (g_fault) return false;
    std::this_thread::yield();
  }
  return true;
}

RlSlot* slot_at(RlDeviceState* s, unsigned long long t) {
  const unsigned long long gen = t / s->capacity;
  return reinterpret_cast<RlSlot*>(s->buffers) + (gen % s->nbuf) * s->capacity + (t % s->capacity);
}

void commit(RlDeviceState* s, unsigned long long t, unsigned n) {
  const unsigned long long gen = t / s->capacity;
  const uint32_t b = (uint32_t)(gen % s->nbuf);
  const unsigned long long use = gen / s->nbuf;
  const unsigned long long done = __atomic_add_fetch(&s->committed[b], (unsigned long long)n, __ATOMIC_ACQ_REL);
  if (done == (use + 1ull) * s->capacity) __atomic_store_n(s->host_ready + b, gen + 1ull, __ATOMIC_RELEASE);
}

constexpr unsigned long long kFaulted = ~0ull;

unsigned long long take_ticket(RlDeviceState* s, unsigned n) {
  for (;;) {
    const unsigned long long t = __atomic_fetch_add(&s->head, (unsigned long long)n, __ATOMIC_ACQ_REL);
    if (!wait_for_buffer(s, t / s->capacity)) return kFaulted;
    if (n == 1 || t % s->capacity + n <= s->capacity) return t;
    for (unsigned long long u = t; u < t + n; ++u) {
      if (u % s->capacity == 0 && !wait_for_buffer(s, u / s->capacity)) return kFaulted;
      RlSlot* w = slot_at(s, u);
      *w = RlSlot{};
      w->w[0] = (uint64_t)reuselens::RL_FORM_PADDING << RL_FORM_SHIFT;
      commit(s, u, 1);
    }
  }
}

// One record of launch `launch`: 1, 2 or 9 slots (header only, strided, full), its launch in the pc word. False:
// the kernel faulted first.
bool write_record(RlDeviceState* s, uint64_t launch, unsigned form) {
  const unsigned n = form == reuselens::RL_FORM_FULL ? RL_FULL_SLOTS : form == reuselens::RL_FORM_STRIDED ? 2 : 1;
  const unsigned long long t = take_ticket(s, n);
  if (t == kFaulted) return false;
  RlSlot* head = slot_at(s, t);
  for (unsigned i = 1; i < n; ++i) head[i] = RlSlot{};
  if (form == reuselens::RL_FORM_STRIDED) head[1] = RlSlot{{0x7000, 4, 0, 32}};
  head->w[0] = 1u | uint64_t(form) << RL_FORM_SHIFT;
  head->w[1] = uint64_t(0xffffffffu) << 32 | RL_UNRESOLVED_FUNCTION;
  head->w[2] = launch;
  head->w[3] = 0;
  commit(s, t, n);
  return true;
}

unsigned g_slow_us = 0;  // the sink sleeps up to this long at a quarter of its calls (an engine queue full)
std::mt19937 g_sink_rng(7);
void maybe_slow() {
  if (g_slow_us && g_sink_rng() % 4 == 0)
    std::this_thread::sleep_for(std::chrono::microseconds(g_sink_rng() % g_slow_us));
}

// Checks the order of events and counts each launch's records (by the launch in their pc word).
class CheckingSink : public rlc::RecordSink {
 public:
  const char* name() const override { return "checking"; }
  void begin_launch(const rlc::LaunchMeta& meta) override {
    CHECK(!open_);
    CHECK(meta.id == next_);
    open_ = true;
    count_ = 0;
    maybe_slow();
  }
  void consume(const RlSlot* slots, size_t n) override {
    CHECK(open_);
    reuselens::PackedCursor cursor(slots, n);
    while (const RlSlot* r = cursor.next()) {
      CHECK(r->w[2] == next_);
      ++count_;
    }
    CHECK(!cursor.malformed());
    maybe_slow();
  }
  void end_launch(bool complete) override {
    CHECK(open_);
    counts.push_back(count_);
    completes.push_back(complete);
    open_ = false;
    ++next_;
    maybe_slow();
  }
  std::vector<uint64_t> counts;  // records per launch, in launch order
  std::vector<bool> completes;

 private:
  bool open_ = false;
  uint64_t next_ = 0, count_ = 0;
};

// A context's collector memory (device_buffers.cpp's allocations), made again at a context's re-creation.
struct Context {
  rlc::ContextState cs;
  std::vector<RlSlot> buffers;
  std::vector<std::unique_ptr<std::vector<uint64_t>>> flags;  // every flag block it had: the drain may still read one
  RlDeviceState stage{}, device{};
  void make(uint64_t capacity, uint32_t nbuf) {
    cs = rlc::ContextState();
    cs.nbuf = nbuf;
    cs.capacity = capacity;
    buffers.assign(capacity * nbuf, RlSlot{});
    flags.push_back(std::make_unique<std::vector<uint64_t>>(2 * RL_MAX_BUFFERS, 0xdeadbeefull));  // not set yet
    cs.buffers = buffers.data();
    cs.host_allowed = flags.back()->data();
    cs.host_ready = flags.back()->data() + RL_MAX_BUFFERS;
    cs.h_stage = &stage;
  }
};

}  // namespace

int main(int argc, char** argv) {
  if (argc != 6 && argc != 9) {
    std::fprintf(stderr,
                 "usage: drain_test CAPACITY_RECORDS BUFFERS LAUNCHES WRITERS SEED [CONTEXTS FAULT_PERCENT "
                 "SLOW_SINK_US]\n");
    return 2;
  }
  const uint64_t capacity = strtoull(argv[1], nullptr, 10) * RL_FULL_SLOTS;
  const uint32_t nbuf = (uint32_t)atoi(argv[2]);
  const unsigned launches = (unsigned)atoi(argv[3]), writers = (unsigned)atoi(argv[4]);
  std::mt19937_64 rng(strtoull(argv[5], nullptr, 10));
  const unsigned contexts = argc == 9 ? (unsigned)atoi(argv[6]) : 1, fault_percent = argc == 9 ? atoi(argv[7]) : 0;
  g_slow_us = argc == 9 ? (unsigned)atoi(argv[8]) : 0;
  std::vector<Context> ctx(contexts);
  for (auto& c : ctx) c.make(capacity, nbuf);

  auto sink = std::make_unique<CheckingSink>();
  CheckingSink* checking = sink.get();
  std::vector<std::unique_ptr<rlc::RecordSink>> sinks;
  sinks.push_back(std::move(sink));
  rlc::Drainer drainer(sinks);
  drainer.start();

  std::vector<uint64_t> expected;  // records written per launch (a faulted one: before its fault)
  std::vector<bool> faulted;
  rlc::DrainJob* ended = nullptr;
  const auto settle = [&](bool wait) {  // Tool::settle_ended_launch and record_outcome's checks
    if (ended == nullptr || (!wait && !drainer.done(ended))) return;
    drainer.wait_done(ended);
    if (ended->end.faulted) {
      CHECK(!ended->complete && ended->records <= expected[ended->meta.id]);  // only full generations drained
    } else {
      CHECK(ended->complete && ended->drained == ended->end.total && ended->end.committed == ended->end.total);
      CHECK(ended->records == expected[ended->meta.id]);
    }
    delete ended;
    ended = nullptr;
  };
  for (unsigned l = 0; l < launches; ++l) {
    // Sizes from none to several buffers' worth, most within one buffer (a short launch, drained at its end).
    const unsigned pick = (unsigned)(rng() % 8);
    const uint64_t records = pick == 0 ? 0 : pick < 6 ? rng() % (capacity / 3 + 1) : rng() % (3 * capacity);
    std::vector<unsigned> forms(records);
    for (auto& f : forms) f = (unsigned)(rng() % 3);  // FULL, NO_ADDRESSES, STRIDED
    Context& c = ctx[rng() % contexts];
    rlc::ContextState& cs = c.cs;
    RlDeviceState& device = c.device;
    const bool fault = fault_percent > 0 && rng() % 100 < fault_percent;
    const uint64_t fault_after = fault && records > 0 ? rng() % records : 0;
    if (contexts > 1 && rng() % 29 == 0) {  // destroyed and made again (the last launch settled first, as there)
      settle(true);
      c.make(capacity, nbuf);
    }
    if (rng() % 13 == 0) drainer.set_ranges({});  // a module loaded
    settle(false);                                // Tool::on_launch_begin
    // Tool::start_instrumented_launch: armed, the state copied to the device, the job published.
    rlc::arm_device_state(cs);
    device = c.stage;
    auto* job = new rlc::DrainJob();
    job->cs = &cs;
    job->meta.id = l;
    job->base_gen = cs.next_gen;
    drainer.publish(job);
    std::atomic<uint64_t> written{0};
    g_fault = false;
    std::vector<std::thread> threads;
    for (unsigned w = 0; w < writers; ++w)
      threads.emplace_back([&, w] {
        for (uint64_t i = w; i < records; i += writers) {
          if (fault && written.load() >= fault_after) {  // the fault: some writers take a ticket they never commit
            if (w % 2) __atomic_fetch_add(&device.head, (unsigned long long)RL_FULL_SLOTS, __ATOMIC_ACQ_REL);
            return;
          }
          if (!write_record(&device, l, forms[i])) return;
          ++written;
        }
      });
    if (fault) {
      std::this_thread::sleep_for(std::chrono::microseconds(200));
      g_fault = true;  // writers still waiting for a buffer stop, as the faulted kernel's
    }
    for (auto& t : threads) t.join();
    expected.push_back(written.load());
    faulted.push_back(fault);
    // Tool::await_kernel and finish_job: the end read back (a faulted kernel's state cannot be), the next launch's
    // start, the job ended; the launch ended before it settled; a faulted one settled at once, numbering restarted.
    rlc::KernelEnd end;
    end.faulted = fault;
    if (!fault) {
      end.end_ticket = device.head;
      end.total = device.head - job->base_gen * capacity;
      for (uint32_t b = 0; b < nbuf; ++b)
        end.committed += device.committed[b] - rlc::committed_before(cs, job->base_gen, b);
    }
    cs.next_gen = (end.end_ticket + capacity - 1) / capacity;
    drainer.end(job, end);
    settle(true);
    ended = job;
    if (fault) {
      cs.restart_generations = true;
      settle(true);
    }
  }
  settle(true);
  drainer.stop();
  CHECK(checking->counts.size() == expected.size());
  for (size_t i = 0; i < expected.size(); ++i) {
    if (faulted[i]) {
      CHECK(checking->counts[i] <= expected[i] && !checking->completes[i]);
    } else {
      CHECK(checking->counts[i] == expected[i] && checking->completes[i]);
    }
  }
  std::printf("ok\n");
  return 0;
}
