#include "native-agent/stack_walker.h"

#include <dlfcn.h>
#include <jni.h>
#include <ucontext.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "native-agent/agent_counters.h"
#include "native-agent/code_cache.h"
#include "native-agent/thread_state.h"

namespace sparkprof::agent {
namespace {

// HotSpot's types (hotspot/share/prims/forte.cpp); not in any public header.
struct AgctCallFrame {
  jint lineno;
  jmethodID method_id;
};
struct AgctCallTrace {
  JNIEnv* env_id;
  jint num_frames;
  AgctCallFrame* frames;
};
using AsyncGetCallTraceFn = void (*)(AgctCallTrace*, jint, void*);

static_assert(sizeof(AgctCallFrame) == sizeof(RawFrame) &&
                  offsetof(AgctCallFrame, lineno) == offsetof(RawFrame, bci_or_line) &&
                  offsetof(AgctCallFrame, method_id) == offsetof(RawFrame, method_id),
              "ring frames must be written by AsyncGetCallTrace in place");

std::atomic<AsyncGetCallTraceFn> g_async_get_call_trace{nullptr};
static_assert(std::atomic<AsyncGetCallTraceFn>::is_always_lock_free);

// A frame pointer further than this above the stack pointer is not one (C2 uses rbp/x29 as a
// general register): reading through it could fault, and the crash guard would lose the sample.
constexpr uintptr_t kMaxFrameDistance = 1u << 20;
// Native frames climbed looking for a Java caller: each hop costs one more walk attempt.
constexpr int kMaxFramePointerHops = 8;

// async-signal-safe
int CallAsyncGetCallTrace(AsyncGetCallTraceFn function, JNIEnv* env, RawFrame* frames,
                          int max_frames, void* ucontext) {
  AgctCallTrace trace;
  trace.env_id = env;
  trace.num_frames = 0;
  trace.frames = reinterpret_cast<AgctCallFrame*>(frames);
  function(&trace, max_frames, ucontext);
  return trace.num_frames;
}

// The anchor repair's offsets (hotspot_layout.h): written before sampling starts, then read-only.
std::atomic<bool> g_anchor_repair{false};
HotSpotLayout g_layout;

// The words of a thread's last Java frame anchor (JavaFrameAnchor).
struct AnchorSlots {
  volatile uintptr_t* sp = nullptr;
  volatile uintptr_t* pc = nullptr;
  volatile uintptr_t* fp = nullptr;
};

// async-signal-safe: the anchor of the thread `env` belongs to, if the VM structures are known
// and the thread is in the VM (the only state in which the walker may touch its anchor).
bool AnchorOfThreadInVm(JNIEnv* env, AnchorSlots* slots) {
#if defined(__x86_64__)
  if (!g_anchor_repair.load(std::memory_order_acquire)) return false;
  char* thread = reinterpret_cast<char*>(env) - g_layout.thread_env_offset;
  int32_t state = *reinterpret_cast<volatile int32_t*>(thread + g_layout.thread_state_offset);
  if (state != kThreadInVm && state != kThreadInVmTrans) return false;
  char* anchor = thread + g_layout.thread_anchor_offset;
  slots->sp = reinterpret_cast<volatile uintptr_t*>(anchor + g_layout.anchor_sp_offset);
  slots->pc = reinterpret_cast<volatile uintptr_t*>(anchor + g_layout.anchor_pc_offset);
  slots->fp = reinterpret_cast<volatile uintptr_t*>(anchor + g_layout.anchor_fp_offset);
  return true;
#else
  (void)env, (void)slots;
  return false;
#endif
}

// A stub's frame is a few words; more means a blob misread.
constexpr int32_t kMaxStubFrameWords = 1 << 12;
// Stubs stepped over from the last Java frame before the walk gives up (a stub may call another).
constexpr int kMaxStubSteps = 2;

// async-signal-safe: the thread is in the VM and its last Java frame is a stub's (C2's runtime
// stubs for allocation, locking, runtime calls; they never mark their frame walkable, so
// AsyncGetCallTrace stops at them). Moves the anchor to the stub's caller, one frame size up
// (where HotSpot's frame::sender finds it: return address at sp[-1], saved fp at sp[-2]), walks,
// and puts the anchor back. Only this thread touches its anchor meanwhile: nothing walks a
// thread in the VM from outside (safepoints and handshakes wait for it to leave), and the crash
// guard restores the anchor if the walk faults. The stub frames hold no Java frames, so a walk
// that succeeds is complete.
int StepOverStubsAndRetry(AsyncGetCallTraceFn function, JNIEnv* env, RawFrame* frames,
                          int max_frames, void* ucontext, int error) {
#if defined(__x86_64__)
  ThreadState* state = CurrentThreadState();
  AnchorSlots anchor;
  if (state == nullptr || state->walk_undo.count != 0 || !AnchorOfThreadInVm(env, &anchor)) {
    return error;
  }
  volatile uintptr_t *sp_slot = anchor.sp, *pc_slot = anchor.pc, *fp_slot = anchor.fp;
  uintptr_t sp = *sp_slot, pc = *pc_slot;
  if (sp == 0 || sp % sizeof(uintptr_t) != 0 || pc == 0) return error;
  int result = error;
  for (int step = 0; step < kMaxStubSteps; ++step) {
    CodeBlobInfo blob;
    if (!FindCodeBlob(g_layout, pc, &blob) || blob.is_nmethod || blob.frame_size_words <= 0 ||
        blob.frame_size_words > kMaxStubFrameWords) {
      break;
    }
    const uintptr_t caller_sp = sp + static_cast<uintptr_t>(blob.frame_size_words) * 8;
    const uintptr_t caller_pc = reinterpret_cast<const uintptr_t*>(caller_sp)[-1];
    const uintptr_t caller_fp = reinterpret_cast<const uintptr_t*>(caller_sp)[-2];
    if (caller_pc == 0) break;
    if (state->walk_undo.count == 0 &&
        !(state->walk_undo.Save(sp_slot) && state->walk_undo.Save(pc_slot) &&
          state->walk_undo.Save(fp_slot))) {
      state->walk_undo.Restore();
      return error;
    }
    // sp last, as HotSpot sets an anchor: pc and fp belong to the sp that follows them.
    *pc_slot = caller_pc;
    *fp_slot = caller_fp;
    *sp_slot = caller_sp;
    g_counters.walk_stub_steps.fetch_add(1, std::memory_order_relaxed);
    result = CallAsyncGetCallTrace(function, env, frames, max_frames, ucontext);
    if (result > 0) break;
    sp = caller_sp;
    pc = caller_pc;
  }
  state->walk_undo.Restore();
  return result > 0 ? result : error;
#else
  (void)function, (void)env, (void)frames, (void)max_frames, (void)ucontext;
  return error;
#endif
}

// A compiled method's frame is at most this many words; more means a blob misread.
constexpr int32_t kMaxCompiledFrameWords = 1 << 16;
// x86-64 HotSpot's interpreter frame (frame_x86.hpp, unchanged since JDK 8): at fp the caller's
// fp, above it the return address; below it the caller's sp and, three words down, the Method*.
constexpr int kInterpreterSenderSpSlot = -1;
constexpr int kInterpreterMethodSlot = -3;

// async-signal-safe: the jmethodID of the Method at `method`, found as JNI would find it (the
// class's jmethodID table, entry method_idnum + 1), and only if that id names this very Method;
// null otherwise (no id yet, or not a Method).
jmethodID MethodIdOf(uintptr_t method) {
  auto usable = [](uintptr_t pointer) { return pointer >= 4096 && pointer % 8 == 0; };
  if (!usable(method)) return nullptr;
  const uintptr_t const_method = LoadVm<uintptr_t>(method + g_layout.method_const_offset);
  if (!usable(const_method)) return nullptr;
  const uintptr_t constants =
      LoadVm<uintptr_t>(const_method + g_layout.const_method_constants_offset);
  const uint16_t idnum = LoadVm<uint16_t>(const_method + g_layout.const_method_idnum_offset);
  if (!usable(constants)) return nullptr;
  const uintptr_t holder = LoadVm<uintptr_t>(constants + g_layout.pool_holder_offset);
  if (!usable(holder)) return nullptr;
  const uintptr_t ids = LoadVm<uintptr_t>(holder + g_layout.klass_method_ids_offset);
  if (!usable(ids) || idnum >= LoadVm<uintptr_t>(ids)) return nullptr;
  const uintptr_t id = LoadVm<uintptr_t>(ids + (idnum + 1u) * sizeof(uintptr_t));
  if (!usable(id) || LoadVm<uintptr_t>(id) != method) return nullptr;
  return reinterpret_cast<jmethodID>(id);
}

// async-signal-safe: walks the Java frames above a thread's last Java frame when that frame is
// a stub's and AsyncGetCallTrace will not walk them: the deoptimization (or uncommon trap) blob
// of a thread in the deoptimization handler, which AsyncGetCallTrace refuses outright
// ([deoptimization]), or a runtime stub a thread waits in (blocked on a lock or for a GC in an
// allocation slow path; its anchor must not be moved, as other threads may walk it). Above the
// stub: a compiled method (the one being deoptimized, or the stub's caller), then its callers.
// Walks them as HotSpot's frame::sender does — compiled frames by their frame size, interpreted
// ones by their frame pointer — naming each by its Method's jmethodID, one frame per compiled
// method (its inlined callees are not resolved), and stops at the first frame it does not know
// (an entry frame, a stub) or that does not check out. Reads only. Returns the frames found, 0
// if none.
int WalkFramesAboveStub(JNIEnv* env, RawFrame* frames, int max_frames) {
#if defined(__x86_64__)
  if (!g_anchor_repair.load(std::memory_order_acquire)) return 0;
  const uintptr_t thread = reinterpret_cast<uintptr_t>(env) - g_layout.thread_env_offset;
  const uintptr_t stack_high = LoadVm<uintptr_t>(thread + g_layout.thread_stack_base_offset);
  const uintptr_t stack_size = LoadVm<uintptr_t>(thread + g_layout.thread_stack_size_offset);
  if (stack_size == 0 || stack_size > stack_high) return 0;
  const uintptr_t stack_low = stack_high - stack_size;
  auto on_stack = [&](uintptr_t address) {
    return address > stack_low && address < stack_high && address % sizeof(uintptr_t) == 0;
  };
  const uintptr_t anchor = thread + g_layout.thread_anchor_offset;
  uintptr_t sp = LoadVm<uintptr_t>(anchor + g_layout.anchor_sp_offset);
  if (!on_stack(sp)) return 0;
  uintptr_t pc = LoadVm<uintptr_t>(anchor + g_layout.anchor_pc_offset);
  if (pc == 0) pc = LoadVm<uintptr_t>(sp - sizeof(uintptr_t));
  // The handler's own frame: a blob that is not Java code, with a frame size.
  CodeBlobInfo blob;
  if (!FindCodeBlob(g_layout, pc, &blob) || blob.holds_java_frames() ||
      blob.frame_size_words <= 0 || blob.frame_size_words > kMaxStubFrameWords) {
    return 0;
  }
  sp += static_cast<uintptr_t>(blob.frame_size_words) * sizeof(uintptr_t);
  uintptr_t unextended_sp = sp;
  if (!on_stack(sp)) return 0;
  pc = LoadVm<uintptr_t>(sp - sizeof(uintptr_t));
  uintptr_t fp = LoadVm<uintptr_t>(sp - 2 * sizeof(uintptr_t));
  int walked = 0;
  while (walked < max_frames && FindCodeBlob(g_layout, pc, &blob)) {
    uintptr_t method = 0, next_sp = 0, next_unextended_sp = 0;
    if (blob.is_nmethod) {
      if (blob.frame_size_words <= 0 || blob.frame_size_words > kMaxCompiledFrameWords) break;
      method = LoadVm<uintptr_t>(blob.start + g_layout.nmethod_method_offset);
      next_sp = unextended_sp + static_cast<uintptr_t>(blob.frame_size_words) * sizeof(uintptr_t);
      next_unextended_sp = next_sp;
    } else if (blob.is_interpreter && walked > 0) {
      if (!on_stack(fp) || fp < sp) break;
      const auto* slots = reinterpret_cast<const volatile uintptr_t*>(fp);
      method = slots[kInterpreterMethodSlot];
      next_sp = fp + 2 * sizeof(uintptr_t);
      next_unextended_sp = slots[kInterpreterSenderSpSlot];
      if (!on_stack(next_unextended_sp)) break;
    } else {
      break;  // the first frame must be the compiled method; anything else ends the walk
    }
    jmethodID method_id = MethodIdOf(method);
    if (method_id == nullptr || !on_stack(next_sp) || next_sp <= sp) break;
    frames[walked].bci_or_line = 0;
    frames[walked].method_id = method_id;
    ++walked;
    if (blob.is_nmethod) {
      pc = LoadVm<uintptr_t>(next_sp - sizeof(uintptr_t));
      fp = LoadVm<uintptr_t>(next_sp - 2 * sizeof(uintptr_t));
    } else {
      pc = LoadVm<uintptr_t>(fp + sizeof(uintptr_t));
      fp = LoadVm<uintptr_t>(fp);
    }
    sp = next_sp;
    unextended_sp = next_unextended_sp;
  }
  return walked;
#else
  (void)env, (void)frames, (void)max_frames;
  return 0;
#endif
}

// async-signal-safe: whether a thread in the deoptimization handler (the one `env` belongs to)
// is still in its first part, before its frames move (no vframe array yet).
bool DeoptimizedFramesUnmoved(JNIEnv* env) {
  if (!g_anchor_repair.load(std::memory_order_acquire)) return false;
  const uintptr_t thread = reinterpret_cast<uintptr_t>(env) - g_layout.thread_env_offset;
  return LoadVm<uintptr_t>(thread + g_layout.thread_vframe_array_offset) == 0;
}

// async-signal-safe: the thread is in the VM, called from compiled Java code that recorded its
// last Java frame's sp but not its pc. Fills the pc as HotSpot's make_walkable() does (the return
// address below that sp; HotSpot clears it with the anchor) and walks again. No other thread
// walks this one meanwhile: a thread in the VM (or leaving it) holds safepoints and handshakes
// off, so nothing else reads the anchor until the thread itself makes it walkable or clears it.
int RepairAnchorAndRetry(AsyncGetCallTraceFn function, JNIEnv* env, RawFrame* frames,
                         int max_frames, void* ucontext, int error) {
#if defined(__x86_64__)
  AnchorSlots anchor;
  if (!AnchorOfThreadInVm(env, &anchor)) return error;
  volatile uintptr_t *sp_slot = anchor.sp, *pc_slot = anchor.pc;
  const uintptr_t sp = *sp_slot;
  if (sp == 0 || sp % sizeof(uintptr_t) != 0) return error;
  if (*pc_slot != 0) {
    return StepOverStubsAndRetry(function, env, frames, max_frames, ucontext, error);
  }
  const uintptr_t pc = reinterpret_cast<const uintptr_t*>(sp)[-1];
  if (pc == 0) return error;
  *pc_slot = pc;
  g_counters.walk_anchor_repairs.fetch_add(1, std::memory_order_relaxed);
  int frames_walked = CallAsyncGetCallTrace(function, env, frames, max_frames, ucontext);
  if (frames_walked > 0) return frames_walked;
  // Walkable now, and still no Java frame: the last Java frame is likely a stub's.
  return StepOverStubsAndRetry(function, env, frames, max_frames, ucontext, error);
#else
  (void)function, (void)env, (void)frames, (void)max_frames, (void)ucontext;
  return error;
#endif
}

// The registers AsyncGetCallTrace reads, in a copy of the signal's context (the thread resumes
// from the original, never from ours).
struct WalkRegisters {
  uintptr_t* pc = nullptr;
  uintptr_t* sp = nullptr;
  uintptr_t* fp = nullptr;
  uintptr_t* link = nullptr;  // aarch64's return address register; null on x86-64
};

// async-signal-safe
bool RegistersOf(ucontext_t* context, WalkRegisters* registers) {
#if defined(__x86_64__)
  greg_t* gregs = context->uc_mcontext.gregs;
  registers->pc = reinterpret_cast<uintptr_t*>(&gregs[REG_RIP]);
  registers->sp = reinterpret_cast<uintptr_t*>(&gregs[REG_RSP]);
  registers->fp = reinterpret_cast<uintptr_t*>(&gregs[REG_RBP]);
  return true;
#elif defined(__aarch64__)
  registers->pc = reinterpret_cast<uintptr_t*>(&context->uc_mcontext.pc);
  registers->sp = reinterpret_cast<uintptr_t*>(&context->uc_mcontext.sp);
  registers->fp = reinterpret_cast<uintptr_t*>(&context->uc_mcontext.regs[29]);
  registers->link = reinterpret_cast<uintptr_t*>(&context->uc_mcontext.regs[30]);
  return true;
#else
  (void)context;
  (void)registers;
  return false;
#endif
}

// async-signal-safe: when the thread runs Java code but its innermost frame cannot be walked
// (the pc is in a method's prologue or epilogue, a stub, or a frame whose fp is a general
// register), walks again from its caller: first as if the innermost call had just been made
// (return address at sp, or in the link register), then through the frame pointer. Frames come
// back without the innermost one, which the drain marks with the first error. Returns the frame
// count, or `error` when no retry walks; `*from_return_address` says a walk from the return
// address at the top of the stack (not the frame-pointer climb) succeeded.
int RetryFromCaller(AsyncGetCallTraceFn function, JNIEnv* env, RawFrame* frames, int max_frames,
                    void* ucontext, int error, bool* from_return_address) {
  *from_return_address = false;
  ucontext_t copy;
  std::memcpy(&copy, ucontext, sizeof(copy));
  WalkRegisters registers;
  if (!RegistersOf(&copy, &registers)) return error;
  const uintptr_t pc = *registers.pc, sp = *registers.sp, fp = *registers.fp;
  if (sp == 0 || sp % sizeof(uintptr_t) != 0) return error;

  // 1. At a call's target, before the callee built its frame.
  if (registers.link != nullptr) {
    *registers.pc = *registers.link;
  } else {
    *registers.pc = *reinterpret_cast<const uintptr_t*>(sp);  // the thread's own stack
    *registers.sp = sp + sizeof(uintptr_t);
  }
  if (*registers.pc != 0 && *registers.pc != pc) {
    int frames_walked = CallAsyncGetCallTrace(function, env, frames, max_frames, &copy);
    if (frames_walked > 0) {
      *from_return_address = true;
      return frames_walked;
    }
  }
  // 1b. x86-64, one push into a compiled method's prologue (push rbp; sub rsp, N): the word at
  // sp is the fp register itself, the return address is above it.
  const auto* stack = reinterpret_cast<const uintptr_t*>(sp);
  if (registers.link == nullptr && stack[0] == fp && stack[1] != 0 && stack[1] != pc) {
    *registers.pc = stack[1];
    *registers.sp = sp + 2 * sizeof(uintptr_t);
    *registers.fp = fp;
    int frames_walked = CallAsyncGetCallTrace(function, env, frames, max_frames, &copy);
    if (frames_walked > 0) {
      *from_return_address = true;
      return frames_walked;
    }
  }

  // 2. Up the frame-pointer chain ([fp] = caller's fp, [fp + 8] = return address) while it
  // plausibly stays in this stack: out of a stub, or of the VM's C++ leaf functions that compiled
  // code calls without leaving the Java state (they keep frame pointers; C2 code does not).
  uintptr_t frame_sp = sp, frame_fp = fp;
  for (int hop = 0; hop < kMaxFramePointerHops; ++hop) {
    // fp == sp is a frame without locals (a stub right after its push rbp; mov rbp, rsp).
    if (frame_fp < frame_sp || frame_fp - sp >= kMaxFrameDistance ||
        frame_fp % sizeof(uintptr_t) != 0) {
      break;
    }
    const auto* frame = reinterpret_cast<const uintptr_t*>(frame_fp);
    *registers.pc = frame[1];
    *registers.sp = frame_fp + 2 * sizeof(uintptr_t);
    *registers.fp = frame[0];
    if (*registers.pc == 0) break;
    int frames_walked = CallAsyncGetCallTrace(function, env, frames, max_frames, &copy);
    if (frames_walked > 0) return frames_walked;
    frame_sp = *registers.sp;
    frame_fp = *registers.fp;
  }
  return error;
}

// async-signal-safe: whether the signal's pc may be in a Java frame that a walk from its caller
// left out: yes unless the code cache says it is a stub's (stubs are never Java frames, so such
// a walk is complete). Code outside the code cache stays a maybe: the retry climbed its frame
// pointers, which native code need not keep.
bool InnermostMayBeJava(void* ucontext) {
  if (!g_anchor_repair.load(std::memory_order_acquire)) return true;
  ucontext_t* context = static_cast<ucontext_t*>(ucontext);
  WalkRegisters registers;
  if (!RegistersOf(context, &registers)) return true;
  CodeBlobInfo blob;
  return !FindCodeBlob(g_layout, *registers.pc, &blob) || blob.holds_java_frames();
}

// async-signal-safe: a walk from the return address at the top of the stack (RetryFromCaller's
// first steps) that began in a compiled method began in its prologue or epilogue — elsewhere
// AsyncGetCallTrace walks a compiled frame itself — where no inlined method runs: the method
// entered or left is the compiled method's own. Puts its frame innermost (bci 0) and returns the
// new count, or `walked` when the pc is not a compiled method's or the frames are full.
int AddMethodEnteredOrLeft(void* ucontext, RawFrame* frames, int walked, int max_frames) {
  if (!g_anchor_repair.load(std::memory_order_acquire) || walked >= max_frames) return walked;
  WalkRegisters registers;
  if (!RegistersOf(static_cast<ucontext_t*>(ucontext), &registers)) return walked;
  CodeBlobInfo blob;
  if (!FindCodeBlob(g_layout, *registers.pc, &blob) || !blob.is_nmethod) return walked;
  jmethodID method_id = MethodIdOf(LoadVm<uintptr_t>(blob.start + g_layout.nmethod_method_offset));
  if (method_id == nullptr) return walked;
  for (int f = walked; f > 0; --f) frames[f] = frames[f - 1];
  frames[0].bci_or_line = 0;
  frames[0].method_id = method_id;
  g_counters.walk_entry_frames_named.fetch_add(1, std::memory_order_relaxed);
  return walked + 1;
}

}  // namespace

// async-signal-safe
int32_t HotSpotJavaThreadState(void* walk_context) {
#if defined(__x86_64__)
  if (walk_context == nullptr || !g_anchor_repair.load(std::memory_order_acquire)) return -1;
  char* thread = reinterpret_cast<char*>(walk_context) - g_layout.thread_env_offset;
  return *reinterpret_cast<volatile int32_t*>(thread + g_layout.thread_state_offset);
#else
  (void)walk_context;
  return -1;
#endif
}

// not async-signal-safe
bool EnableAnchorRepair(const HotSpotLayout& layout) {
#if defined(__x86_64__)
  g_layout = layout;
  g_anchor_repair.store(true, std::memory_order_release);
  return true;
#else
  (void)layout;
  return false;
#endif
}

// not async-signal-safe
bool ResolveAsyncGetCallTrace() {
  void* symbol = nullptr;
  // RTLD_NOLOAD: only look at the libjvm already in the process, never load another one.
  if (void* libjvm = dlopen("libjvm.so", RTLD_LAZY | RTLD_NOLOAD)) {
    symbol = dlsym(libjvm, "AsyncGetCallTrace");
    dlclose(libjvm);
  }
  if (symbol == nullptr) symbol = dlsym(RTLD_DEFAULT, "AsyncGetCallTrace");
  g_async_get_call_trace.store(reinterpret_cast<AsyncGetCallTraceFn>(symbol));
  return symbol != nullptr;
}

// async-signal-safe
int AsyncGetCallTraceWalker(void* walk_context, RawFrame* frames, int max_frames, void* ucontext,
                            int32_t* partial_error) {
  AsyncGetCallTraceFn function = g_async_get_call_trace.load(std::memory_order_relaxed);
  if (function == nullptr || walk_context == nullptr) return kUnknownState;
  auto* env = static_cast<JNIEnv*>(walk_context);
  int result = CallAsyncGetCallTrace(function, env, frames, max_frames, ucontext);
  if (result > 0 || ucontext == nullptr) return result;
  if (result == kDeopt) {
    // Only while the handler has not yet set the thread's vframe array: until then no frame has
    // moved; after it, the deoptimized frame is being replaced by interpreter frames.
    int walked = DeoptimizedFramesUnmoved(env) ? WalkFramesAboveStub(env, frames, max_frames) : 0;
    if (walked <= 0) return result;
    g_counters.walk_deopt_walks.fetch_add(1, std::memory_order_relaxed);
    *partial_error = result;
    return walked;
  }
  if (result == kUnknownNotJava || result == kNotWalkableNotJava) {
    int repaired = RepairAnchorAndRetry(function, env, frames, max_frames, ucontext, result);
    if (repaired > 0) return repaired;
    int walked = WalkFramesAboveStub(env, frames, max_frames);
    if (walked <= 0) return repaired;
    g_counters.walk_waiting_in_stub.fetch_add(1, std::memory_order_relaxed);
    *partial_error = result;
    return walked;
  }
  // Only a thread in Java code is walked from the signal's registers; in the VM or native code
  // AsyncGetCallTrace uses the thread's last Java frame, which other registers cannot mend.
  if (result != kUnknownJava && result != kNotWalkableJava) return result;
  bool from_return_address = false;
  int retried =
      RetryFromCaller(function, env, frames, max_frames, ucontext, result, &from_return_address);
  if (retried <= 0) return retried;
  if (from_return_address) {
    int completed = AddMethodEnteredOrLeft(ucontext, frames, retried, max_frames);
    if (completed > retried) return completed;
  }
  if (InnermostMayBeJava(ucontext)) *partial_error = result;
  return retried;
}

// not async-signal-safe
std::string_view WalkErrorFrameName(int code) {
  switch (code) {
    case kNoJavaFrame:
      return "[no_Java_frame]";
    case kNoClassLoad:
      return "[no_class_load]";
    case kGcActive:
      return "[gc_active]";
    case kUnknownNotJava:
      return "[unknown_not_Java]";
    case kNotWalkableNotJava:
      return "[not_walkable_not_Java]";
    case kUnknownJava:
      return "[unknown_Java]";
    case kNotWalkableJava:
      return "[not_walkable_Java]";
    case kUnknownState:
      return "[unknown_state]";
    case kThreadExit:
      return "[thread_exit]";
    case kDeopt:
      return "[deoptimization]";
    case kSafepoint:
      return "[safepoint]";
    case kWalkCrashed:
      return "[walk_crashed]";
    default:
      return "[walk_error]";
  }
}

}  // namespace sparkprof::agent
