#include "python/native/python_stream.h"

#include <cstring>
#include <utility>

namespace sparkprof::python {

namespace {
thread_local std::shared_ptr<RaisedErrors> current_raised_errors;
}  // namespace

ScopedRaisedErrors::ScopedRaisedErrors(std::shared_ptr<RaisedErrors> errors)
    : previous_(std::exchange(current_raised_errors, std::move(errors))) {}

ScopedRaisedErrors::~ScopedRaisedErrors() { current_raised_errors = std::move(previous_); }

std::shared_ptr<RaisedErrors> RaisedErrorsForThisThread(
    const std::shared_ptr<RaisedErrors>& fallback) {
  return current_raised_errors ? current_raised_errors : fallback;
}

std::string DescribeException(const nb::python_error& error) {
  nb::handle value = error.value();
  std::string type_name = nb::cast<std::string>(nb::handle(error.type()).attr("__name__"));
  std::string text = nb::cast<std::string>(nb::str(value));
  return text.empty() ? type_name : type_name + ": " + text;
}

PythonInputStream::PythonInputStream(nb::object file, std::string display_name,
                                     std::shared_ptr<RaisedErrors> errors)
    : display_name_(std::move(display_name)), errors_(std::move(errors)) {
  has_readinto_ = nb::hasattr(file, "readinto");
  file_ = Share(std::move(file));
}

PythonInputStream::~PythonInputStream() {
  nb::detail::cleanup_guard guard;
  if (!guard) return;
  try {
    if (nb::hasattr(*file_, "close")) file_->attr("close")();
  } catch (nb::python_error& error) {
    // A failing close after the bytes were read changes nothing in the analysis.
    error.discard_as_unraisable("sparkprof: closing an event-log stream");
  }
}

Result<size_t> PythonInputStream::Read(char* buffer, size_t size) {
  if (!failure_.empty()) return IoError(failure_);
  if (size == 0) return size_t{0};
  nb::gil_scoped_acquire gil;
  return ReadWithGil(buffer, size);
}

Result<size_t> PythonInputStream::ReadWithGil(char* buffer, size_t size) {
  size_t got = 0;
  try {
    if (has_readinto_) {
      nb::object view =
          nb::steal(PyMemoryView_FromMemory(buffer, static_cast<Py_ssize_t>(size), PyBUF_WRITE));
      if (!view.is_valid()) throw nb::python_error();
      nb::object result = file_->attr("readinto")(view);
      // The view points into engine memory: no Python code may keep using it.
      view.attr("release")();
      if (result.is_none()) {
        failure_ = display_name_ + ": the stream is non-blocking and had no data (byte " +
                   std::to_string(offset_bytes_) + ")";
        return IoError(failure_);
      }
      got = nb::cast<size_t>(result);
    } else {
      nb::object chunk = file_->attr("read")(size);
      Py_buffer view;
      if (PyObject_GetBuffer(chunk.ptr(), &view, PyBUF_SIMPLE) != 0) throw nb::python_error();
      got = static_cast<size_t>(view.len);
      if (got <= size) std::memcpy(buffer, view.buf, got);
      PyBuffer_Release(&view);
    }
  } catch (nb::python_error& error) {
    failure_ = display_name_ + ": reading failed at byte " + std::to_string(offset_bytes_) + ": " +
               DescribeException(error);
    errors_->exceptions.push_back(Share(nb::borrow(error.value())));
    return IoError(failure_);
  } catch (const std::exception& error) {  // nb::cast of a result that is not an int
    failure_ = display_name_ + ": reading failed at byte " + std::to_string(offset_bytes_) +
               ": read returned something that is not a byte count or bytes";
    return IoError(failure_);
  }
  if (got > size) {
    failure_ = display_name_ + ": read returned " + std::to_string(got) +
               " bytes for a buffer of " + std::to_string(size);
    return IoError(failure_);
  }
  offset_bytes_ += got;
  return got;
}

}  // namespace sparkprof::python
