#include "analyzer/executor_logs/log_hits.h"

#include <utility>

namespace sparkprof::executor_logs {

void LogHitTable::Add(LogHit hit) {
  auto key = std::make_tuple(hit.process, hit.signal, hit.text);
  if (auto found = index_.find(key); found != index_.end()) {
    LogHit& kept = hits_[found->second];
    ++kept.count;
    if (!hit.time.empty()) kept.last_time = hit.time, kept.last_time_ms = hit.time_ms;
    return;
  }
  if (hits_.size() >= max_hits_) {
    ++left_out_;
    return;
  }
  index_.emplace(std::move(key), hits_.size());
  hits_.push_back(std::move(hit));
}

std::string_view TextAfterTime(const LogHit& hit) {
  std::string_view text = hit.text;
  if (hit.time.empty()) return text;
  const size_t at = text.find(hit.time);
  if (at > 1) return text;  // not found (npos) included
  text.remove_prefix(at + hit.time.size());
  if (!text.empty() && text.front() == ']') text.remove_prefix(1);
  while (!text.empty() && text.front() == ' ') text.remove_prefix(1);
  return text.empty() ? std::string_view(hit.text) : text;
}

std::string CleanText(std::string_view text, size_t max_bytes) {
  while (!text.empty() && (text.back() == '\r' || text.back() == ' ')) text.remove_suffix(1);
  if (text.size() > max_bytes) {
    size_t cut = max_bytes;
    // Not inside a UTF-8 sequence: back to its lead byte.
    while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) --cut;
    text = text.substr(0, cut);
  }
  std::string clean(text);
  for (char& c : clean) {
    const auto byte = static_cast<unsigned char>(c);
    if ((byte < 0x20 && c != '\t') || byte == 0x7F) c = '?';
  }
  return clean;
}

}  // namespace sparkprof::executor_logs
