#include "analyzer/source/folder.h"

#include <algorithm>
#include <filesystem>
#include <map>
#include <string_view>
#include <system_error>
#include <utility>

#include "analyzer/source/log_names.h"

namespace sparkprof::source {
namespace {

namespace fs = std::filesystem;

void SortByName(FolderListing* listing) {
  std::sort(listing->files.begin(), listing->files.end(),
            [](const FileEntry& a, const FileEntry& b) { return a.name < b.name; });
  std::sort(listing->folders.begin(), listing->folders.end(),
            [](const std::unique_ptr<Folder>& a, const std::unique_ptr<Folder>& b) {
              return a->name() < b->name();
            });
}

class DiskFolder final : public Folder {
 public:
  DiskFolder(std::string path, std::string display_name, std::string name)
      : path_(std::move(path)), display_name_(std::move(display_name)), name_(std::move(name)) {}

  const std::string& name() const override { return name_; }
  const std::string& display_name() const override { return display_name_; }
  const std::string& disk_path() const override { return path_; }

  FolderListing List(std::vector<DiscoveryWarning>* warnings) const override {
    FolderListing listing;
    std::error_code error;
    fs::directory_iterator it(path_, error);
    if (error) {
      warnings->push_back({display_name_, "cannot list directory: " + error.message()});
      return listing;
    }
    for (; it != fs::directory_iterator(); it.increment(error)) {
      std::string name = it->path().filename().string();
      if (IsJunkName(name)) continue;
      std::string child_path = it->path().string();
      std::string child_display = (fs::path(display_name_) / name).string();
      std::error_code status_error;
      fs::file_status status = fs::status(it->path(), status_error);  // follows symlinks
      if (status_error || !fs::exists(status)) {
        warnings->push_back({child_display, "skipped: cannot read (broken symbolic link?): " +
                                                status_error.message()});
      } else if (fs::is_directory(status)) {
        listing.folders.push_back(MakeDiskFolder(child_path, child_display));
      } else if (fs::is_regular_file(status)) {
        std::error_code size_error;
        uintmax_t size = fs::file_size(it->path(), size_error);
        listing.files.push_back(
            MakeDiskFileEntry(child_path, child_display, size_error ? 0 : size));
      } else {
        // FIFOs and devices would block or never end when read.
        warnings->push_back({child_display, "skipped: not a regular file or directory"});
      }
    }
    if (error) {
      warnings->push_back({display_name_, "directory listing stopped early: " + error.message()});
    }
    SortByName(&listing);
    return listing;
  }

 private:
  std::string path_;
  std::string display_name_;
  std::string name_;
};

struct ArchiveFile {
  std::string name;
  std::string stored_name;  // the entry's full name as libzip reports it
  uint64_t index = 0;
  uint64_t compressed_bytes = 0;
  uint64_t declared_bytes = 0;
};

// Zip entries are a flat list of paths; this rebuilds the directories they imply.
struct ArchiveNode {
  std::string name;
  std::string path;  // inside the archive, '/'-separated, no trailing '/'
  std::map<std::string, std::unique_ptr<ArchiveNode>> folders;
  std::vector<ArchiveFile> files;
};

struct ArchiveTree {
  std::shared_ptr<ZipArchive> archive;
  std::shared_ptr<ZipArchivePool> pool;  // opens the parts after discovery
  ArchiveNode root;
};

std::vector<std::string_view> SplitEntryName(std::string_view name) {
  std::vector<std::string_view> components;
  size_t start = 0;
  while (start <= name.size()) {
    size_t end = name.find('/', start);
    if (end == std::string_view::npos) end = name.size();
    std::string_view component = name.substr(start, end - start);
    if (!component.empty() && component != ".") components.push_back(component);
    start = end + 1;
  }
  return components;
}

class ArchiveFolder final : public Folder {
 public:
  ArchiveFolder(std::shared_ptr<const ArchiveTree> tree, const ArchiveNode* node, std::string name)
      : tree_(std::move(tree)), node_(node), name_(std::move(name)) {
    const std::string& archive_name = tree_->archive->source().display_name;
    display_name_ = node_->path.empty() ? archive_name : archive_name + "!" + node_->path;
  }

  const std::string& name() const override { return name_; }
  const std::string& display_name() const override { return display_name_; }
  const std::string& disk_path() const override {
    static const std::string kNone;
    return kNone;
  }

  FolderListing List(std::vector<DiscoveryWarning>* /*warnings*/) const override {
    FolderListing listing;
    const ArchiveSource& source = tree_->archive->source();
    for (const ArchiveFile& file : node_->files) {
      FileEntry entry;
      entry.name = file.name;
      entry.display_name = source.display_name + "!" +
                           (node_->path.empty() ? file.name : node_->path + "/" + file.name);
      entry.size_bytes = file.compressed_bytes;
      entry.declared_bytes = file.declared_bytes;
      entry.archive = source.display_name;
      entry.disk_file = source.disk_file;
      // The part opener holds the pool, not the scan's libzip handle, so every stream it makes
      // is independent; the pool reuses one handle for parts read one after another.
      entry.open = [pool = tree_->pool, index = file.index, stored = file.stored_name,
                    display = entry.display_name]() {
        return pool->OpenEntry(index, stored, display);
      };
      entry.open_during_scan = [archive = tree_->archive, index = file.index,
                                display = entry.display_name]() {
        return ZipArchive::OpenEntry(archive, index, display);
      };
      listing.files.push_back(std::move(entry));
    }
    for (const auto& [name, child] : node_->folders) {
      listing.folders.push_back(std::make_unique<ArchiveFolder>(tree_, child.get(), name));
    }
    SortByName(&listing);
    return listing;
  }

 private:
  std::shared_ptr<const ArchiveTree> tree_;
  const ArchiveNode* node_;
  std::string name_;
  std::string display_name_;
};

// "x/logs.zip" -> "logs", "outer.zip!eventlog_v2_a.zip" -> "eventlog_v2_a": an archive's root
// acts as a folder of that name, so a zipped rolling directory is still recognised.
std::string ArchiveRootName(const std::string& display_name) {
  size_t cut = display_name.find_last_of("/!");
  std::string name = cut == std::string::npos ? display_name : display_name.substr(cut + 1);
  if (name.size() > 4 && name.ends_with(".zip")) name.resize(name.size() - 4);
  return name;
}

}  // namespace

FileEntry MakeDiskFileEntry(const std::string& path, const std::string& display_name,
                            uint64_t size_bytes) {
  FileEntry entry;
  entry.name = fs::path(path).filename().string();
  entry.display_name = display_name;
  entry.size_bytes = size_bytes;
  entry.disk_path = path;
  entry.disk_file = path;
  entry.open = [path]() { return OpenFileInputStream(path); };
  entry.open_during_scan = entry.open;
  return entry;
}

std::unique_ptr<Folder> MakeDiskFolder(const std::string& path, const std::string& display_name) {
  fs::path as_path(path);
  std::string name = as_path.filename().string();
  if (name.empty() || name == "." || name == "..") {
    // "dir/", "." and ".." name nothing themselves; the layout rules need the real name.
    std::error_code error;
    name = fs::weakly_canonical(as_path, error).filename().string();
  }
  return std::make_unique<DiskFolder>(path, display_name, name);
}

std::unique_ptr<Folder> MakeArchiveRootFolder(std::shared_ptr<ZipArchive> archive,
                                              const DiscoveryLimits& limits,
                                              std::vector<DiscoveryWarning>* warnings) {
  auto tree = std::make_shared<ArchiveTree>();
  tree->archive = std::move(archive);
  tree->pool = ZipArchivePool::Create(tree->archive->source());
  const std::string& archive_name = tree->archive->source().display_name;
  uint64_t count = tree->archive->entry_count();
  if (count > limits.max_archive_entries) {
    warnings->push_back(
        {archive_name, "archive has " + std::to_string(count) + " entries; only the first " +
                           std::to_string(limits.max_archive_entries) + " are searched"});
    count = limits.max_archive_entries;
  }
  for (uint64_t index = 0; index < count; ++index) {
    Result<ZipEntryInfo> info = tree->archive->Entry(index);
    if (!info.ok()) {
      warnings->push_back({archive_name, info.status().message()});
      continue;
    }
    bool is_directory = info->name.ends_with('/');
    std::vector<std::string_view> components = SplitEntryName(info->name);
    if (components.empty()) continue;
    if (std::any_of(components.begin(), components.end(), IsJunkName)) continue;
    size_t folder_levels = components.size() - (is_directory ? 0 : 1);
    if (folder_levels > static_cast<size_t>(std::max(limits.max_directory_depth, 0))) {
      warnings->push_back({archive_name + "!" + info->name,
                           "skipped: nested deeper than " +
                               std::to_string(limits.max_directory_depth) + " directories"});
      continue;
    }
    ArchiveNode* node = &tree->root;
    for (size_t i = 0; i < folder_levels; ++i) {
      std::unique_ptr<ArchiveNode>& child = node->folders[std::string(components[i])];
      if (child == nullptr) {
        child = std::make_unique<ArchiveNode>();
        child->name = components[i];
        child->path = node->path.empty() ? child->name : node->path + "/" + child->name;
      }
      node = child.get();
    }
    if (!is_directory) {
      node->files.push_back({.name = std::string(components.back()),
                             .stored_name = info->name,
                             .index = index,
                             .compressed_bytes = info->compressed_bytes,
                             .declared_bytes = info->declared_bytes});
    }
  }
  const ArchiveNode* root = &tree->root;
  return std::make_unique<ArchiveFolder>(std::move(tree), root, ArchiveRootName(archive_name));
}

}  // namespace sparkprof::source
