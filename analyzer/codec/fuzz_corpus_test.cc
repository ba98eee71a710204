// The fuzz targets' seed corpus (fuzz/corpus/<target>/) is generated here, so it follows the
// encoders. SPARKPROF_REGENERATE_CORPUS=1 rewrites it; otherwise the test checks it is current.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <string>

#include "analyzer/codec/codec_test_util.h"
#include "analyzer/codec/gzip_writer.h"
#include "analyzer/codec/lz4_block_writer.h"
#include "analyzer/codec/lzf_writer.h"
#include "analyzer/codec/snappy_java_writer.h"
#include "analyzer/codec/zstd_writer.h"

namespace sparkprof::codec {
namespace {

using Seeds = std::map<std::string, std::string>;  // file name -> bytes

std::map<std::string, Seeds> MakeCorpus() {
  const std::string text = testing::SampleEventLogText(300);
  const std::string lz4 = EncodeLz4Block(text, 128);
  const std::string snappy = EncodeSnappyJava(text, 100);
  const std::string lzf = EncodeLzf(text, 100);
  const std::string zstd = EncodeZstd(text);
  const std::string gzip = EncodeGzip(text);
  const std::string skippable(
      "\x50\x2A\x4D\x18\x02\x00\x00\x00"
      "ab",
      10);
  std::map<std::string, Seeds> corpus;
  corpus["fuzz_codec_lz4"] = {{"blocks", lz4},
                              {"concatenated", lz4 + EncodeLz4Block("tail")},
                              {"stored", EncodeLz4Block(testing::RandomBytes(100, 1))},
                              {"truncated", lz4.substr(0, 60)}};
  corpus["fuzz_codec_snappy"] = {{"chunks", snappy},
                                 {"concatenated", snappy + EncodeSnappyJava("tail")},
                                 {"truncated", snappy.substr(0, 50)}};
  corpus["fuzz_codec_lzf"] = {{"chunks", lzf},
                              {"stored", EncodeLzf(testing::RandomBytes(100, 2))},
                              {"truncated", lzf.substr(0, 40)}};
  corpus["fuzz_codec_zstd"] = {{"frame", zstd},
                               {"frames", zstd + EncodeZstd("tail")},
                               {"skippable", skippable + zstd},
                               {"truncated", zstd.substr(0, zstd.size() / 2)}};
  corpus["fuzz_codec_gzip"] = {{"member", gzip},
                               {"members", gzip + EncodeGzip("tail")},
                               {"truncated", gzip.substr(0, gzip.size() / 2)}};
  corpus["fuzz_codec_open_decoded"] = {{"plain", text},
                                       {"lz4", lz4},
                                       {"snappy", snappy},
                                       {"lzf", lzf},
                                       {"zstd", zstd},
                                       {"gzip", gzip},
                                       {"zip", std::string("PK\x03\x04\x14\0\0\0", 8)},
                                       {"empty", ""}};
  return corpus;
}

std::string ReadFile(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

TEST(FuzzCorpus, SeedsAreCurrent) {
  const std::filesystem::path root = SPARKPROF_CODEC_CORPUS_DIR;
  const bool regenerate = std::getenv("SPARKPROF_REGENERATE_CORPUS") != nullptr;
  for (const auto& [target, seeds] : MakeCorpus()) {
    for (const auto& [name, bytes] : seeds) {
      std::filesystem::path path = root / target / name;
      ASSERT_LE(bytes.size(), 2048u) << path;
      if (regenerate) {
        std::filesystem::create_directories(path.parent_path());
        std::ofstream(path, std::ios::binary) << bytes;
      } else {
        EXPECT_TRUE(ReadFile(path) == bytes)
            << path << " is stale; rerun with SPARKPROF_REGENERATE_CORPUS=1";
      }
    }
  }
}

}  // namespace
}  // namespace sparkprof::codec
