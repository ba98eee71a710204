#include "python/native/python_tree.h"

#include <algorithm>
#include <utility>
#include <vector>

#include "analyzer/source/log_names.h"
#include "python/native/python_stream.h"

namespace sparkprof::python {

std::string JoinDisplayName(const std::string& parent, const std::string& name) {
  if (parent.empty()) return name;
  if (parent.back() == '/') return parent + name;
  return parent + "/" + name;
}

class PythonFolder final : public source::Folder {
 public:
  PythonFolder(const PythonTree& tree, TreeEntry entry) : tree_(tree), entry_(std::move(entry)) {}

  const std::string& name() const override { return entry_.name; }
  const std::string& display_name() const override { return entry_.display_name; }
  const std::string& disk_path() const override { return entry_.local_path; }

  source::FolderListing List(std::vector<source::DiscoveryWarning>* warnings) const override {
    source::FolderListing listing;
    nb::gil_scoped_acquire gil;
    try {
      nb::object children = tree_.tree_->attr("list")(entry_.path);
      for (nb::handle child : children) {
        nb::tuple fields = nb::cast<nb::tuple>(child);
        TreeEntry entry;
        entry.name = nb::cast<std::string>(fields[0]);
        entry.path = nb::cast<std::string>(fields[1]);
        std::string kind = nb::cast<std::string>(fields[2]);
        entry.size_bytes = nb::cast<uint64_t>(fields[3]);
        entry.local_path = nb::cast<std::string>(fields[4]);
        if (source::IsJunkName(entry.name)) continue;
        entry.display_name = JoinDisplayName(entry_.display_name, entry.name);
        if (kind == "directory") {
          listing.folders.push_back(tree_.Folder(entry));
        } else if (kind == "file") {
          listing.files.push_back(tree_.File(entry));
        } else {
          warnings->push_back({entry.display_name, "skipped: not a regular file or directory"});
        }
      }
    } catch (nb::python_error& error) {
      warnings->push_back(
          {entry_.display_name, "cannot list directory: " + DescribeException(error)});
      tree_.errors_->exceptions.push_back(Share(nb::borrow(error.value())));
    } catch (const std::exception& error) {
      warnings->push_back(
          {entry_.display_name,
           std::string("cannot list directory: the listing is malformed: ") + error.what()});
    }
    std::sort(
        listing.files.begin(), listing.files.end(),
        [](const source::FileEntry& a, const source::FileEntry& b) { return a.name < b.name; });
    std::sort(listing.folders.begin(), listing.folders.end(),
              [](const std::unique_ptr<source::Folder>& a,
                 const std::unique_ptr<source::Folder>& b) { return a->name() < b->name(); });
    return listing;
  }

 private:
  const PythonTree& tree_;
  TreeEntry entry_;
};

std::unique_ptr<source::Folder> PythonTree::Folder(const TreeEntry& entry) const {
  return std::make_unique<PythonFolder>(*this, entry);
}

source::FileEntry PythonTree::File(const TreeEntry& entry) const {
  source::FileEntry file;
  file.name = entry.name;
  file.display_name = entry.display_name;
  file.size_bytes = entry.size_bytes;
  file.disk_path = entry.local_path;
  file.open = Opener(entry, "open");
  file.open_during_scan = Opener(entry, has_open_for_scan_ ? "open_for_scan" : "open");
  return file;
}

source::StreamOpener PythonTree::Opener(const TreeEntry& entry, const char* method) const {
  // Parts are opened after discovery, possibly on another thread: the opener owns what it uses.
  return [tree = tree_, errors = errors_, path = entry.path, display_name = entry.display_name,
          method]() -> Result<std::unique_ptr<InputStream>> {
    std::shared_ptr<RaisedErrors> collector = RaisedErrorsForThisThread(errors);
    nb::gil_scoped_acquire gil;
    try {
      nb::object stream = tree->attr(method)(path);
      return std::unique_ptr<InputStream>(
          std::make_unique<PythonInputStream>(std::move(stream), display_name, collector));
    } catch (nb::python_error& error) {
      collector->exceptions.push_back(Share(nb::borrow(error.value())));
      return IoError("cannot open " + display_name + ": " + DescribeException(error));
    }
  };
}

}  // namespace sparkprof::python
