// The drain thread (collector/native/src/drain.cpp) over many launches, without a GPU: CPU threads stand in for
// the device patch and take tickets, wait for buffers and commit records as patch.cu does (device_state.h), the
// launches armed by the collector's own arm_device_state, ended as Tool::finish_job ends them (the drain of a
// launch's last generation overlapping the next launch) and settled one launch late. A sink checks that every
// launch's records arrive between its begin and its end, in launch order, all of them, each launch complete.
//
//   drain_test CAPACITY_RECORDS BUFFERS LAUNCHES WRITERS SEED
#include <atomic>
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

// patch.cu's protocol on host atomics (one writer per thread instead of a warp's leader).
void wait_for_buffer(RlDeviceState* s, unsigned long long gen) {
  const uint32_t b = (uint32_t)(gen % s->nbuf);
  while (__atomic_load_n(s->host_allowed + b, __ATOMIC_ACQUIRE) < gen) std::this_thread::yield();
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

unsigned long long take_ticket(RlDeviceState* s, unsigned n) {
  for (;;) {
    const unsigned long long t = __atomic_fetch_add(&s->head, (unsigned long long)n, __ATOMIC_ACQ_REL);
    wait_for_buffer(s, t / s->capacity);
    if (n == 1 || t % s->capacity + n <= s->capacity) return t;
    for (unsigned long long u = t; u < t + n; ++u) {
      if (u % s->capacity == 0) wait_for_buffer(s, u / s->capacity);
      RlSlot* w = slot_at(s, u);
      *w = RlSlot{};
      w->w[0] = (uint64_t)reuselens::RL_FORM_PADDING << RL_FORM_SHIFT;
      commit(s, u, 1);
    }
  }
}

// One record of launch `launch`: 1, 2 or 9 slots (header only, strided, full), its launch in the pc word.
void write_record(RlDeviceState* s, uint64_t launch, unsigned form) {
  const unsigned n = form == reuselens::RL_FORM_FULL ? RL_FULL_SLOTS : form == reuselens::RL_FORM_STRIDED ? 2 : 1;
  const unsigned long long t = take_ticket(s, n);
  RlSlot* head = slot_at(s, t);
  for (unsigned i = 1; i < n; ++i) head[i] = RlSlot{};
  if (form == reuselens::RL_FORM_STRIDED) head[1] = RlSlot{{0x7000, 4, 0, 32}};
  head->w[0] = 1u | uint64_t(form) << RL_FORM_SHIFT;
  head->w[1] = uint64_t(0xffffffffu) << 32 | RL_UNRESOLVED_FUNCTION;
  head->w[2] = launch;
  head->w[3] = 0;
  commit(s, t, n);
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
  }
  void consume(const RlSlot* slots, size_t n) override {
    CHECK(open_);
    reuselens::PackedCursor cursor(slots, n);
    while (const RlSlot* r = cursor.next()) {
      CHECK(r->w[2] == next_);
      ++count_;
    }
    CHECK(!cursor.malformed());
  }
  void end_launch(bool complete) override {
    CHECK(open_ && complete);
    counts.push_back(count_);
    open_ = false;
    ++next_;
  }
  std::vector<uint64_t> counts;  // records per launch, in launch order

 private:
  bool open_ = false;
  uint64_t next_ = 0, count_ = 0;
};

}  // namespace

int main(int argc, char** argv) {
  if (argc != 6) {
    std::fprintf(stderr, "usage: drain_test CAPACITY_RECORDS BUFFERS LAUNCHES WRITERS SEED\n");
    return 2;
  }
  const uint64_t capacity = strtoull(argv[1], nullptr, 10) * RL_FULL_SLOTS;
  const uint32_t nbuf = (uint32_t)atoi(argv[2]);
  const unsigned launches = (unsigned)atoi(argv[3]), writers = (unsigned)atoi(argv[4]);
  std::mt19937_64 rng(strtoull(argv[5], nullptr, 10));

  rlc::ContextState cs;
  cs.nbuf = nbuf;
  cs.capacity = capacity;
  std::vector<RlSlot> buffers(capacity * nbuf);
  std::vector<uint64_t> flags(2 * RL_MAX_BUFFERS, 0xdeadbeefull);  // fresh memory: arm_device_state sets them
  RlDeviceState stage{}, device{};
  cs.buffers = buffers.data();
  cs.host_allowed = flags.data();
  cs.host_ready = flags.data() + RL_MAX_BUFFERS;
  cs.h_stage = &stage;

  auto sink = std::make_unique<CheckingSink>();
  CheckingSink* checking = sink.get();
  std::vector<std::unique_ptr<rlc::RecordSink>> sinks;
  sinks.push_back(std::move(sink));
  rlc::Drainer drainer(sinks);
  drainer.start();

  std::vector<uint64_t> expected;
  rlc::DrainJob* ended = nullptr;
  const auto settle = [&] {  // Tool::settle_ended_launch(true) and record_outcome's checks
    if (ended == nullptr) return;
    drainer.wait_done(ended);
    CHECK(ended->complete && ended->drained == ended->end.total && ended->end.committed == ended->end.total);
    CHECK(ended->records == expected[ended->meta.id]);
    delete ended;
    ended = nullptr;
  };
  for (unsigned l = 0; l < launches; ++l) {
    // Sizes from none to several buffers' worth, most within one buffer (a short launch, drained at its end).
    const unsigned pick = (unsigned)(rng() % 8);
    const uint64_t records = pick == 0 ? 0 : pick < 6 ? rng() % (capacity / 3 + 1) : rng() % (3 * capacity);
    std::vector<unsigned> forms(records);
    for (auto& f : forms) f = (unsigned)(rng() % 3);  // FULL, NO_ADDRESSES, STRIDED
    expected.push_back(records);
    if (l % 17 == 16) cs.restart_generations = true;  // as after a fault (its own launch settled first)
    if (cs.restart_generations) settle();
    // Tool::start_instrumented_launch: armed, the state copied to the device, the job published.
    rlc::arm_device_state(cs);
    device = stage;
    auto* job = new rlc::DrainJob();
    job->cs = &cs;
    job->meta.id = l;
    job->base_gen = cs.next_gen;
    drainer.publish(job);
    std::vector<std::thread> threads;
    for (unsigned w = 0; w < writers; ++w)
      threads.emplace_back([&, w] {
        for (uint64_t i = w; i < records; i += writers) write_record(&device, l, forms[i]);
      });
    for (auto& t : threads) t.join();
    // Tool::await_kernel and finish_job: the end read back, the next launch's start, the job ended; the launch
    // ended before it settled.
    rlc::KernelEnd end;
    end.end_ticket = device.head;
    end.total = device.head - job->base_gen * capacity;
    for (uint32_t b = 0; b < nbuf; ++b)
      end.committed += device.committed[b] - rlc::committed_before(cs, job->base_gen, b);
    cs.next_gen = (end.end_ticket + capacity - 1) / capacity;
    drainer.end(job, end);
    settle();
    ended = job;
  }
  settle();
  drainer.stop();
  CHECK(checking->counts == expected);
  std::printf("ok\n");
  return 0;
}
