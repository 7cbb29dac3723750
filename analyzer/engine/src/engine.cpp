// The analysis engine: Topological Distance (cuVein paper, section 3.1), PCDepGraph edges (3.2.1) and node
// distributions (3.2.2) from warp records. docs/engine.md describes the rules; the source files that implement
// each step (listed in engine_impl.h) cite them. This file: the engine's construction and its public API.
//
// Processing of one batch of records (docs/engine.md, "Determinism and parallelism"), every step parallel:
//   1. pieces of 64 records, to whichever worker is free: validation and node/barrier id lookup (new PCs are
//      inserted serially afterwards, in record order), then node distributions (pure sums) and routing: every
//      record to the worker owning its block, every lane of a global record to the worker owning its
//      granule's 1 KiB chunk of address space;
//   2. block owners, in record order: per-warp barrier counters, barrier executions, block exits, and the
//      shared/local shadow;
//   3. chunk owners, in record order: the global shadow.
// A block's and a granule's history is each seen by one worker in record order, so every label and origin is
// the one a single worker would compute; all aggregates are sums, merged at end_launch. In the code the steps
// keep the numbers of the stats they are timed under: phase 1 (ids) and 2 (distributions, routing) form step
// 1, phase 3 is step 2, phase 4 step 3.
#include "reuselens/engine.h"

#include <algorithm>
#include <cmath>
#include <exception>
#include <string>

#include "engine_impl.h"

namespace reuselens {

Engine::Impl::Impl(const EngineConfig& c)
    : config(c),
      approx_on(c.values && c.value_approx > 0),
      budget(c.shadow_budget_bytes),
      pool(std::min(kMaxWorkers, std::max(1u, c.workers)), c.worker_nice),
      W(pool.size()),
      block_magic(BlockOwners::magic_for(W)) {
  if (!(c.value_approx >= 0 && std::isfinite(c.value_approx))) {
    throw EngineError("value_approx must be a finite share >= 0, got " + std::to_string(c.value_approx));
  }
  nodes.push_back(NodeInfo{});
  barriers.push_back(BarrierInfo{});
  gen_kernel.push_back(kNone);
  for (unsigned w = 0; w < W; ++w) {
    workers.emplace_back(new Worker(&budget));
    for (auto& r : workers.back()->routing) {
      r.by_block.resize(W);
      r.by_chunk.resize(W);
    }
  }
  block_progress.reset(new PieceProgress[W]);
}

// ---- public API ----------------------------------------------------------------------------------------------
// An error thrown by consume() can leave a batch half applied (some blocks replayed, others not), so the engine
// refuses every later call instead of returning figures that mix in a partial batch (engine.h).
void Engine::Impl::check_usable() const {
  if (!failure.empty()) throw EngineError("engine unusable after an earlier error: " + failure);
}
Engine::Engine(const EngineConfig& config) : impl_(new Impl(config)) {}
Engine::~Engine() = default;
void Engine::add_allocation(uint64_t address, uint64_t size) {
  impl_->check_usable();
  impl_->add_allocation(address, size);
}
void Engine::free_allocation(uint64_t address) {
  impl_->check_usable();
  impl_->free_allocation(address);
}
void Engine::begin_launch(const LaunchInfo& launch) {
  impl_->check_usable();
  impl_->begin_launch(launch);
}
// A consume that throws leaves the engine unusable (engine.h): its error is kept for every later call.
template <class Impl, class Consume>
static void consume_or_fail(Impl& impl, Consume&& consume) {
  impl.check_usable();
  try {
    consume();
  } catch (const std::exception& e) {
    impl.failure = e.what();
    throw;
  }
}
void Engine::consume(const RlRecord* records, size_t count) {
  consume_or_fail(*impl_, [&] { impl_->consume(records, count); });
}
void Engine::consume_packed(const RlSlot* slots, size_t count) {
  consume_or_fail(*impl_, [&] { impl_->consume_packed(slots, count); });
}
void Engine::end_launch(bool complete) {
  impl_->check_usable();
  impl_->end_launch(complete);
}
std::string Engine::to_json() const {
  impl_->check_usable();
  if (impl_->open) throw EngineError("to_json() while a launch is open (end_launch first)");
  return impl_->to_json();
}
std::string Engine::object_touches_json() const {
  impl_->check_usable();
  return impl_->object_touches_json();
}
EngineStats Engine::stats() const {
  EngineStats s = impl_->counters;
  s.shadow_bytes = impl_->budget.used();
  s.peak_shadow_bytes = impl_->budget.peak();
  s.segment_records = impl_->segment_records();
  s.wide_unit_batches = impl_->wide_unit_batches;
  return s;
}

}  // namespace reuselens
