#include "analyzer/profile/stage_profiles.h"

#include <algorithm>
#include <filesystem>
#include <map>
#include <memory>
#include <tuple>
#include <unordered_map>
#include <utility>

#include "analyzer/profile/task_times.h"
#include "common/frame_classifier.h"
#include "common/input_stream.h"
#include "flamegraph/profile_file_reader.h"
#include "flamegraph/read_report.h"

namespace sparkprof::profile {
namespace {

using flamegraph::FrameId;
using flamegraph::ProfileModel;

// Code the user did not write: the JDK, Scala, Spark and what Spark ships or commonly runs on.
// A frame under these is "framework"; everything else (including lambdas of the user's classes)
// is the application's.
constexpr std::string_view kFrameworkPrefixes[] = {
    "java.",
    "javax.",
    "jdk.",
    "sun.",
    "com.sun.",
    "scala.",
    "org.apache.spark.",
    "org.apache.hadoop.",
    "org.apache.parquet.",
    "org.apache.orc.",
    "org.apache.arrow.",
    "org.apache.commons.",
    "org.apache.log4j.",
    "org.apache.logging.",
    "org.apache.hive.",
    "org.apache.avro.",
    "org.apache.zookeeper.",
    "io.netty.",
    "com.esotericsoftware.",
    "com.fasterxml.",
    "com.google.",
    "com.twitter.chill.",
    "org.xerial.",
    "net.jpountz.",
    "com.github.luben.",
    "org.slf4j.",
    "org.codehaus.",
    "org.json4s.",
    "py4j.",
    "org.objenesis.",
    "org.roaringbitmap.",
    "io.delta.",
    "org.apache.iceberg.",
    "com.amazonaws.",
    "software.amazon.",
    "io.dropwizard.",
    "com.codahale.",
    "org.glassfish.",
    "org.eclipse.jetty.",
    "org.antlr.",
    "org.sparkproject.",
    "shaded.",
    "org.apache.curator.",
    "org.apache.ivy.",
    "org.apache.thrift.",
    "org.apache.zstd.",
    "com.univocity.",
    "org.apache.datasketches.",
    classifier::kPySparkPicklerPackage,
    "com.ibm.icu.",  // ICU: Spark 4's collations
    "[",
};
// The JDK itself: a site is the innermost frame outside it.
constexpr std::string_view kJdkPrefixes[] = {"java.", "javax.", "jdk.", "sun.", "com.sun.", "["};

bool StartsWithAny(std::string_view frame, std::span<const std::string_view> prefixes) {
  for (std::string_view prefix : prefixes) {
    if (frame.starts_with(prefix)) return true;
  }
  return false;
}

// sparkprof's plugin: classes directly in io.sparkprof (and its shaded libraries); a user's
// io.sparkprof.<package> (the demo's) is application code.
bool IsSparkprofPluginFrame(std::string_view frame) {
  constexpr std::string_view kPackage = "io.sparkprof.";
  if (!frame.starts_with(kPackage)) return false;
  const std::string_view rest = frame.substr(kPackage.size());
  return rest.starts_with("shaded.") ||
         (!rest.empty() && rest.front() >= 'A' && rest.front() <= 'Z');
}

bool IsFrameworkFrame(std::string_view frame) {
  return StartsWithAny(frame, kFrameworkPrefixes) || IsSparkprofPluginFrame(frame);
}

// What a frame is, for sites and application frames (0: not yet known, in Summarizer's cache).
constexpr uint8_t kUnknownKind = 0, kJdk = 1, kFramework = 2, kApplication = 3;
uint8_t KindOfName(std::string_view frame) {
  return StartsWithAny(frame, kJdkPrefixes) ? kJdk
         : IsFrameworkFrame(frame)          ? kFramework
                                            : kApplication;
}

// The positions (root first) of a stack's site -- its innermost frame outside the JDK -- and of
// its innermost application frame, kNoFrame when none; kind_at(i) is frame i's kind.
constexpr size_t kNoFrame = SIZE_MAX;
template <typename KindAt>
std::pair<size_t, size_t> SitePositions(size_t depth, KindAt&& kind_at) {
  size_t site = kNoFrame;
  for (size_t i = depth; i-- > 0;) {
    const uint8_t kind = kind_at(i);
    if (site == kNoFrame && kind != kJdk) site = i;
    if (kind == kApplication) return {site, i};
  }
  return {site, kNoFrame};
}

// Frames naming a pattern: an entry ending in '.' matches every frame under that package or
// class, one ending in '*' every frame starting with the rest; any other entry is one method,
// matched whole (serialize is not serializeStream).
struct PatternRule {
  Pattern pattern;
  std::string_view name;
  std::array<std::string_view, 6> prefixes;  // empty entries are unused
};
constexpr PatternRule kPatterns[kPatternCount] = {
    {Pattern::kJavaSerialization,
     "java_serialization",
     {"java.io.ObjectOutputStream.", "java.io.ObjectInputStream."}},
    {Pattern::kKryo, "kryo", {"com.esotericsoftware.kryo."}},
    {Pattern::kRegexCompile,
     "regex_compile",
     {"java.util.regex.Pattern.compile", "java.lang.String.replaceAll", "java.lang.String.split",
      "java.lang.String.matches", "java.lang.String.replaceFirst"}},
    {Pattern::kExceptionCreation,
     "exception_creation",
     {"java.lang.Throwable.<init>", "java.lang.Throwable.fillInStackTrace"}},
    {Pattern::kJsonParsing,
     "json_parsing",
     {"com.fasterxml.jackson.", "com.google.gson.", "org.json.", "org.json4s.", "ujson.",
      "com.alibaba.fastjson."}},
    {Pattern::kPythonRunner, "python_runner", {classifier::kPySparkRunnerPackage}},
    {Pattern::kReflection,
     "reflection",
     {"java.lang.reflect.Method.invoke", "java.lang.Class.forName"}},
    {Pattern::kDateFormatting,
     "date_formatting",
     {"java.text.SimpleDateFormat.<init>", "java.time.format.DateTimeFormatter.ofPattern"}},
    {Pattern::kClosureSerialization,
     "closure_serialization",
     {"org.apache.spark.serializer.JavaSerializerInstance.deserialize",
      "org.apache.spark.serializer.JavaSerializerInstance.serialize"}},
    {Pattern::kPythonRowUdf,
     "python_row_udf",
     {"org.apache.spark.sql.execution.python.BatchEvalPython*",
      "org.apache.spark.sql.execution.python.PythonUDFRunner*",
      "org.apache.spark.sql.execution.python.PythonUDFWithNamedArgumentsRunner*"}},
    {Pattern::kPythonArrow,
     "python_arrow",
     {"org.apache.spark.sql.execution.python.Arrow*",
      "org.apache.spark.sql.execution.python.MapInBatch*",
      "org.apache.spark.sql.execution.python.MapInPandas*",
      "org.apache.spark.sql.execution.python.FlatMap*",
      "org.apache.spark.sql.execution.python.CoGroupedArrow*",
      "org.apache.spark.sql.execution.python.AggregateInPandas*"}},
    {Pattern::kPythonRdd, "python_rdd", {"org.apache.spark.api.python.PythonRDD*"}},
};

// The Python patterns name classes of PySpark's JVM side (common/frame_classifier.h): each
// entry must lie under its packages, so a package renamed there cannot leave a pattern behind.
constexpr bool PythonPatternsUnderPySpark() {
  for (const PatternRule& rule : kPatterns) {
    if (!rule.name.starts_with("python_")) continue;
    for (const std::string_view& entry : rule.prefixes) {
      if (!entry.empty() && !classifier::IsPySparkExchangeFrame(entry)) return false;
    }
  }
  return true;
}
static_assert(PythonPatternsUnderPySpark());

bool Matches(std::string_view name, std::string_view entry) {
  if (entry.empty()) return false;
  if (entry.back() == '*') return name.starts_with(entry.substr(0, entry.size() - 1));
  return entry.back() == '.' ? name.starts_with(entry) : name == entry;
}

// String.split and replaceAll compile a regex per call only for patterns longer than one
// character (or with special characters); their time under Pattern.compile is what counts, so
// those entry points are only matched when Pattern.compile sits below them: see PatternOf.
bool IsStringRegexEntry(std::string_view frame) { return frame.starts_with("java.lang.String."); }

// The category a frame's time is called: the one holding most of it, run delay aside (a
// runnable thread waits to run that same code), unless the frame has nothing else.
Category WhatItDid(const CategoryNs& by_category) {
  int best = -1;
  for (int c = 0; c < kCategoryCount; ++c) {
    if (c == CategoryIndex(Category::kCpuStarved) || by_category[c] == 0) continue;
    if (best < 0 || by_category[c] > by_category[best]) best = c;
  }
  return best < 0 ? Category::kCpuStarved : static_cast<Category>(best);
}

template <typename Key>
std::vector<std::pair<Key, uint64_t>> TopByWeight(const std::unordered_map<Key, uint64_t>& weights,
                                                  size_t count) {
  std::vector<std::pair<Key, uint64_t>> sorted(weights.begin(), weights.end());
  std::sort(sorted.begin(), sorted.end(), [](const auto& a, const auto& b) {
    return a.second != b.second ? a.second > b.second : a.first < b.first;
  });
  if (sorted.size() > count) sorted.resize(count);
  return sorted;
}

constexpr uint32_t PatternBit(Pattern pattern) { return 1u << static_cast<int>(pattern); }

// Walks a stage's stacks once and keeps the sums the summary needs.
class Summarizer {
 public:
  explicit Summarizer(const ProfileModel& model) : model_(model) {
    const size_t frames = model.strings().size();
    seen_generation_.assign(frames, 0);
    frame_kind_.assign(frames, kUnknownKind);
    frame_pattern_.assign(frames, kUnknownPattern);
    python_exchange_.assign(frames, kUnknownKind);
  }

  void Visit(std::span<const FrameId> frames, Category category, uint64_t weight) {
    const int c = CategoryIndex(category);
    out_.category_ns[c] = flamegraph::SaturatingAdd(out_.category_ns[c], weight);
    ++out_.distinct_stacks;
    if (IsPythonWorker(category)) {  // the worker's time: not in the frames' task time
      VisitPython(frames, category, weight);
      return;
    }
    const bool on_cpu = !IsOffCpu(category);
    if (!frames.empty()) {
      auto& self = self_[frames.back()];
      self.total = flamegraph::SaturatingAdd(self.total, weight);
      self.by_category[c] = flamegraph::SaturatingAdd(self.by_category[c], weight);
      if (on_cpu) self.on_cpu = flamegraph::SaturatingAdd(self.on_cpu, weight);
    }
    // Sites: innermost non-JDK frame, innermost application frame. A stack the agent walked
    // only from a compiled caller ends in its walk-error marker: that site's inlined callees
    // are not known.
    const bool partial = !frames.empty() && IsPartialWalkMarker(model_.FrameName(frames.back()));
    const auto [site_at, application_at] =
        SitePositions(frames.size(), [&](size_t i) { return KindOf(frames[i]); });
    const FrameId site = site_at == kNoFrame ? kNone : frames[site_at];
    const FrameId application = application_at == kNoFrame ? kNone : frames[application_at];
    if (site != kNone && category != Category::kCpuStarved && IsPythonExchange(site)) {
      out_.python_exchange_ns = flamegraph::SaturatingAdd(out_.python_exchange_ns, weight);
    }
    if (site != kNone) {
      uint64_t& ns = sites_[SiteKey{c, site, application, partial}];
      ns = flamegraph::SaturatingAdd(ns, weight);
      if (site == application) {
        out_.application_site_ns[c] =
            flamegraph::SaturatingAdd(out_.application_site_ns[c], weight);
      }
    }
    // Inclusive sums, once per frame per sample; patterns likewise.
    ++generation_;
    uint32_t patterns_seen = 0;
    for (FrameId frame : frames) {
      if (seen_generation_[frame] != generation_) {
        seen_generation_[frame] = generation_;
        if (KindOf(frame) == kApplication) {
          auto& inclusive = inclusive_[frame];
          inclusive.all = flamegraph::SaturatingAdd(inclusive.all, weight);
          if (on_cpu) inclusive.on_cpu = flamegraph::SaturatingAdd(inclusive.on_cpu, weight);
        }
      }
    }
    // Patterns: the outermost matching frame decides; the application frame is the innermost
    // one above it.
    FrameId last_application = kNone;
    for (size_t i = 0; i < frames.size(); ++i) {
      const FrameId frame = frames[i];
      if (KindOf(frame) == kApplication) last_application = frame;
      const int8_t p = PatternOf(frames, i);
      if (p < 0 || (patterns_seen & (1u << p))) continue;
      // Inside a serializer, reflection, exceptions and the like are its own machinery (Java
      // serialization calls Class.forName and Method.invoke per object): serialization's time.
      if ((patterns_seen & kSerializerPatterns) != 0 && (kPerRecordPatterns & (1u << p)) != 0) {
        continue;
      }
      patterns_seen |= 1u << p;
      PatternSums& sums = patterns_[p];
      sums.all = flamegraph::SaturatingAdd(sums.all, weight);
      if (on_cpu) sums.on_cpu = flamegraph::SaturatingAdd(sums.on_cpu, weight);
      if (last_application != kNone) {
        uint64_t& ns = sums.by_application[last_application];
        ns = flamegraph::SaturatingAdd(ns, weight);
      }
    }
  }

  StageProfile Finish(int32_t stage_id, int32_t stage_attempt) {
    out_.stage_id = stage_id;
    out_.stage_attempt = stage_attempt;
    for (int c = 0; c < kCategoryCount; ++c) {
      const auto category = static_cast<Category>(c);
      const uint64_t ns = out_.category_ns[c];
      if (category == Category::kPython) {
        out_.python_ns = ns;
        continue;
      }
      if (category == Category::kPythonOffCpu) {
        out_.python_off_cpu_ns = ns;
        continue;
      }
      out_.task_ns = flamegraph::SaturatingAdd(out_.task_ns, ns);
      if (IsOffCpu(category)) {
        out_.off_cpu_ns = flamegraph::SaturatingAdd(out_.off_cpu_ns, ns);
      } else {
        out_.on_cpu_ns = flamegraph::SaturatingAdd(out_.on_cpu_ns, ns);
      }
    }
    // Top self frames.
    std::unordered_map<FrameId, uint64_t> self_totals;
    for (const auto& [frame, self] : self_) self_totals[frame] = self.total;
    for (const auto& [frame, ns] : TopByWeight(self_totals, kTopFrames)) {
      FrameTime time;
      time.frame = std::string(model_.FrameName(frame));
      time.self_ns = ns;
      time.on_cpu_self_ns = self_.at(frame).on_cpu;
      time.category = WhatItDid(self_.at(frame).by_category);
      if (auto it = inclusive_.find(frame); it != inclusive_.end()) {
        time.inclusive_ns = it->second.all;
        time.on_cpu_inclusive_ns = it->second.on_cpu;
      }
      out_.top_self.push_back(std::move(time));
    }
    // Top application frames by on-CPU inclusive time (then all time).
    std::vector<std::pair<FrameId, InclusiveSums>> application(inclusive_.begin(),
                                                               inclusive_.end());
    // Ties (a caller and the callee doing all its work) go to the frame with more self time:
    // the innermost one that holds the time.
    auto self_of = [&](FrameId frame) {
      auto it = self_.find(frame);
      return it == self_.end() ? uint64_t{0} : it->second.total;
    };
    std::sort(application.begin(), application.end(), [&](const auto& a, const auto& b) {
      if (a.second.on_cpu != b.second.on_cpu) return a.second.on_cpu > b.second.on_cpu;
      if (a.second.all != b.second.all) return a.second.all > b.second.all;
      if (self_of(a.first) != self_of(b.first)) return self_of(a.first) > self_of(b.first);
      return model_.FrameName(a.first) < model_.FrameName(b.first);
    });
    for (size_t i = 0; i < application.size() && i < kTopFrames; ++i) {
      FrameTime time;
      time.frame = std::string(model_.FrameName(application[i].first));
      time.inclusive_ns = application[i].second.all;
      time.on_cpu_inclusive_ns = application[i].second.on_cpu;
      if (auto it = self_.find(application[i].first); it != self_.end()) {
        time.self_ns = it->second.total;
        time.on_cpu_self_ns = it->second.on_cpu;
        time.category = WhatItDid(it->second.by_category);
      }
      out_.top_application.push_back(std::move(time));
    }
    // Sites: per category, the heaviest few.
    std::vector<std::pair<SiteKey, uint64_t>> sites(sites_.begin(), sites_.end());
    // kNone (no application frame) names nothing: never looked up in the string table.
    auto name_of = [&](FrameId frame) {
      return frame == kNone ? std::string_view() : model_.FrameName(frame);
    };
    std::sort(sites.begin(), sites.end(), [&](const auto& a, const auto& b) {
      if (a.first.category != b.first.category) return a.first.category < b.first.category;
      if (a.second != b.second) return a.second > b.second;
      return std::make_tuple(name_of(a.first.frame), name_of(a.first.application),
                             a.first.partial) <
             std::make_tuple(name_of(b.first.frame), name_of(b.first.application), b.first.partial);
    });
    int last_category = -1;
    size_t kept = 0;
    for (const auto& [key, ns] : sites) {
      if (key.category != last_category) {
        last_category = key.category;
        kept = 0;
      }
      if (kept++ >= kSitesPerCategory) continue;
      Site site;
      site.category = static_cast<Category>(key.category);
      site.frame = std::string(model_.FrameName(key.frame));
      if (key.application != kNone) {
        site.application_frame = std::string(model_.FrameName(key.application));
      }
      site.ns = ns;
      site.inlined_callees_unknown = key.partial;
      out_.sites.push_back(std::move(site));
    }
    std::stable_sort(out_.sites.begin(), out_.sites.end(),
                     [](const Site& a, const Site& b) { return a.ns > b.ns; });
    // Patterns.
    for (int p = 0; p < kPatternCount; ++p) {
      const PatternSums& sums = patterns_[p];
      if (sums.all == 0) continue;
      PatternTime time;
      time.pattern = static_cast<Pattern>(p);
      time.ns = sums.all;
      time.on_cpu_ns = sums.on_cpu;
      auto top = TopByWeight(sums.by_application, 1);
      if (!top.empty()) {
        time.application_frame = std::string(model_.FrameName(top.front().first));
        time.application_frame_ns = top.front().second;
      }
      out_.patterns.push_back(std::move(time));
    }
    std::stable_sort(out_.patterns.begin(), out_.patterns.end(),
                     [](const PatternTime& a, const PatternTime& b) { return a.ns > b.ns; });
    FinishPython();
    return std::move(out_);
  }

 private:
  // A Python worker's sample: charged to the innermost application Python frame (else the
  // innermost Python frame), and its off-CPU time to the innermost frame it waited in.
  void VisitPython(std::span<const FrameId> frames, Category category, uint64_t weight) {
    size_t first = frames.size();
    for (size_t i = 0; i < frames.size(); ++i) {
      if (model_.FrameName(frames[i]) == kPythonWorkerFrame) {
        first = i + 1;
        break;
      }
    }
    if (first >= frames.size()) return;  // no Python frame under the marker
    // The innermost application frame; else the innermost Python frame that is no marker.
    FrameId charged = kNone;
    for (size_t i = frames.size(); i-- > first;) {
      const std::string_view name = model_.FrameName(frames[i]);
      if (IsPythonApplicationFrame(name)) {
        charged = frames[i];
        break;
      }
      if (charged == kNone && !name.starts_with('[')) charged = frames[i];
    }
    if (charged == kNone) return;  // markers only
    if (IsPythonApplicationFrame(model_.FrameName(charged))) {
      out_.python_application_ns = flamegraph::SaturatingAdd(out_.python_application_ns, weight);
    }
    PythonSums& sums = python_[charged];
    sums.all = flamegraph::SaturatingAdd(sums.all, weight);
    if (category == Category::kPython) {
      sums.on_cpu = flamegraph::SaturatingAdd(sums.on_cpu, weight);
    } else {
      uint64_t& waited = sums.waited_in[frames.back()];
      waited = flamegraph::SaturatingAdd(waited, weight);
    }
  }

  // The lines' sums per function ("f (file.py:12)" and "f (file.py:30)" are one function).
  void FinishPython() {
    struct Function {
      uint64_t all = 0;
      uint64_t on_cpu = 0;
      FrameId hottest = 0;
      uint64_t hottest_ns = 0;
      uint64_t runnable = 0;
      std::unordered_map<FrameId, uint64_t> waited_in;
    };
    std::map<std::string, Function> functions;
    for (const auto& [frame, sums] : python_) {
      const std::string name = PythonFunctionName(model_.FrameName(frame));
      Function& function = functions[name];
      function.all = flamegraph::SaturatingAdd(function.all, sums.all);
      function.on_cpu = flamegraph::SaturatingAdd(function.on_cpu, sums.on_cpu);
      if (sums.all > function.hottest_ns ||
          (sums.all == function.hottest_ns &&
           model_.FrameName(frame) < model_.FrameName(function.hottest))) {
        function.hottest = frame;
        function.hottest_ns = sums.all;
      }
      for (const auto& [leaf, ns] : sums.waited_in) {
        if (model_.FrameName(leaf) == kPythonRunnableFrame) {
          function.runnable = flamegraph::SaturatingAdd(function.runnable, ns);
        } else {
          function.waited_in[leaf] = flamegraph::SaturatingAdd(function.waited_in[leaf], ns);
        }
      }
    }
    std::vector<std::pair<const std::string*, const Function*>> sorted;
    sorted.reserve(functions.size());
    for (const auto& [name, function] : functions) sorted.emplace_back(&name, &function);
    std::stable_sort(sorted.begin(), sorted.end(),
                     [](const auto& a, const auto& b) { return a.second->all > b.second->all; });
    if (sorted.size() > kTopFrames) sorted.resize(kTopFrames);
    for (const auto& [name, function] : sorted) {
      PythonFrameTime time;
      time.function = *name;
      time.frame = std::string(model_.FrameName(function->hottest));
      time.ns = function->all;
      time.on_cpu_ns = function->on_cpu;
      time.runnable_ns = function->runnable;
      auto top = TopByWeight(function->waited_in, 1);
      if (!top.empty()) time.waited_in = std::string(model_.FrameName(top.front().first));
      out_.top_python.push_back(std::move(time));
    }
  }

  static constexpr FrameId kNone = UINT32_MAX;
  static constexpr int8_t kUnknownPattern = -2, kNoPattern = -1;
  static constexpr uint32_t kSerializerPatterns =
      PatternBit(Pattern::kJavaSerialization) | PatternBit(Pattern::kKryo);
  static constexpr uint32_t kPerRecordPatterns =
      PatternBit(Pattern::kRegexCompile) | PatternBit(Pattern::kExceptionCreation) |
      PatternBit(Pattern::kReflection) | PatternBit(Pattern::kDateFormatting) |
      PatternBit(Pattern::kJsonParsing);

  struct SelfSums {
    uint64_t total = 0;
    uint64_t on_cpu = 0;
    CategoryNs by_category{};
  };
  struct InclusiveSums {
    uint64_t all = 0;
    uint64_t on_cpu = 0;
  };
  struct SiteKey {
    int category;
    FrameId frame;
    FrameId application;
    bool partial;
    bool operator==(const SiteKey&) const = default;
  };
  struct SiteHash {
    size_t operator()(const SiteKey& key) const {
      return std::hash<uint64_t>()((static_cast<uint64_t>(key.frame) << 32 | key.application) * 31 +
                                   key.category * 2 + (key.partial ? 1 : 0));
    }
  };
  struct PythonSums {
    uint64_t all = 0;
    uint64_t on_cpu = 0;
    std::unordered_map<FrameId, uint64_t> waited_in;  // off CPU, by innermost frame
  };
  struct PatternSums {
    uint64_t all = 0;
    uint64_t on_cpu = 0;
    std::unordered_map<FrameId, uint64_t> by_application;
  };

  uint8_t KindOf(FrameId frame) {
    uint8_t& kind = frame_kind_[frame];
    if (kind == kUnknownKind) kind = KindOfName(model_.FrameName(frame));
    return kind;
  }
  bool IsPythonExchange(FrameId frame) {
    uint8_t& cached = python_exchange_[frame];
    if (cached == kUnknownKind)
      cached = classifier::IsPySparkExchangeFrame(model_.FrameName(frame)) ? 2 : 1;
    return cached == 2;
  }
  // The pattern frames[i] starts, or -1. A String regex entry counts only with Pattern.compile
  // below it (one-character split and replace do not compile).
  int8_t PatternOf(std::span<const FrameId> frames, size_t i) {
    int8_t& cached = frame_pattern_[frames[i]];
    if (cached == kUnknownPattern) {
      cached = kNoPattern;
      const std::string_view name = model_.FrameName(frames[i]);
      // The most specific entry wins: PythonRDD.compute is PySpark's runner too
      // ("org.apache.spark.api.python."), but what it names is an RDD lambda; first-listed
      // wins left python_rdd without time and RDD lambdas advised as SQL UDFs.
      size_t longest = 0;
      for (int p = 0; p < kPatternCount; ++p) {
        for (std::string_view prefix : kPatterns[p].prefixes) {
          if (prefix.size() > longest && Matches(name, prefix)) {
            cached = static_cast<int8_t>(p);
            longest = prefix.size();
          }
        }
      }
    }
    if (cached == static_cast<int8_t>(Pattern::kRegexCompile) &&
        IsStringRegexEntry(model_.FrameName(frames[i]))) {
      for (size_t j = i + 1; j < frames.size(); ++j) {
        if (model_.FrameName(frames[j]) == "java.util.regex.Pattern.compile") {
          return cached;
        }
      }
      return kNoPattern;
    }
    return cached;
  }

  const ProfileModel& model_;
  StageProfile out_;
  std::vector<uint32_t> seen_generation_;
  uint32_t generation_ = 0;
  std::vector<uint8_t> frame_kind_;
  std::vector<int8_t> frame_pattern_;
  std::vector<uint8_t> python_exchange_;  // 0 not yet known, 1 no, 2 yes
  std::unordered_map<FrameId, SelfSums> self_;
  std::unordered_map<FrameId, InclusiveSums> inclusive_;
  std::unordered_map<SiteKey, uint64_t, SiteHash> sites_;
  PatternSums patterns_[kPatternCount];
  std::unordered_map<FrameId, PythonSums> python_;
};

// Per stage attempt, one model; all share the frame strings.
struct StageModels {
  std::shared_ptr<flamegraph::StringTable> strings = std::make_shared<flamegraph::StringTable>();
  std::map<std::pair<int32_t, int32_t>, std::unique_ptr<ProfileModel>> models;

  static ProfileModel* Select(void* context, int32_t stage_id, int32_t stage_attempt) {
    auto* self = static_cast<StageModels*>(context);
    auto& model = self->models[{stage_id, stage_attempt}];
    if (!model) {
      model = std::make_unique<ProfileModel>(flamegraph::WeightUnit::kNanoseconds, self->strings);
    }
    return model.get();
  }
};

// Puts each stage attempt's monitors into its summary (profile.stages, sorted); counts and names
// what had no summary to go to and what was past the table's limit.
void AttachMonitors(const MonitorWaitTable& table, const std::string& source_name,
                    ApplicationProfile& profile, flamegraph::ReadReport& report) {
  uint64_t ns_without_stage = 0;
  for (auto& [key, monitors] : table.Finish()) {
    auto stage = std::lower_bound(profile.stages.begin(), profile.stages.end(), key,
                                  [](const StageProfile& s, const std::pair<int32_t, int32_t>& k) {
                                    return std::make_pair(s.stage_id, s.stage_attempt) < k;
                                  });
    if (stage == profile.stages.end() || stage->stage_id != key.first ||
        stage->stage_attempt != key.second) {
      ns_without_stage = flamegraph::SaturatingAdd(ns_without_stage, monitors.wait_ns);
      continue;
    }
    stage->monitors = std::move(monitors);
  }
  profile.max_monitor_keys = table.max_keys();
  profile.monitor_rows_left_out = table.rows_left_out();
  profile.monitor_wait_ns_left_out =
      flamegraph::SaturatingAdd(table.wait_ns_left_out(), ns_without_stage);
  if (table.rows_left_out() > 0) {
    report.Warn(source_name + ": " + std::to_string(table.rows_left_out()) +
                " monitor-wait row(s) (" + std::to_string(table.wait_ns_left_out() / 1'000'000) +
                " ms waiting) past the limit of " + std::to_string(table.max_keys()) +
                " distinct monitor keys (docs/limits.md) are left out of the stages' monitors");
  }
  if (ns_without_stage > 0) {
    report.Warn(source_name + ": monitor waits of " + std::to_string(ns_without_stage / 1'000'000) +
                " ms belong to stage attempts without stack samples (or to no task) and are "
                "left out of the stages' monitors");
  }
}

}  // namespace

std::string_view PatternName(Pattern pattern) {
  const int index = static_cast<int>(pattern);
  return index >= 0 && index < kPatternCount ? kPatterns[index].name : "unknown";
}

const PatternTime* StageProfile::FindPattern(Pattern pattern) const {
  for (const PatternTime& time : patterns) {
    if (time.pattern == pattern) return &time;
  }
  return nullptr;
}

const TaskTime* StageProfile::FindTask(int64_t task_attempt_id) const {
  auto it =
      std::lower_bound(tasks.begin(), tasks.end(), task_attempt_id,
                       [](const TaskTime& task, int64_t id) { return task.task_attempt_id < id; });
  return it != tasks.end() && it->task_attempt_id == task_attempt_id ? &*it : nullptr;
}

uint64_t TaskTime::task_ns() const { return flamegraph::SaturatingAdd(on_cpu_ns(), off_cpu_ns()); }

uint64_t TaskTime::on_cpu_ns() const {
  uint64_t sum = 0;
  for (int c = 0; c < kCategoryCount; ++c) {
    const auto category = static_cast<Category>(c);
    if (!IsOffCpu(category) && !IsPythonWorker(category)) {
      sum = flamegraph::SaturatingAdd(sum, category_ns[c]);
    }
  }
  return sum;
}

uint64_t TaskTime::off_cpu_ns() const {
  uint64_t sum = 0;
  for (int c = 0; c < kCategoryCount; ++c) {
    if (IsOffCpu(static_cast<Category>(c))) sum = flamegraph::SaturatingAdd(sum, category_ns[c]);
  }
  return sum;
}

std::vector<const Site*> StageProfile::SitesOf(Category category) const {
  std::vector<const Site*> found;
  for (const Site& site : sites) {
    if (site.category == category) found.push_back(&site);
  }
  return found;
}

bool ApplicationProfile::has_off_cpu() const {
  for (const std::string& mode : modes) {
    if (mode == "cpu+wall") return true;
  }
  return false;
}

const StageProfile* ApplicationProfile::Find(int32_t stage_id, int32_t stage_attempt) const {
  auto it = std::lower_bound(stages.begin(), stages.end(), std::make_pair(stage_id, stage_attempt),
                             [](const StageProfile& stage, const std::pair<int32_t, int32_t>& key) {
                               return std::make_pair(stage.stage_id, stage.stage_attempt) < key;
                             });
  return it != stages.end() && it->stage_id == stage_id && it->stage_attempt == stage_attempt
             ? &*it
             : nullptr;
}

namespace {

// A runnable thread waits to run the code it runs once on CPU: its run delay goes with its on-CPU
// work in proportion (StageProfile::RunnableFactor).
double RunnableFactorOf(uint64_t on_cpu, uint64_t starved) {
  if (on_cpu == 0) return 1.0;
  return (static_cast<double>(on_cpu) + static_cast<double>(starved)) / static_cast<double>(on_cpu);
}

}  // namespace

double StageProfile::RunnableFactor() const {
  return RunnableFactorOf(on_cpu_ns, category_ns[CategoryIndex(Category::kCpuStarved)]);
}

double TaskTime::RunnableFactor() const {
  return RunnableFactorOf(on_cpu_ns(), category_ns[CategoryIndex(Category::kCpuStarved)]);
}

uint64_t StageProfile::RunnableNs(uint64_t on_cpu) const {
  const double scaled = static_cast<double>(on_cpu) * RunnableFactor();
  return scaled >= static_cast<double>(task_ns) ? task_ns : static_cast<uint64_t>(scaled);
}

StageProfile ApplicationProfile::Combined(int32_t stage_id) const {
  StageProfile combined;
  combined.stage_id = stage_id;
  for (const StageProfile& stage : stages) {
    if (stage.stage_id != stage_id) continue;
    if (combined.task_ns == 0 && combined.python_ns == 0 && combined.python_off_cpu_ns == 0) {
      combined = stage;  // the first attempt's frames; the sums over all attempts
      continue;
    }
    for (int c = 0; c < kCategoryCount; ++c) {
      combined.category_ns[c] =
          flamegraph::SaturatingAdd(combined.category_ns[c], stage.category_ns[c]);
    }
    combined.task_ns = flamegraph::SaturatingAdd(combined.task_ns, stage.task_ns);
    combined.on_cpu_ns = flamegraph::SaturatingAdd(combined.on_cpu_ns, stage.on_cpu_ns);
    combined.off_cpu_ns = flamegraph::SaturatingAdd(combined.off_cpu_ns, stage.off_cpu_ns);
    combined.python_ns = flamegraph::SaturatingAdd(combined.python_ns, stage.python_ns);
    combined.python_off_cpu_ns =
        flamegraph::SaturatingAdd(combined.python_off_cpu_ns, stage.python_off_cpu_ns);
    combined.python_application_ns =
        flamegraph::SaturatingAdd(combined.python_application_ns, stage.python_application_ns);
    combined.python_exchange_ns =
        flamegraph::SaturatingAdd(combined.python_exchange_ns, stage.python_exchange_ns);
    for (int c = 0; c < kCategoryCount; ++c) {
      combined.application_site_ns[c] =
          flamegraph::SaturatingAdd(combined.application_site_ns[c], stage.application_site_ns[c]);
    }
    combined.monitors.Merge(stage.monitors);
    // Task ids are unique across a stage's attempts: the union stays one row per task.
    combined.tasks.insert(combined.tasks.end(), stage.tasks.begin(), stage.tasks.end());
  }
  std::sort(combined.tasks.begin(), combined.tasks.end(), [](const TaskTime& a, const TaskTime& b) {
    return a.task_attempt_id < b.task_attempt_id;
  });
  return combined;
}

bool IsApplicationFrame(std::string_view frame) { return !IsFrameworkFrame(frame); }

StackSite SiteOfStack(std::span<const std::string_view> frames) {
  const auto [site, application] =
      SitePositions(frames.size(), [&](size_t i) { return KindOfName(frames[i]); });
  StackSite found;
  if (site != kNoFrame) found.frame = frames[site];
  if (application != kNoFrame) found.application_frame = frames[application];
  return found;
}

bool IsPartialWalkMarker(std::string_view frame) {
  return frame == "[not_walkable_not_Java]" || frame == "[unknown_not_Java]" ||
         frame == "[not_walkable_Java]" || frame == "[unknown_Java]";
}

std::string PythonFunctionName(std::string_view frame) {
  // "f (file.py:12)" -> "f (file.py)"; anything else stays as it is.
  if (frame.size() < 4 || frame.back() != ')') return std::string(frame);
  const size_t colon = frame.rfind(':');
  const size_t open = frame.rfind(" (");
  if (colon == std::string_view::npos || open == std::string_view::npos || colon < open) {
    return std::string(frame);
  }
  const std::string_view line = frame.substr(colon + 1, frame.size() - colon - 2);
  if (line.empty() || line.find_first_not_of("0123456789") != std::string_view::npos) {
    return std::string(frame);
  }
  return std::string(frame.substr(0, colon)) + ")";
}

bool IsPythonApplicationFrame(std::string_view frame) {
  if (frame.empty() || frame.front() == '[') return false;
  const size_t open = frame.rfind(" (");
  if (open == std::string_view::npos) return true;
  const std::string_view where = frame.substr(open + 2);
  for (std::string_view library : {"pyspark/", "<site>/", "<stdlib>/", "<frozen ", "py4j/"}) {
    if (where.starts_with(library)) return false;
  }
  return true;
}

StageProfile SummarizeStage(const ProfileModel& model, int32_t stage_id, int32_t stage_attempt) {
  Summarizer summarizer(model);
  model.ForEachStack([&](std::span<const FrameId> frames, Category category, uint64_t weight) {
    summarizer.Visit(frames, category, weight);
  });
  return summarizer.Finish(stage_id, stage_attempt);
}

Result<ApplicationProfile> ApplicationProfileFromBytes(std::string_view bytes,
                                                       const std::string& source_name,
                                                       const ProfileLoadOptions& options) {
  flamegraph::ProfileFileReadOptions read_options;
  read_options.source_name = source_name;
  read_options.weight = flamegraph::WeightUnit::kNanoseconds;
  StageModels models;
  TaskTimeTable task_times(options.max_profiled_tasks);
  read_options.task_times = &TaskTimeTable::Receive;
  read_options.task_times_context = &task_times;
  DriverProfileBuilder driver;
  read_options.untagged = &DriverProfileBuilder::Receive;
  read_options.untagged_context = &driver;
  flamegraph::ReadReport report;
  flamegraph::ProfileFileSummary summary;
  ApplicationProfile profile;
  profile.source = source_name;
  profile.cpu_use = ApplicationCpuUse(options.max_cpu_windows);
  read_options.cpu_use = &ApplicationCpuUse::Receive;
  read_options.cpu_use_context = &profile.cpu_use;
  read_options.memory_use = &ApplicationMemoryUse::Receive;
  read_options.memory_use_context = &profile.memory_use;
  MonitorWaitTable monitor_waits(options.max_monitor_keys);
  read_options.monitor_waits = &MonitorWaitTable::Receive;
  read_options.monitor_waits_context = &monitor_waits;
  SPARKPROF_RETURN_IF_ERROR(flamegraph::ReadProfileFileByStage(
      bytes, read_options, &StageModels::Select, &models, profile.untagged_ns, report, &summary));
  profile.modes.assign(summary.modes.begin(), summary.modes.end());
  profile.interval_ns = summary.min_interval_ns;
  profile.executors = summary.executors;
  profile.batches_read = summary.batches_read;
  profile.batches_skipped = summary.batches_skipped;
  for (auto& [key, model] : models.models) {
    profile.stages.push_back(SummarizeStage(*model, key.first, key.second));
    model.reset();  // the summary is all that is kept
  }
  task_times.MoveInto(profile.stages, source_name, profile, report);
  AttachMonitors(monitor_waits, source_name, profile, report);
  profile.driver = driver.Finish(source_name, report);
  if (profile.memory_use.jvms_left_out() > 0) {
    report.Warn(source_name + ": memory readings of " +
                std::to_string(profile.memory_use.jvms_left_out()) + " JVMs past the limit of " +
                std::to_string(ApplicationMemoryUse::kMaxJvms) + " were left out");
  }
  if (profile.cpu_use.windows_left_out() > 0) {
    report.Warn(source_name + ": " + std::to_string(profile.cpu_use.windows_left_out()) +
                " batch windows of CPU use past the limit of " +
                std::to_string(options.max_cpu_windows) +
                " were left out (the run-delay causes are judged from the first ones)");
  }
  if (profile.cpu_use.driver_run_delay_steps_left_out() > 0) {
    report.Warn(source_name + ": " +
                std::to_string(profile.cpu_use.driver_run_delay_steps_left_out()) +
                " run-delay steps of the driver past the limit of " +
                std::to_string(options.max_cpu_windows) +
                " were left out (its wait for CPUs after them is not claimed)");
  }
  profile.problem_count = report.problem_count;
  profile.problems = std::move(report.messages);
  return profile;
}

Result<ApplicationProfile> LoadApplicationProfile(const std::string& path,
                                                  const ProfileLoadOptions& options) {
  // Refuses FIFOs and devices, and never blocks on a file without data (see input_stream.h).
  SPARKPROF_ASSIGN_OR_RETURN(std::unique_ptr<InputStream> file, OpenFileInputStream(path));
  if (options.decoder != nullptr) {
    SPARKPROF_ASSIGN_OR_RETURN(file,
                               options.decoder(std::move(file), path, options.max_file_bytes));
  }
  std::string bytes;
  std::error_code size_error;
  const uint64_t file_bytes = std::filesystem::file_size(path, size_error);
  SPARKPROF_ASSIGN_OR_RETURN(const bool whole, ReadAllWithin(*file, options.max_file_bytes, bytes,
                                                             size_error ? 0 : file_bytes));
  if (!whole) {
    return TooLarge(path + ": larger than the limit of " + std::to_string(options.max_file_bytes) +
                    " bytes for a profile file");
  }
  Result<ApplicationProfile> profile = ApplicationProfileFromBytes(bytes, path, options);
  std::error_code marker_error;
  if (profile.ok() &&
      std::filesystem::exists(path + std::string(kInProgressMarkerSuffix), marker_error)) {
    profile->problems.insert(
        profile->problems.begin(),
        path + ": the driver had not finished this profile (" +
            std::filesystem::path(path).filename().string() + std::string(kInProgressMarkerSuffix) +
            " is beside it: the driver is still running, or was stopped before the "
            "application's end); what it holds is read, a last batch cut short is skipped");
    ++profile->problem_count;
  }
  return profile;
}

std::string ApplicationDirectoryName(const std::string& application_id) {
  std::string name = application_id.empty() ? std::string("unknown-application") : application_id;
  for (char& c : name) {
    const bool keep = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                      c == '.' || c == '_' || c == '-';
    if (!keep) c = '_';
  }
  if (name == "." || name == "..") name = "_";
  return name;
}

std::string EventLogDirFolderName(const std::string& application_id) {
  std::string name = application_id.empty() ? std::string("unknown-application") : application_id;
  for (char& c : name) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
    if (c == ' ' || c == ':' || c == '/') {
      c = '-';
    } else if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '_')) {
      c = '_';  // Spark's [.${}'"] and anything else outside [a-z0-9._-] (its '.' included)
    }
  }
  return name + ".sparkprof";
}

std::string FindProfileFor(const std::string& path, const std::string& application_id) {
  std::error_code error;
  const std::filesystem::path root(path);
  if (std::filesystem::is_regular_file(root, error)) return path;
  if (!std::filesystem::is_directory(root, error)) return "";
  const std::string name = ApplicationDirectoryName(application_id);
  const std::filesystem::path stored = root / EventLogDirFolderName(application_id);
  for (const std::filesystem::path& candidate :
       {root / name / "profile.sparkprof", root / "profile.sparkprof",
        root / "profile.sparkprof.zstd", root / "profile.sparkprof.gz",
        stored / "profile.sparkprof.zstd", stored / "profile.sparkprof.gz"}) {
    if (std::filesystem::is_regular_file(candidate, error)) return candidate.string();
  }
  return "";
}

}  // namespace sparkprof::profile
