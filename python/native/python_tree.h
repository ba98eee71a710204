// The engine's discovery (rolling directories, Databricks folders, zips, folders of many
// applications) over storage that Python lists and opens: any fsspec filesystem, a History
// Server download, one open file object. The Python side passes a "tree" object with
//   list(path) -> iterable of (name, path, kind, size_bytes, local_path)
//                 kind: "file", "directory" or "other"
//   open(path) -> binary file object
//   open_for_scan(path) -> binary file object   (optional: for discovery's look at the first
//                 bytes; a collector answers it from what it saw last time)
// (sparkprof/_tree.py). local_path is the file's path on this machine, or "" when it has none;
// with it, a zip is opened by libzip in place and symbolic-link loops are detected.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "analyzer/source/folder.h"
#include "python/native/python_object.h"

namespace sparkprof::python {

struct TreeEntry {
  std::string name;
  std::string path;          // as the tree's list/open understand it
  std::string display_name;  // in reports and messages
  uint64_t size_bytes = 0;
  std::string local_path;
};

class PythonTree {
 public:
  // Call with the GIL held.
  explicit PythonTree(nb::object tree)
      : has_open_for_scan_(nb::hasattr(tree, "open_for_scan")),
        tree_(Share(std::move(tree))),
        errors_(std::make_shared<RaisedErrors>()) {}

  std::unique_ptr<source::Folder> Folder(const TreeEntry& entry) const;
  source::FileEntry File(const TreeEntry& entry) const;

  const std::shared_ptr<RaisedErrors>& errors() const { return errors_; }
  const nb::object& object() const { return *tree_; }

 private:
  friend class PythonFolder;
  source::StreamOpener Opener(const TreeEntry& entry, const char* method) const;

  bool has_open_for_scan_;
  SharedObject tree_;
  std::shared_ptr<RaisedErrors> errors_;
};

// `parent/name` as std::filesystem::path's operator/ joins them, so a local path given to the
// Python API names its files exactly as the CLI does.
std::string JoinDisplayName(const std::string& parent, const std::string& name);

}  // namespace sparkprof::python
