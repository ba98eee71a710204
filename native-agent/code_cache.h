// Which HotSpot CodeBlob holds a code address, read from the code cache with the offsets of
// hotspot_layout.h: the stack walker uses it to step over stub frames. Runs in the signal handler
// (async-signal-safe: plain loads, no calls); every load may fault on a JVM that changed under
// us, so callers run it inside the crash guard.
#pragma once

#include <cstdint>

#include "native-agent/hotspot_layout.h"

namespace sparkprof::agent {

// async-signal-safe: one load from VM memory (callers run inside the crash guard).
template <typename T>
inline T LoadVm(uintptr_t address) {
  return *reinterpret_cast<const volatile T*>(address);
}

struct CodeBlobInfo {
  uintptr_t start = 0;
  int32_t frame_size_words = 0;  // CodeBlob::_frame_size: the frame's size, return address in
  bool is_nmethod = false;       // compiled Java code (HotSpot names every nmethod "nmethod")
  bool is_interpreter = false;   // the template interpreter's code ("Interpreter")
  // Neither: a stub, adapter or runtime blob, whose frames are never Java frames.
  bool holds_java_frames() const { return is_nmethod || is_interpreter; }
};

// async-signal-safe: finds the blob that holds `pc` as HotSpot's CodeHeap::find_start does: the
// heap whose range holds it, then back along the heap's segment map (per segment, how many
// segments back to step; 0 at a block's first, 0xFF if free) to the block header, which must be
// in use and followed by a blob that spans `pc`. False when `pc` is not in the code cache or
// anything reads implausibly.
bool FindCodeBlob(const HotSpotLayout& layout, uintptr_t pc, CodeBlobInfo* blob);

}  // namespace sparkprof::agent
