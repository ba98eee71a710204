// Prices of the machines Spark runs on, as data: instance types per cloud (vCPUs, memory,
// on-demand price per hour, optional spot price and Databricks DBUs per hour, with the region,
// date and source of every price) and each cloud's spot discount range. The catalogue shipped
// with sparkprof is analyzer/cost/prices.json (docs/cost.md); users pass their own with --prices.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace sparkprof::cost {

struct InstanceType {
  std::string cloud;  // aws, gcp, azure (lower case)
  std::string name;   // r5.2xlarge, n2-highmem-8, Standard_E8s_v5
  int32_t vcpus = 0;
  double memory_gib = 0;
  double on_demand_per_hour = 0;
  double spot_per_hour = -1;  // -1: not in the catalogue (the cloud's spot range applies)
  double dbu_per_hour = -1;   // Databricks DBUs per instance-hour; -1: not in the catalogue
  std::string region;
  std::string as_of;
  std::string source;
};

// What a cloud says about spot / preemptible capacity: the discount off on-demand (a range) and
// how much notice an interruption gives.
struct SpotTerms {
  std::string cloud;
  double discount_low = 0;
  double discount_high = 0;
  int32_t interruption_notice_s = 0;
  std::string source;
  std::string as_of;
};

struct PriceCatalogue {
  std::string origin;  // the file it came from, or "built-in"
  std::string currency = "USD";
  std::vector<InstanceType> instances;
  std::vector<SpotTerms> spot;

  const InstanceType* Find(std::string_view name) const;  // exact name, any cloud
  const SpotTerms* SpotOf(std::string_view cloud) const;
  std::vector<const InstanceType*> OfCloud(std::string_view cloud) const;
};

// Limits on a catalogue file (a user's file is input like any other).
inline constexpr size_t kMaxCatalogueBytes = 4 << 20;
inline constexpr size_t kMaxCatalogueInstances = 10000;

// Parses a sparkprof.prices/v1 document. On failure returns false with `error` naming `origin`,
// the entry (instances[i]) and the field.
bool ParseCatalogue(std::string_view json, const std::string& origin, PriceCatalogue& out,
                    std::string& error);
// Reads and parses a file (size-limited, regular files only).
bool LoadCatalogue(const std::string& path, PriceCatalogue& out, std::string& error);
// The catalogue compiled into sparkprof (analyzer/cost/prices.json).
const PriceCatalogue& BuiltinCatalogue();

}  // namespace sparkprof::cost
