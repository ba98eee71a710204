// Files of a fake /proc (and cgroup) tree for the agent's readers' tests.
#pragma once

#include <filesystem>
#include <fstream>
#include <string>

namespace sparkprof::agent::test_files {

// Writes `text` to `path`, making its folders.
inline void Write(const std::filesystem::path& path, const std::string& text) {
  std::filesystem::create_directories(path.parent_path());
  std::ofstream(path) << text;
}

// A process's membership (`cgroup_file`, as /proc/self/cgroup reads) and the mount of its
// hierarchy at `mount` in /proc/self/mountinfo: cgroup v1 with `controllers` ("cpu,cpuacct"),
// or cgroup2 (version 2).
inline void FakeCgroup(const std::filesystem::path& proc, const std::string& cgroup_file,
                       const std::filesystem::path& mount, int version,
                       const std::string& controllers = "") {
  Write(proc / "self/cgroup", cgroup_file);
  Write(proc / "self/mountinfo",
        version == 1
            ? "27 25 0:24 / " + mount.string() + " rw - cgroup cgroup rw," + controllers + "\n"
            : "28 25 0:25 / " + mount.string() + " rw - cgroup2 cgroup2 rw\n");
}

}  // namespace sparkprof::agent::test_files
