// Python objects held by engine code. The engine copies and destroys its stream openers on
// threads that do not hold the GIL (the analysis runs with the GIL released), so a Python
// reference lives behind a shared_ptr whose deleter takes the GIL to drop it.
#pragma once

#include <nanobind/nanobind.h>
#include <nanobind/stl/string.h>

#include <memory>
#include <string>
#include <vector>

namespace sparkprof::python {

namespace nb = nanobind;

using SharedObject = std::shared_ptr<const nb::object>;

// Call with the GIL held.
inline SharedObject Share(nb::object object) {
  return SharedObject(new nb::object(std::move(object)), [](const nb::object* held) {
    nb::detail::cleanup_guard guard;
    if (guard) {
      delete held;
    } else {
      // The interpreter is gone: the reference can no longer be dropped, only forgotten.
      const_cast<nb::object*>(held)->release();
      delete held;
    }
  });
}

// Exceptions raised by the Python side (a file object's read, a listing) while the engine was
// reading. The engine turns each into a located input problem and goes on; the Python caller
// gets them back to re-raise (a network error is not a corrupt log). Touched with the GIL held.
struct RaisedErrors {
  std::vector<SharedObject> exceptions;
};

// While an application is analysed on this thread, what its streams raise is kept with that
// analysis (applications may be analysed on several threads at once); outside, with `fallback`.
class ScopedRaisedErrors {
 public:
  explicit ScopedRaisedErrors(std::shared_ptr<RaisedErrors> errors);
  ~ScopedRaisedErrors();
  ScopedRaisedErrors(const ScopedRaisedErrors&) = delete;
  ScopedRaisedErrors& operator=(const ScopedRaisedErrors&) = delete;

 private:
  std::shared_ptr<RaisedErrors> previous_;
};
std::shared_ptr<RaisedErrors> RaisedErrorsForThisThread(
    const std::shared_ptr<RaisedErrors>& fallback);

// "OSError: [Errno 5] ..." for a raised Python exception. Call with the GIL held.
std::string DescribeException(const nb::python_error& error);

}  // namespace sparkprof::python
