// How frame names are shown: Java's internal class names use '/', people read '.'.
// Also the frame "kind" (Java, inlined, C++, kernel, native) for colouring like flamegraph.pl's
// java palette when a profile has no categories to colour by.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace sparkprof::flamegraph {

// "java/io/ObjectOutputStream.writeObject" -> "java.io.ObjectOutputStream.writeObject".
// Only the part before a '(' or blank (the signature, if any) is converted, and only when it looks
// like a Java name: paths such as "/usr/lib/libc.so.6" and C++ names stay as they are.
std::string ReadableFrameName(std::string_view raw);

enum class FrameKind : uint8_t { kJava = 0, kInlined, kCpp, kKernel, kNative };
inline constexpr int kFrameKindCount = 5;
std::string_view FrameKindName(FrameKind kind);  // "java", "inlined", "c++", "kernel", "native"

// flamegraph.pl's rules: async-profiler's `_[j]`/`_[i]`/`_[k]` suffixes first, then '/' or a
// Java/Scala package prefix means Java, "::" means C++, anything else is native.
FrameKind ClassifyFrameKind(std::string_view raw);

}  // namespace sparkprof::flamegraph
