// The signal-handler world: the profiling-signal handler, the crash guard around the stack walk,
// and the thread-local pointer that connects a thread to its ThreadState. Everything the handler
// runs lives in signal_handler.cc and stack_walker.cc; each function says whether it is
// async-signal-safe.
#pragma once

#include <signal.h>

#include <string>

#include "native-agent/sample_ring.h"
#include "native-agent/thread_state.h"

namespace sparkprof::agent {

// Walks the current thread's stack into `frames` (innermost first). Returns the number of frames,
// or an error code <= 0 (see stack_walker.h). A walker that recovered only the outer part of a
// stack returns those frames and sets `*partial_error` to the first attempt's error code (it is 0
// on entry). Must be async-signal-safe.
using StackWalker = int (*)(void* walk_context, RawFrame* frames, int max_frames, void* ucontext,
                            int32_t* partial_error);

// Returned when the walker faulted and the crash guard recovered.
inline constexpr int kWalkCrashed = -100;

// not async-signal-safe: call before EnableSampling(true).
void SetStackWalker(StackWalker walker);

// Async-signal-safe: HotSpot's JavaThreadState of the thread `walk_context` names (the caller's
// own), or -1 when unknown.
using JavaThreadStateReader = int32_t (*)(void* walk_context);

// not async-signal-safe: call before EnableSampling(true); nullptr = unknown (-1) for all.
void SetJavaThreadStateReader(JavaThreadStateReader reader);

// Which timer sent a profiling signal.
enum class SignalSource : uint8_t { kCpuTimer, kWallTimer };

// not async-signal-safe (an atomic store): mode cpu+wall. On: a task-tagged thread records its
// wall signals, each split into on-CPU (the CPU its clock moved that no sample charged yet),
// off-CPU (the wall time its clock stood still since the previous wall sample) and run delay; its
// CPU-timer signals only while the wall timer thread leaves it to them (cpu_sampled_while_busy,
// a thread found running flat out). An untagged thread's wall signals are ignored. Off: every
// signal records one sample weighed as SetFixedSampleWeight says.
void SetTaskWallSplit(bool enabled);

// not async-signal-safe (an atomic store): what each sample weighs. 0 = the sampled thread's CPU
// clock advance since its last recorded sample (CPU mode: exact however the timer ticks);
// > 0 = that fixed weight (wall mode: the interval).
void SetFixedSampleWeight(int64_t weight_ns);

// async-signal-safe: the calling thread's CPU clock (CLOCK_THREAD_CPUTIME_ID) in ns, 0 on error.
int64_t CurrentThreadCpuNs();

// not async-signal-safe (but only an atomic store): turns sample recording on or off. When off,
// the handler returns at once, so deleting timers and draining can follow safely.
void EnableSampling(bool enabled);
bool SamplingEnabled();

// not async-signal-safe: installs the sampling handler for `signo` (SIGPROF or SIGVTALRM), whose
// signals count as `source`.
bool InstallSampleHandler(int signo, SignalSource source, std::string* error);

// not async-signal-safe: mode cpu+wall's baselines, on the calling thread (bound to `state`) as
// its task tag is set or cleared: wall clock and CPU clock from now; the run delay mark from
// `run_delay_ns` (the thread's schedstat now; -1: no reading, the mark stays) -- but run delay up
// to `carry_ns` before it that no sample charged yet stays to be charged: a reading the timer
// thread took before a starved thread got the signal lags it, so with tasks of one or two
// samples the lag would be lost at every tag.
void MarkTaskWallBaseline(ThreadState* state, int64_t run_delay_ns, int64_t carry_ns = 0);

// async-signal-safe: raises `published` to `value` if that is larger (run delay only grows, and
// the timer thread and the tagging thread both publish readings).
void PublishRunDelay(std::atomic<int64_t>& published, int64_t value);

// not async-signal-safe: installs the SIGSEGV/SIGBUS guard, remembering the previous handlers
// (the JVM's) to chain to. Call after the JVM installed its own (VMInit), never before.
bool InstallCrashGuard(std::string* error);

// not async-signal-safe: binds `state` (or nullptr) to the calling thread.
void BindCurrentThread(ThreadState* state);
// async-signal-safe
ThreadState* CurrentThreadState();

// async-signal-safe: records one sample of the calling thread (what the handler does).
void RecordSampleOnCurrentThread(void* ucontext, SignalSource source = SignalSource::kCpuTimer);

// async-signal-safe: a task thread's wall sample split (mode cpu+wall), from the thread's marks
// and the clocks now; advances the marks. Pure arithmetic, exposed for tests.
struct WallSplit {
  int64_t on_cpu_ns = 0;
  int64_t off_cpu_ns = 0;
  int64_t cpu_starved_ns = 0;  // part of off_cpu_ns
};
WallSplit SplitWallInterval(int64_t wall_delta_ns, int64_t cpu_delta_ns, int64_t run_delay_mark_ns,
                            int64_t run_delay_now_ns);

// async-signal-safe: runs the walker with crash protection on `state` (must be the caller's),
// into `record` (frames and partial_walk_error); returns the frame count or error code.
int WalkWithCrashGuard(ThreadState* state, SampleRecord* record, void* ucontext);

}  // namespace sparkprof::agent
