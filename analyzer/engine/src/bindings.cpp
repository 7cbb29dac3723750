// pybind11 module reuselens.analyzer._engine: the replay side of the engine (docs/engine.md, "Python binding").
// Records arrive as any C-contiguous buffer whose item size is 288 bytes (the numpy structured dtype that
// analyzer.replay builds from docs/trace-format.md) or as raw bytes; JSON comes back as a str.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <array>
#include <cstddef>
#include <cstring>
#include <string>
#include <utility>

#include "reuselens/engine.h"
#include "reuselens/object_touches.h"

namespace py = pybind11;
using reuselens::Engine;
using reuselens::EngineConfig;
using reuselens::LaunchInfo;
using reuselens::PackedCursor;
using reuselens::RlRecord;
using reuselens::RlSlot;
using reuselens::RlTraceHeader;

namespace {

// The bytes of a C-contiguous 1-D buffer, checked to be whole units of `unit` bytes (`what` names them).
std::pair<const void*, size_t> whole_units(const py::buffer& data, size_t unit, const char* what) {
  py::buffer_info info = data.request();
  size_t bytes = size_t(info.size) * size_t(info.itemsize);
  bool contiguous = info.ndim <= 1 && (info.ndim == 0 || info.strides[0] == info.itemsize);
  if (!contiguous) throw py::value_error(std::string(what) + " must be a C-contiguous 1-D buffer");
  if (bytes % unit != 0) {
    throw py::value_error(std::string(what) + " buffer of " + std::to_string(bytes) + " bytes is not a multiple of " +
                          std::to_string(unit));
  }
  return {info.ptr, bytes / unit};
}

void consume(Engine& engine, const py::buffer& data) {
  auto [records, n] = whole_units(data, sizeof(RlRecord), "records");
  py::gil_scoped_release release;
  engine.consume(static_cast<const RlRecord*>(records), n);
}

// Packed records (reuselens/packed_records.h), as the collector hands them to the engine.
void consume_packed(Engine& engine, const py::buffer& data) {
  auto [slots, n] = whole_units(data, sizeof(RlSlot), "packed records");
  py::gil_scoped_release release;
  engine.consume_packed(static_cast<const RlSlot*>(slots), n);
}

// The full records of a packed stream, as the collector's trace sink writes them; ValueError if malformed. With
// for_engine, as the engine queue hands them to the engine (unpack_for_engine), every byte it leaves unwritten 0xA5.
py::bytes unpack_records(const py::buffer& data, bool for_engine) {
  auto [slots, n] = whole_units(data, sizeof(RlSlot), "packed records");
  std::string out;
  PackedCursor cursor(static_cast<const RlSlot*>(slots), n);
  while (const RlSlot* r = cursor.next()) {
    RlRecord full;
    if (for_engine) {
      std::memset(&full, 0xA5, sizeof full);
      unpack_for_engine(r, &full);
    } else {
      unpack_record(r, &full);
    }
    out.append(reinterpret_cast<const char*>(&full), sizeof full);
  }
  if (cursor.malformed()) throw py::value_error("malformed packed records");
  return py::bytes(out);
}

void begin_launch(Engine& engine, uint64_t launch_id, uint32_t kernel_function_id, std::array<uint32_t, 3> grid,
                  std::array<uint32_t, 3> block, uint32_t dynamic_shared_bytes) {
  LaunchInfo l;
  l.launch_id = launch_id;
  l.kernel_function_id = kernel_function_id;
  for (int d = 0; d < 3; ++d) {
    l.grid[d] = grid[size_t(d)];
    l.block[d] = block[size_t(d)];
  }
  l.dynamic_shared_bytes = dynamic_shared_bytes;
  engine.begin_launch(l);
}

#define FIELD(S, f) m[#f] = py::make_tuple(offsetof(S, f), sizeof(S::f))

py::dict record_layout() {
  py::dict m;
  FIELD(RlRecord, type);
  FIELD(RlRecord, space);
  FIELD(RlRecord, access);
  FIELD(RlRecord, flags);
  FIELD(RlRecord, size);
  FIELD(RlRecord, warp);
  FIELD(RlRecord, function_id);
  FIELD(RlRecord, active_mask);
  FIELD(RlRecord, pc);
  FIELD(RlRecord, block);
  FIELD(RlRecord, addr);
  return m;
}

py::dict header_layout() {
  py::dict m;
  FIELD(RlTraceHeader, magic);
  FIELD(RlTraceHeader, version);
  FIELD(RlTraceHeader, header_bytes);
  FIELD(RlTraceHeader, record_bytes);
  FIELD(RlTraceHeader, flags);
  FIELD(RlTraceHeader, launch_id);
  FIELD(RlTraceHeader, record_count);
  FIELD(RlTraceHeader, kernel_function_id);
  FIELD(RlTraceHeader, reserved);
  return m;
}

}  // namespace

PYBIND11_MODULE(_engine, m) {
  m.doc() = "ReuseLens analysis engine (C++), replay binding";
  py::register_exception<reuselens::EngineError>(m, "EngineError", PyExc_RuntimeError);
  m.attr("RECORD_BYTES") = sizeof(RlRecord);
  m.attr("HEADER_BYTES") = sizeof(RlTraceHeader);
  m.attr("TRACE_VERSION") = RL_TRACE_VERSION;
  m.attr("TRACE_MIN_VERSION") = RL_TRACE_MIN_VERSION;
  m.attr("JSON_VERSION") = RL_ENGINE_JSON_VERSION;
  m.attr("SLOT_BYTES") = RL_SLOT_BYTES;
  m.def("unpack_records", &unpack_records, py::arg("slots"), py::arg("for_engine") = false,
        "the full records (bytes, 288 each) of a packed stream (reuselens/packed_records.h); for_engine: as the "
        "engine queue hands them to the engine, the bytes it leaves unwritten 0xA5");
  m.def("record_layout", &record_layout, "field -> (offset, size) of RlRecord, from the C++ header");
  m.def("header_layout", &header_layout, "field -> (offset, size) of RlTraceHeader, from the C++ header");
  m.def(
      "object_slice_bytes", [](uint64_t size) { return uint64_t(1) << reuselens::object_slice_shift(size); },
      py::arg("size"),
      "bytes per slice of an object of `size` bytes, by the one slice rule (reuselens/object_touches.h)");

  py::class_<Engine>(m, "Engine")
      .def(py::init([](unsigned workers, uint64_t budget, bool split_configurations, uint64_t inline_batch, bool values,
                       double value_approx) {
             EngineConfig c;
             c.workers = workers;
             c.shadow_budget_bytes = budget;
             c.split_configurations = split_configurations;
             c.inline_batch_records = inline_batch;
             c.values = values;
             c.value_approx = value_approx;
             return new Engine(c);
           }),
           py::arg("workers") = 1, py::arg("shadow_budget_bytes") = uint64_t(8) << 30,
           py::arg("split_configurations") = false,
           py::arg("inline_batch_records") = EngineConfig().inline_batch_records, py::arg("values") = false,
           py::arg("value_approx") = 0.0)
      .def("add_allocation", &Engine::add_allocation, py::arg("address"), py::arg("size"))
      .def("free_allocation", &Engine::free_allocation, py::arg("address"))
      .def("begin_launch", &begin_launch, py::arg("launch_id"), py::arg("kernel_function_id"), py::arg("grid"),
           py::arg("block"), py::arg("dynamic_shared_bytes") = 0)
      .def("consume", &consume, py::arg("records"))
      .def("consume_packed", &consume_packed, py::arg("slots"))
      .def("end_launch", &Engine::end_launch, py::arg("complete") = true, py::call_guard<py::gil_scoped_release>())
      .def("to_json", &Engine::to_json)
      .def("object_touches_json", &Engine::object_touches_json)
      .def("stats", [](const Engine& e) {
        auto s = e.stats();
        py::dict d;
        d["records"] = s.records;
        d["lane_accesses"] = s.lane_accesses;
        d["shadow_bytes"] = s.shadow_bytes;
        d["peak_shadow_bytes"] = s.peak_shadow_bytes;
        d["segment_records"] = s.segment_records;
        d["wide_unit_batches"] = s.wide_unit_batches;
        auto five = [](const double* v) { return py::make_tuple(v[0], v[1], v[2], v[3], v[4]); };
        d["phase_seconds"] = five(s.phase_seconds);
        d["phase_cpu_seconds"] = five(s.phase_cpu_seconds);
        d["consume_seconds"] = s.consume_seconds;
        return d;
      });
}
