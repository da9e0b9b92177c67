// rknnlite.api._rknnlite: LiteRuntime for Python. Arrays go to the runtime
// by pointer (the Python side makes them C-contiguous), outputs are written by
// rknn_outputs_get straight into new float32 arrays, and the GIL is released
// while the context works.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "lite_runtime.h"

namespace py = pybind11;
using rknnlite::CallError;
using rknnlite::LiteRuntime;

namespace {

py::dict to_dict(const rknnlite::TensorInfo& info) {
    py::dict d;
    d["index"] = info.index;
    d["name"] = info.name;
    d["dims"] = info.dims;
    d["fmt"] = static_cast<int>(info.fmt);
    d["type"] = static_cast<int>(info.type);
    d["qnt_type"] = static_cast<int>(info.qnt_type);
    d["zp"] = info.zp;
    d["scale"] = info.scale;
    d["n_elems"] = info.n_elems;
    d["size"] = info.size;
    d["size_with_stride"] = info.size_with_stride;
    return d;
}

std::unique_ptr<LiteRuntime> make_runtime(const py::bytes& model, uint32_t flags) {
    char* data = nullptr;
    Py_ssize_t size = 0;
    if (PyBytes_AsStringAndSize(model.ptr(), &data, &size) != 0) throw py::error_already_set();
    py::gil_scoped_release unlocked;  // rknn_init compiles the model
    return std::make_unique<LiteRuntime>(data, static_cast<size_t>(size), flags);
}

// inputs: (array, rknn_tensor_type, rknn_tensor_format, pass_through) per
// input; output_shapes: the dims of each float32 output.
py::tuple run(LiteRuntime& runtime, const py::list& inputs, const std::vector<std::vector<py::ssize_t>>& output_shapes) {
    std::vector<py::array> held;  // alive until the run is over
    std::vector<rknnlite::InputView> views;
    for (const py::handle item : inputs) {
        const auto spec = item.cast<py::tuple>();
        if (spec.size() != 4) throw py::value_error("an input is (array, type, fmt, pass_through)");
        py::array array = spec[0].cast<py::array>();
        if ((array.flags() & py::array::c_style) == 0) throw py::value_error("input arrays must be C-contiguous");
        rknnlite::InputView view;
        view.data = array.data();
        view.size = static_cast<size_t>(array.nbytes());
        const int type = spec[1].cast<int>(), fmt = spec[2].cast<int>();
        if (type < 0 || type >= RKNN_TENSOR_TYPE_MAX) throw py::value_error("not an rknn_tensor_type: " + std::to_string(type));
        if (fmt < 0 || fmt >= RKNN_TENSOR_FORMAT_MAX) throw py::value_error("not an rknn_tensor_format: " + std::to_string(fmt));
        view.type = static_cast<rknn_tensor_type>(type);
        view.fmt = static_cast<rknn_tensor_format>(fmt);
        view.pass_through = spec[3].cast<bool>();
        views.push_back(view);
        held.push_back(std::move(array));
    }
    py::list results;
    std::vector<rknnlite::OutputView> outputs;
    for (const auto& shape : output_shapes) {
        py::array_t<float> array(shape);
        // Zeroed: nothing uninitialised reaches Python whatever the run writes.
        std::fill_n(array.mutable_data(), array.size(), 0.0f);
        outputs.push_back({array.mutable_data(), static_cast<size_t>(array.nbytes())});
        results.append(array);
    }
    uint64_t frame_id = 0;
    {
        py::gil_scoped_release unlocked;
        frame_id = runtime.run(views, outputs);
    }
    return py::make_tuple(results, frame_id);
}

}  // namespace

PYBIND11_MODULE(_rknnlite, m) {
    m.doc() = "librknnrt contexts for the rknnlite package (use rknnlite.api.RKNNLite)";
    // RknnError(message) with .code, the C API's return code.
    static py::exception<CallError> error(m, "RknnError", PyExc_RuntimeError);
    py::register_exception_translator([](std::exception_ptr raised) {
        try {
            if (raised) std::rethrow_exception(raised);
        } catch (const CallError& e) {
            // (py::exception's own operator() only sets a message.)
            py::object instance = py::reinterpret_borrow<py::object>(error)(py::str(e.what()));
            instance.attr("code") = e.code();
            PyErr_SetObject(error.ptr(), instance.ptr());
        }
    });

    py::class_<LiteRuntime>(m, "Runtime")
        .def(py::init(&make_runtime), py::arg("model"), py::arg("flags") = 0)
        .def("release", &LiteRuntime::release)
        .def_property_readonly("released", &LiteRuntime::released)
        .def_property_readonly("n_inputs", &LiteRuntime::n_inputs)
        .def_property_readonly("n_outputs", &LiteRuntime::n_outputs)
        .def("set_core_mask", &LiteRuntime::set_core_mask)
        .def("input_attr",
             [](LiteRuntime& r, uint32_t i, bool current, bool native) { return to_dict(r.input(i, current, native)); },
             py::arg("index"), py::arg("current") = false, py::arg("native") = false)
        .def("output_attr", [](LiteRuntime& r, uint32_t i, bool current) { return to_dict(r.output(i, current)); },
             py::arg("index"), py::arg("current") = false)
        .def("input_shapes",
             [](LiteRuntime& r, uint32_t i) {
                 const rknnlite::InputShapes shapes = r.input_shapes(i);
                 py::dict d;
                 d["sets"] = shapes.sets;
                 d["min"] = shapes.min;
                 d["max"] = shapes.max;
                 d["step"] = shapes.step;
                 return d;
             })
        .def("set_input_shapes", &LiteRuntime::set_input_shapes)
        .def("run", &run, py::arg("inputs"), py::arg("output_shapes"))
        .def("sdk_version", &LiteRuntime::sdk_version)
        .def("last_run_us", &LiteRuntime::last_run_us)
        .def("perf_detail", &LiteRuntime::perf_detail);
}
