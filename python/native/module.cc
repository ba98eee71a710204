// sparkprof._native: the engine for Python. Discovery and analysis run with the GIL released;
// the engine calls back into Python only to list folders and read bytes (python_tree,
// python_stream).
// Everything a report says comes from here: Python renders nothing and computes no figure.
#include <nanobind/nanobind.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "analyzer/executor_logs/executor_logs.h"
#include "analyzer/report/analysis.h"
#include "analyzer/report/render.h"
#include "analyzer/report/whatif_json.h"
#include "analyzer/source/log_source.h"
#include "analyzer/whatif/simulator.h"
#include "common/human_format.h"
#include "common/json_writer.h"
#include "python/native/python_object.h"
#include "python/native/python_tree.h"

namespace sparkprof::python {
namespace {

struct Discovery {
  std::unique_ptr<PythonTree> tree;
  source::DiscoveryResult result;
};

struct Problem {
  std::string message;
  bool per_line = false;
};

struct AnalysisResult {
  std::unique_ptr<report::Analysis> analysis;
  std::vector<Problem> problems;  // the first `max_problems_kept` per-line ones, all others
  size_t per_line_problems_kept = 0;
  int64_t problems_not_kept = 0;
  std::shared_ptr<RaisedErrors> errors = std::make_shared<RaisedErrors>();
  // Prepared on the first what-if and shared by every later one (sparkprof.what_if, recommend).
  std::unique_ptr<whatif::LazySimulator> simulator;
  // When no Spark event could be read: the entry of the several-application report's
  // not_analysed list (where the log is, and why), as the CLI writes it.
  source::DiscoveryWarning not_analysed;
};

// The pricing options of `sparkprof analyze|whatif` (cli/cost_options.h, docs/cost.md) as the
// Python package passes them: a dict whose keys are the flags' names with underscores.
struct PythonCostOptions {
  cost::CostOptions options;
  std::unique_ptr<cost::PriceCatalogue> catalogue;  // the `prices` file, when given
};

PythonCostOptions ReadCostOptions(const nb::dict& given, bool right_sizing) {
  PythonCostOptions result;
  cost::CostOptions& o = result.options;
  o.frontier = right_sizing;
  std::string prices;
  const std::pair<const char*, std::string*> texts[] = {
      {"prices", &prices},
      {"instance_type", &o.instance_type},
      {"driver_instance_type", &o.driver_instance_type},
      {"cloud", &o.cloud}};
  // With the CLI's ranges (cli/cost_options.cc).
  struct Number {
    const char* name;
    double* field;
    double high;
  };
  const Number numbers[] = {{"price_per_core_hour", &o.price_per_core_hour, 1e6},
                            {"price_per_gib_hour", &o.price_per_gib_hour, 1e6},
                            {"dbu_price", &o.dbu_price, 1e6},
                            {"dbus_per_instance_hour", &o.dbus_per_instance_hour, 1e4},
                            {"max_slowdown", &o.max_slowdown, 10}};
  for (auto [key_object, value] : given) {
    const std::string key = nb::cast<std::string>(key_object);
    if (value.is_none()) continue;
    bool known = key == "spot";
    if (known) o.spot = nb::cast<bool>(value);
    for (const auto& [name, field] : texts) {
      if (key != name) continue;
      *field = nb::cast<std::string>(nb::str(value));
      known = true;
    }
    for (const Number& number : numbers) {
      if (key != number.name) continue;
      *number.field = nb::cast<double>(value);
      if (!(*number.field >= 0 && *number.field <= number.high)) {
        char message[160];
        std::snprintf(message, sizeof(message), "%s must be within [0, %g]", key.c_str(),
                      number.high);
        throw nb::value_error(message);
      }
      known = true;
    }
    if (!known) throw nb::value_error(("unknown cost option: " + key).c_str());
  }
  if (!o.cloud.empty() && o.cloud != "aws" && o.cloud != "gcp" && o.cloud != "azure") {
    throw nb::value_error("cloud must be aws, gcp or azure");
  }
  if ((o.price_per_core_hour >= 0) != (o.price_per_gib_hour >= 0)) {
    throw nb::value_error("price_per_core_hour and price_per_gib_hour go together");
  }
  if (!prices.empty()) {
    result.catalogue = std::make_unique<cost::PriceCatalogue>();
    std::string error;
    if (!cost::LoadCatalogue(prices, *result.catalogue, error)) {
      throw nb::value_error(error.c_str());
    }
    o.catalogue = result.catalogue.get();
  }
  return result;
}

// The engine's strings are UTF-8 (simdjson rejects a line that is not); should one not be, its
// bad bytes become U+FFFD instead of an exception.
nb::str Utf8(const std::string& text) {
  return nb::steal<nb::str>(
      PyUnicode_DecodeUTF8(text.data(), static_cast<Py_ssize_t>(text.size()), "replace"));
}

Discovery Discover(nb::object tree_object, const std::string& path, const std::string& name,
                   const std::string& display_name, const std::string& kind, uint64_t size_bytes,
                   const std::string& local_path) {
  Discovery discovery;
  discovery.tree = std::make_unique<PythonTree>(std::move(tree_object));
  TreeEntry root{name, path, display_name, size_bytes, local_path};
  nb::gil_scoped_release release;
  if (kind == "directory") {
    discovery.result = source::DiscoverFolder(*discovery.tree->Folder(root));
  } else {
    discovery.result = source::DiscoverFile(discovery.tree->File(root));
  }
  return discovery;
}

AnalysisResult AnalyzeApplication(const Discovery& discovery, size_t index,
                                  size_t max_problems_kept, bool right_sizing, const nb::dict& cost,
                                  const std::string& profile, const std::string& logs) {
  if (index >= discovery.result.applications.size()) throw nb::index_error("no such application");
  if (!discovery.tree) throw nb::value_error("this discovery was cleared");
  const PythonCostOptions cost_options = ReadCostOptions(cost, right_sizing);
  AnalysisResult result;
  eventlog::ReaderOptions options;
  options.on_problem = [&result, max_problems_kept](const std::string& message, bool per_line) {
    if (per_line && result.per_line_problems_kept >= max_problems_kept) {
      ++result.problems_not_kept;
      return;
    }
    result.per_line_problems_kept += per_line ? 1 : 0;
    result.problems.push_back({message, per_line});
  };
  nb::gil_scoped_release release;
  ScopedRaisedErrors scope(result.errors);
  result.analysis = std::make_unique<report::Analysis>(report::Analyze(
      discovery.result.applications[index], options, cost_options.options, profile, logs));
  result.simulator = std::make_unique<whatif::LazySimulator>(result.analysis->model);
  if (!result.analysis->read.analysable()) {
    report::NotAnalysedList entry;
    entry.Add(discovery.result.applications[index],
              report::NothingAnalysableWhy(result.analysis->read));
    result.not_analysed = std::move(entry.entries.front());
  }
  return result;
}

// `sparkprof whatif --set ... --fix ... --format json` for this application: the settings and
// fixes are the CLI's words, checked by the engine's own parser.
whatif::Scenario ParseScenario(const std::vector<std::string>& settings,
                               const std::vector<std::string>& fixes) {
  whatif::Scenario scenario;
  std::string error;
  for (const std::string& setting : settings) {
    if (!whatif::ApplySetting(setting, scenario, error)) throw nb::value_error(error.c_str());
  }
  for (const std::string& fix : fixes) {
    if (!whatif::ApplyFix(fix, scenario, error)) throw nb::value_error(error.c_str());
  }
  return scenario;
}

// `sparkprof whatif --set ... --fix ... --format json` over these applications: each one's object
// alone, and the document the CLI writes for all of them (the object itself for one application,
// {"applications": [...]} for several). Each application is prepared for the simulator once, on
// its first what-if; `prepared=false` prepares it again for this scenario (the benchmark's
// baseline, bench/fleet_bench.py).
std::pair<std::vector<std::string>, std::string> Whatif(
    const std::vector<const AnalysisResult*>& results, const std::vector<std::string>& settings,
    const std::vector<std::string>& fixes, bool prepared = true) {
  const whatif::Scenario scenario = ParseScenario(settings, fixes);
  for (const AnalysisResult* result : results) {
    if (!result->analysis->read.analysable()) {
      throw nb::value_error("no Spark events could be read from this log; nothing to simulate");
    }
  }
  std::vector<std::string> each;
  JsonWriter document;
  nb::gil_scoped_release release;
  const bool many = results.size() > 1;
  if (many) document.BeginObject().Key("applications").BeginArray();
  for (const AnalysisResult* result : results) {
    const whatif::Prediction prediction = prepared
                                              ? result->simulator->Get().Simulate(scenario)
                                              : whatif::Simulate(result->analysis->model, scenario);
    JsonWriter one;
    report::WriteWhatifJson(*result->analysis, prediction, one);
    each.push_back(one.Take());
    report::WriteWhatifJson(*result->analysis, prediction, document);
  }
  if (many) document.EndArray().EndObject();
  return {std::move(each), document.Take()};
}

nb::tuple WhatifForPython(const std::vector<const AnalysisResult*>& results,
                          const std::vector<std::string>& settings,
                          const std::vector<std::string>& fixes) {
  auto [each, document] = Whatif(results, settings, fixes);
  nb::list objects;
  for (const std::string& text : each) objects.append(Utf8(text));
  return nb::make_tuple(objects, Utf8(document));
}

std::vector<const report::Analysis*> Pointers(const std::vector<const AnalysisResult*>& results) {
  std::vector<const report::Analysis*> pointers;
  for (const AnalysisResult* result : results) pointers.push_back(result->analysis.get());
  return pointers;
}

// `not_analysed`: the applications of the same input that gave no report, in the input's order
// (listed after the others when there are several, as the CLI does).
nb::str Render(const std::vector<const AnalysisResult*>& results, const std::string& format,
               const std::vector<const AnalysisResult*>& not_analysed = {}) {
  if (!report::IsReportFormat(format)) {
    throw nb::value_error("format must be one of text, md, json, html");
  }
  std::vector<const report::Analysis*> pointers = Pointers(results);
  report::NotAnalysedList missing;
  for (const AnalysisResult* result : not_analysed) {
    if (result->analysis->read.analysable()) {
      throw nb::value_error("not_analysed holds an application that was analysed");
    }
    if (missing.entries.size() < report::NotAnalysedList::kMax) {
      missing.entries.push_back(result->not_analysed);
    } else {
      ++missing.left_out;
    }
  }
  std::string text;
  {
    nb::gil_scoped_release release;
    text = report::RenderReport(format, pointers, missing);
  }
  return Utf8(text);
}

// Garbage-collector support: a tree object or an exception's traceback can lead back to the
// Discovery or Analysis holding it (a tree class defined in a module whose globals hold the
// result), a cycle only the collector can break.
int VisitErrors(const RaisedErrors& errors, visitproc visit, void* arg) {
  for (const SharedObject& exception : errors.exceptions) Py_VISIT(exception->ptr());
  return 0;
}

int DiscoveryTraverse(PyObject* self, visitproc visit, void* arg) {
  Py_VISIT(Py_TYPE(self));
  if (!nb::inst_ready(self)) return 0;
  const Discovery* discovery = nb::inst_ptr<Discovery>(self);
  if (!discovery->tree) return 0;
  Py_VISIT(discovery->tree->object().ptr());
  return VisitErrors(*discovery->tree->errors(), visit, arg);
}

int DiscoveryClear(PyObject* self) {
  Discovery* discovery = nb::inst_ptr<Discovery>(self);
  discovery->result.applications.clear();  // their openers share the tree object
  discovery->tree.reset();
  return 0;
}

int AnalysisTraverse(PyObject* self, visitproc visit, void* arg) {
  Py_VISIT(Py_TYPE(self));
  if (!nb::inst_ready(self)) return 0;
  return VisitErrors(*nb::inst_ptr<AnalysisResult>(self)->errors, visit, arg);
}

int AnalysisClear(PyObject* self) {
  nb::inst_ptr<AnalysisResult>(self)->errors->exceptions.clear();
  return 0;
}

PyType_Slot discovery_slots[] = {{Py_tp_traverse, reinterpret_cast<void*>(DiscoveryTraverse)},
                                 {Py_tp_clear, reinterpret_cast<void*>(DiscoveryClear)},
                                 {0, nullptr}};
PyType_Slot analysis_slots[] = {{Py_tp_traverse, reinterpret_cast<void*>(AnalysisTraverse)},
                                {Py_tp_clear, reinterpret_cast<void*>(AnalysisClear)},
                                {0, nullptr}};

nb::list Exceptions(const RaisedErrors& errors) {
  nb::list list;
  for (const SharedObject& exception : errors.exceptions) list.append(*exception);
  return list;
}

NB_MODULE(_native, m) {
  m.doc() = "The sparkprof engine (C++), for the sparkprof Python package.";
  m.attr("REPORT_SCHEMA") = report::kReportSchema;
  m.attr("WHATIF_SCHEMA") = report::kWhatifSchema;
  m.attr("WHATIF_SETTINGS") = whatif::kSupportedSettings;

  nb::class_<Discovery>(m, "Discovery", nb::type_slots(discovery_slots))
      .def_prop_ro("applications",
                   [](const Discovery& discovery) {
                     nb::list list;
                     for (const source::ApplicationLog& log : discovery.result.applications) {
                       nb::list parts;
                       for (const source::LogPart& part : log.parts) {
                         parts.append(nb::make_tuple(Utf8(part.display_name), part.size_bytes));
                       }
                       nb::dict entry;
                       entry["name"] = Utf8(log.name);
                       entry["layout"] = log.layout;
                       entry["in_progress_by_name"] = log.in_progress_by_name;
                       entry["archive"] = Utf8(log.archive);
                       entry["parts"] = parts;
                       list.append(entry);
                     }
                     return list;
                   })
      .def_prop_ro("warnings",
                   [](const Discovery& discovery) {
                     nb::list warnings;
                     for (const source::DiscoveryWarning& warning : discovery.result.warnings) {
                       warnings.append(nb::make_tuple(Utf8(warning.path), Utf8(warning.message)));
                     }
                     return warnings;
                   })
      .def_prop_ro("errors",
                   [](const Discovery& discovery) {
                     return discovery.tree ? Exceptions(*discovery.tree->errors()) : nb::list();
                   })
      .def("analyze", &AnalyzeApplication, nb::arg("index"), nb::arg("max_problems_kept") = 1000,
           nb::arg("right_sizing") = true, nb::arg("cost") = nb::dict(), nb::arg("profile") = "",
           nb::arg("logs") = "",
           "Reads and analyses one application (the GIL is released while the engine works); "
           "right_sizing=False skips the cost section's instance frontier; `cost` holds the "
           "pricing options of `sparkprof analyze` (keys: the flags' names with underscores); "
           "`profile` is `sparkprof analyze --profile`: a *.sparkprof file or the driver's output "
           "directory (\"\": none); `logs` is `sparkprof analyze --logs`: the executors' and the "
           "driver's logs, a local directory or file (\"\": none).");

  nb::class_<AnalysisResult>(m, "Analysis", nb::type_slots(analysis_slots))
      .def_prop_ro("log_name", [](const AnalysisResult& r) { return Utf8(r.analysis->log_name); })
      .def_prop_ro("analysable",
                   [](const AnalysisResult& r) { return r.analysis->read.analysable(); })
      .def_prop_ro("problems",
                   [](const AnalysisResult& r) {
                     nb::list problems;
                     for (const Problem& problem : r.problems) {
                       problems.append(nb::make_tuple(Utf8(problem.message), problem.per_line));
                     }
                     return problems;
                   })
      .def_prop_ro("problems_not_kept", [](const AnalysisResult& r) { return r.problems_not_kept; })
      .def_prop_ro("not_analysed",
                   [](const AnalysisResult& r) {
                     return nb::make_tuple(Utf8(r.not_analysed.path), Utf8(r.not_analysed.message));
                   })
      .def_prop_ro("errors", [](const AnalysisResult& r) { return Exceptions(*r.errors); })
      .def_prop_ro("spark_properties",
                   [](const AnalysisResult& r) { return r.analysis->model.spark_properties; })
      .def_prop_ro("resource_profiles",
                   [](const AnalysisResult& r) {
                     nb::list list;
                     for (const auto& [id, profile] : r.analysis->model.resource_profiles) {
                       nb::dict entry;
                       entry["id"] = profile.id;
                       entry["executor_cores"] = profile.executor_cores;
                       entry["executor_memory_mb"] = profile.executor_memory_mb;
                       entry["executor_memory_overhead_mb"] = profile.executor_memory_overhead_mb;
                       entry["executor_off_heap_mb"] = profile.executor_off_heap_mb;
                       entry["task_cpus"] = profile.task_cpus;
                       list.append(entry);
                     }
                     return list;
                   })
      .def(
          "render",
          [](const AnalysisResult& r, const std::string& format) { return Render({&r}, format); },
          nb::arg("format"))
      .def(
          "whatif",
          [](const AnalysisResult& r, const std::vector<std::string>& settings,
             const std::vector<std::string>& fixes,
             bool prepared) { return Utf8(Whatif({&r}, settings, fixes, prepared).second); },
          nb::arg("settings"), nb::arg("fixes"), nb::arg("prepared") = true,
          "The run replayed as it was and with the settings (KEY=VALUE) and fixes (skew, "
          "broadcast) changed: the JSON `sparkprof whatif --format json` writes. The run is "
          "prepared for the simulator once and reused (prepared=False: prepared again).");

  m.def("discover", &Discover, nb::arg("tree"), nb::arg("path"), nb::arg("name"),
        nb::arg("display_name"), nb::arg("kind"), nb::arg("size_bytes"), nb::arg("local_path"),
        "Finds the applications under `path` of `tree` (see sparkprof/_tree.py).");
  m.def(
      "check_scenario",
      [](const std::vector<std::string>& settings, const std::vector<std::string>& fixes) {
        ParseScenario(settings, fixes);
      },
      nb::arg("settings"), nb::arg("fixes"),
      "Raises ValueError for a setting or fix the what-if simulator does not know.");
  m.def("whatif", &WhatifForPython, nb::arg("analyses"), nb::arg("settings"), nb::arg("fixes"),
        "(each application's what-if JSON object, the document `sparkprof whatif --format json` "
        "writes for all of them).");
  m.def("render", &Render, nb::arg("analyses"), nb::arg("format"),
        nb::arg("not_analysed") = std::vector<const AnalysisResult*>{},
        "The report of several applications, as `sparkprof analyze --format FORMAT` writes it; "
        "`not_analysed`: the input's applications in which no Spark event could be read.");
  // The reports' number formats, so the fleet commands print figures as the reports do.
  m.def("human_bytes", &HumanBytes, nb::arg("bytes"));
  m.def(
      "is_executor_log_name",
      [](const std::string& name) { return executor_logs::IsLogName(name); }, nb::arg("name"),
      "Whether `sparkprof analyze --logs` looks at a file of this name (stderr, *.log, ...).");
  m.def(
      "executor_log_limits",
      [] {
        const executor_logs::LogReadLimits limits;
        nb::dict out;
        out["max_files"] = limits.max_files;
        out["max_total_bytes"] = limits.max_total_bytes;
        out["max_depth"] = limits.max_depth;
        return out;
      },
      "The engine's bounds on the executor and driver logs it reads (docs/limits.md).");
  m.def("human_duration_ms", &HumanDurationMs, nb::arg("millis"));
  m.def("percent", &Percent, nb::arg("ratio"));
  m.def("format_epoch_ms", &FormatEpochMs, nb::arg("epoch_ms"));
  m.def(
      "any_finding_at_or_above",
      [](const std::vector<const AnalysisResult*>& results, const std::string& severity) {
        if (severity != "warning" && severity != "critical") {
          throw nb::value_error("severity must be warning or critical");
        }
        return report::AnyFindingAtOrAbove(Pointers(results), severity == "critical"
                                                                  ? diagnosis::Severity::kCritical
                                                                  : diagnosis::Severity::kWarning);
      },
      nb::arg("analyses"), nb::arg("severity"));
}

}  // namespace
}  // namespace sparkprof::python
