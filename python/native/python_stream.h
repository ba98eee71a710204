// An InputStream over a Python binary file object (an open local file, an fsspec file on S3 or
// HTTP, a socket's makefile, a chunk iterator wrapped in io.RawIOBase): the engine pulls bytes
// with readinto() straight into its own buffer, so nothing is copied to disk or held whole.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "common/input_stream.h"
#include "python/native/python_object.h"

namespace sparkprof::python {

class PythonInputStream final : public InputStream {
 public:
  // Call with the GIL held. The stream closes `file` when it is destroyed.
  PythonInputStream(nb::object file, std::string display_name,
                    std::shared_ptr<RaisedErrors> errors);
  ~PythonInputStream() override;

  // Takes the GIL for the call into Python; the caller must not hold it.
  Result<size_t> Read(char* buffer, size_t size) override;
  uint64_t input_offset() const override { return offset_bytes_; }

 private:
  Result<size_t> ReadWithGil(char* buffer, size_t size);

  SharedObject file_;
  bool has_readinto_ = false;
  std::string display_name_;
  std::shared_ptr<RaisedErrors> errors_;
  uint64_t offset_bytes_ = 0;
  std::string failure_;  // set after the first error; every later Read repeats it
};

}  // namespace sparkprof::python
