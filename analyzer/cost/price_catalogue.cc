#include "analyzer/cost/price_catalogue.h"

#include <simdjson.h>
#include <sys/stat.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <fstream>
#include <sstream>

#include "common/terminal_text.h"

namespace sparkprof::cost {

extern const char kBuiltinPricesJson[];  // prices_data.cc, generated from prices.json

namespace {

namespace dom = simdjson::dom;

std::string Lower(std::string_view text) {
  std::string out(text);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

constexpr const char* kNotPlainText =
    "holds a control character, a bidirectional control or invalid UTF-8 (it would reach "
    "terminals and reports as it is)";

// Reads one entry's fields; `where` is e.g. "instances[3]".
class EntryReader {
 public:
  EntryReader(dom::object object, std::string where, std::string& error)
      : object_(object), where_(std::move(where)), error_(error) {}

  bool String(const char* key, std::string& out, bool required, size_t max_bytes = 256) {
    dom::element value;
    if (object_[key].get(value) != simdjson::SUCCESS) return !required || Fail(key, "missing");
    std::string_view text;
    if (value.get_string().get(text) != simdjson::SUCCESS) return Fail(key, "not a string");
    if (text.size() > max_bytes) return Fail(key, "longer than " + std::to_string(max_bytes));
    // Names, regions and sources reach terminals and reports as they are: no control
    // characters (an escape sequence would act on the terminal), no invalid UTF-8.
    if (SanitizeForTerminal(text) != text) return Fail(key, kNotPlainText);
    out.assign(text);
    return true;
  }
  // A finite number in [low, high]; absent leaves `out` as is unless required.
  bool Number(const char* key, double& out, bool required, double low, double high) {
    dom::element value;
    if (object_[key].get(value) != simdjson::SUCCESS) return !required || Fail(key, "missing");
    if (value.is_null() && !required) return true;
    double number = 0;
    if (value.get_double().get(number) != simdjson::SUCCESS) return Fail(key, "not a number");
    if (!std::isfinite(number) || number < low || number > high) {
      std::ostringstream range;
      range << "out of range [" << low << ", " << high << "]";
      return Fail(key, range.str());
    }
    out = number;
    return true;
  }

 private:
  bool Fail(const char* key, const std::string& what) {
    error_ = where_ + "." + key + ": " + what;
    return false;
  }
  dom::object object_;
  std::string where_;
  std::string& error_;
};

}  // namespace

const InstanceType* PriceCatalogue::Find(std::string_view name) const {
  for (const InstanceType& type : instances) {
    if (type.name == name) return &type;
  }
  return nullptr;
}

const SpotTerms* PriceCatalogue::SpotOf(std::string_view cloud) const {
  for (const SpotTerms& terms : spot) {
    if (terms.cloud == cloud) return &terms;
  }
  return nullptr;
}

std::vector<const InstanceType*> PriceCatalogue::OfCloud(std::string_view cloud) const {
  std::vector<const InstanceType*> out;
  for (const InstanceType& type : instances) {
    if (type.cloud == cloud) out.push_back(&type);
  }
  return out;
}

bool ParseCatalogue(std::string_view json, const std::string& origin, PriceCatalogue& out,
                    std::string& error) {
  out = PriceCatalogue{};
  out.origin = origin;
  auto fail = [&](const std::string& what) {
    error = origin + ": " + what;
    return false;
  };
  if (json.size() > kMaxCatalogueBytes) {
    return fail("larger than " + std::to_string(kMaxCatalogueBytes) + " bytes");
  }
  dom::parser parser;
  dom::element root;
  if (auto e = parser.parse(json.data(), json.size()).get(root)) {
    return fail(std::string("not valid JSON: ") + simdjson::error_message(e));
  }
  dom::object top;
  if (root.get_object().get(top) != simdjson::SUCCESS) return fail("not a JSON object");
  std::string_view schema;
  if (top["schema"].get_string().get(schema) != simdjson::SUCCESS ||
      schema != "sparkprof.prices/v1") {
    return fail("\"schema\" must be \"sparkprof.prices/v1\"");
  }
  std::string_view currency;
  if (top["currency"].get_string().get(currency) == simdjson::SUCCESS) {
    if (currency.empty() || currency.size() > 8) return fail("\"currency\" must be a short code");
    if (SanitizeForTerminal(currency) != currency) {
      return fail(std::string("\"currency\" ") + kNotPlainText);
    }
    out.currency.assign(currency);
  }
  dom::array instances;
  if (top["instances"].get_array().get(instances) != simdjson::SUCCESS) {
    return fail("\"instances\" must be an array");
  }
  size_t index = 0;
  for (dom::element element : instances) {
    const std::string where = "instances[" + std::to_string(index++) + "]";
    if (out.instances.size() >= kMaxCatalogueInstances) {
      return fail("more than " + std::to_string(kMaxCatalogueInstances) + " instances");
    }
    dom::object object;
    if (element.get_object().get(object) != simdjson::SUCCESS) {
      return fail(where + ": not an object");
    }
    InstanceType type;
    EntryReader read(object, where, error);
    double vcpus = 0;
    if (!read.String("cloud", type.cloud, true, 32) || !read.String("name", type.name, true, 128) ||
        !read.Number("vcpus", vcpus, true, 1, 4096) ||
        !read.Number("memory_gib", type.memory_gib, true, 0.25, 65536) ||
        !read.Number("on_demand_per_hour", type.on_demand_per_hour, true, 0, 100000) ||
        !read.Number("spot_per_hour", type.spot_per_hour, false, 0, 100000) ||
        !read.Number("dbu_per_hour", type.dbu_per_hour, false, 0, 10000) ||
        !read.String("region", type.region, false) || !read.String("as_of", type.as_of, false) ||
        !read.String("source", type.source, false, 1024)) {
      error = origin + ": " + error;
      return false;
    }
    if (std::floor(vcpus) != vcpus) return fail(where + ".vcpus: not a whole number");
    type.vcpus = static_cast<int32_t>(vcpus);
    type.cloud = Lower(type.cloud);
    if (type.name.empty()) return fail(where + ".name: empty");
    out.instances.push_back(std::move(type));
  }
  dom::array spot;
  if (top["spot"].get_array().get(spot) == simdjson::SUCCESS) {
    index = 0;
    for (dom::element element : spot) {
      const std::string where = "spot[" + std::to_string(index++) + "]";
      if (out.spot.size() >= 64) return fail("more than 64 spot entries");
      dom::object object;
      if (element.get_object().get(object) != simdjson::SUCCESS) {
        return fail(where + ": not an object");
      }
      SpotTerms terms;
      EntryReader read(object, where, error);
      double notice = 0;
      if (!read.String("cloud", terms.cloud, true, 32) ||
          !read.Number("discount_low", terms.discount_low, true, 0, 0.99) ||
          !read.Number("discount_high", terms.discount_high, true, 0, 0.99) ||
          !read.Number("interruption_notice_s", notice, false, 0, 86400) ||
          !read.String("source", terms.source, false, 1024) ||
          !read.String("as_of", terms.as_of, false)) {
        error = origin + ": " + error;
        return false;
      }
      if (terms.discount_low > terms.discount_high) {
        return fail(where + ": discount_low above discount_high");
      }
      terms.cloud = Lower(terms.cloud);
      terms.interruption_notice_s = static_cast<int32_t>(notice);
      out.spot.push_back(std::move(terms));
    }
  }
  return true;
}

bool LoadCatalogue(const std::string& path, PriceCatalogue& out, std::string& error) {
  struct stat info {};
  if (::stat(path.c_str(), &info) != 0) {
    error = path + ": cannot read price catalogue";
    return false;
  }
  if (!S_ISREG(info.st_mode)) {
    error = path + ": not a regular file";
    return false;
  }
  if (static_cast<size_t>(info.st_size) > kMaxCatalogueBytes) {
    error = path + ": larger than " + std::to_string(kMaxCatalogueBytes) + " bytes";
    return false;
  }
  std::ifstream in(path, std::ios::binary);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (!in.good() && !in.eof()) {
    error = path + ": read error";
    return false;
  }
  return ParseCatalogue(text, path, out, error);
}

const PriceCatalogue& BuiltinCatalogue() {
  static const PriceCatalogue catalogue = [] {
    PriceCatalogue parsed;
    std::string error;
    // prices.json is validated by a test; a broken build-time file would leave this empty.
    if (!ParseCatalogue(kBuiltinPricesJson, "built-in", parsed, error)) parsed = {};
    parsed.origin = "built-in";
    return parsed;
  }();
  return catalogue;
}

}  // namespace sparkprof::cost
