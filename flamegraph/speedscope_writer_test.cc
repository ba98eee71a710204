#include "flamegraph/speedscope_writer.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace sparkprof::flamegraph {
namespace {

TEST(SpeedscopeWriterTest, SampledProfileWithSharedFrames) {
  ProfileModel model;
  std::vector<std::string_view> ab = {"java/lang/Thread.run", "b\"<"};
  std::vector<std::string_view> a = {"java/lang/Thread.run"};
  model.AddStack(ab, Category::kCompute, 3);
  model.AddStack(a, Category::kCompute, 2);
  SpeedscopeWriteOptions options;
  options.name = "stage 7";
  std::string out;
  WriteSpeedscope(model, options, out);
  EXPECT_EQ(out,
            "{\"$schema\":\"https://www.speedscope.app/file-format-schema.json\","
            "\"exporter\":\"sparkprof\",\"name\":\"stage 7\",\"activeProfileIndex\":0,"
            "\"shared\":{\"frames\":[{\"name\":\"java.lang.Thread.run\"},"
            "{\"name\":\"b\\\"\\u003c\"}]},"
            "\"profiles\":[{\"type\":\"sampled\",\"name\":\"stage 7\",\"unit\":\"none\","
            "\"startValue\":0,\"endValue\":5,\"samples\":[[0],[0,1]],\"weights\":[2,3]}]}\n");
}

}  // namespace
}  // namespace sparkprof::flamegraph
