#include "flamegraph/html_renderer.h"

#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

namespace sparkprof::flamegraph {
namespace {

using Frames = std::vector<std::string_view>;

// The JSON data block between its opening tag and the first "</script" after it.
std::string DataBlock(const std::string& html) {
  std::string open = "<script type=\"application/json\" id=\"profile-data\">";
  size_t start = html.find(open);
  EXPECT_NE(start, std::string::npos);
  start += open.size();
  size_t end = html.find("</script", start);
  return html.substr(start, end - start);
}

TEST(HtmlRendererTest, HostileFrameNamesCannotLeaveTheDataBlock) {
  ProfileModel model;
  model.AddStack(Frames{"</script><script>alert(1)</script>", "<!--", "\"'quotes'\""},
                 Category::kCompute, 5);
  model.AddStack(Frames{"line\u2028separator", "<img src=x onerror=alert(2)>"}, Category::kGc, 1);
  HtmlRenderOptions options;
  options.title = "</title><script>alert(3)</script>";
  std::string html;
  RenderHtml(model, options, nullptr, html);

  std::string data = DataBlock(html);
  EXPECT_EQ(data.find('<'), std::string::npos);
  EXPECT_EQ(data.find('>'), std::string::npos);
  EXPECT_EQ(data.find("\u2028"), std::string::npos);
  EXPECT_NE(data.find("\\u003c/script\\u003e"), std::string::npos);
  // The data block ends exactly where the page's own "</script>" is.
  EXPECT_NE(html.find(data + "</script>\n<script>"), std::string::npos);
  // Title: escaped in <title>, and only ever data elsewhere.
  EXPECT_NE(html.find("<title>&lt;/title&gt;&lt;script&gt;alert(3)&lt;/script&gt;</title>"),
            std::string::npos);
  EXPECT_EQ(html.find("<script>alert"), std::string::npos);
  // Exactly two script elements: the data and the viewer.
  size_t scripts = 0;
  for (size_t at = html.find("<script"); at != std::string::npos;
       at = html.find("<script", at + 1)) {
    ++scripts;
  }
  EXPECT_EQ(scripts, 2u);
}

TEST(HtmlRendererTest, SelfContainedWithNoNetwork) {
  ProfileModel model;
  model.AddStack(Frames{"java/io/ObjectOutputStream.writeObject"}, Category::kSerialization, 1);
  std::string html;
  RenderHtml(model, {}, nullptr, html);
  EXPECT_NE(html.find("Content-Security-Policy"), std::string::npos);
  EXPECT_NE(html.find("default-src 'none'"), std::string::npos);
  EXPECT_EQ(html.find("src=\"http"), std::string::npos);
  EXPECT_EQ(html.find("href=\"http"), std::string::npos);
  EXPECT_NE(html.find("\"java.io.ObjectOutputStream.writeObject\""), std::string::npos);
  // Nodes: root then the frame, five numbers each.
  EXPECT_NE(html.find("\"nodes\":[0,1,1,0,1,1,1,1,1,0]"), std::string::npos);
}

TEST(HtmlRendererTest, DiffCarriesBeforeTotalsPerNode) {
  ProfileModel before;
  before.AddStack(Frames{"a"}, Category::kCompute, 4);
  ProfileModel after;
  after.AddStack(Frames{"a"}, Category::kCompute, 2);
  after.AddStack(Frames{"b"}, Category::kCompute, 2);
  DiffProfile diff = ComputeDiff(before, after);
  std::string html;
  RenderHtml(after, {}, &diff, html);
  EXPECT_NE(html.find("\"diff\":{\"beforeTotal\":4,\"beforeOnly\":0,\"before\":[4,4,0]}"),
            std::string::npos);
  EXPECT_NE(html.find("\"colorMode\":\"diff\""), std::string::npos);
}

// Thousands of distinct, individually narrow stacks: the pruned page still draws their weight,
// as one frame that says what it holds.
TEST(HtmlRendererTest, PrunedAwayProfileStillShowsWhatWasMerged) {
  ProfileModel model;
  for (int i = 0; i < 3000; ++i) {
    std::string frame = "java/util/Task" + std::to_string(i) + ".run";
    model.AddStack(Frames{frame}, Category::kCompute, 1);
  }
  ProfileModel pruned = std::move(model).Pruned(3);  // 0.1% of 3000
  std::string html;
  RenderHtml(pruned, {}, nullptr, html);
  std::string data = DataBlock(html);
  EXPECT_NE(data.find("\"[3000 frames below 0.1% merged]\""), std::string::npos);
  EXPECT_NE(data.find("\"prunedNodes\":3000"), std::string::npos);
  // The root (3000 samples, one child) and the marker (3000 samples, no children).
  EXPECT_NE(data.find("\"nodes\":[0,0,3000,0,1,1,0,3000,3000,0]"), std::string::npos) << data;
}

}  // namespace
}  // namespace sparkprof::flamegraph
