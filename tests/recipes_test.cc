// Every diagnosis finding carries a `recipe`: the docs page a reader follows to understand and fix
// the problem. This test scans the rule sources for the paths they name and fails when a page is
// missing or is only a stub, so a new rule cannot ship pointing at nothing.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <map>
#include <sstream>
#include <string>

namespace {

namespace fs = std::filesystem;

const fs::path kSource = SPARKPROF_SOURCE_DIR;
constexpr std::uintmax_t kMinPageBytes = 1500;

std::string ReadAll(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// recipe path -> the rule file that names it first (for the failure message).
std::map<std::string, std::string> RecipePaths() {
  std::map<std::string, std::string> paths;
  const std::regex recipe(R"re("(docs/recipes/[A-Za-z0-9_./-]+\.md)")re");
  for (const fs::directory_entry& entry : fs::directory_iterator(kSource / "analyzer/diagnosis/rules")) {
    if (entry.path().extension() != ".cc") continue;
    const std::string text = ReadAll(entry.path());
    for (auto it = std::sregex_iterator(text.begin(), text.end(), recipe); it != std::sregex_iterator();
         ++it) {
      paths.emplace((*it)[1].str(), entry.path().filename().string());
    }
  }
  return paths;
}

TEST(Recipes, RulesNameRecipes) {
  ASSERT_TRUE(fs::is_directory(kSource / "analyzer/diagnosis/rules")) << kSource;
  // Fifteen rules; several share a page. Finding none means the scan (or the rules) broke.
  EXPECT_GE(RecipePaths().size(), 5u);
}

TEST(Recipes, EveryRecipeARuleNamesExistsAndIsWritten) {
  for (const auto& [path, rule_file] : RecipePaths()) {
    SCOPED_TRACE(path + " (named in analyzer/diagnosis/rules/" + rule_file + ")");
    const fs::path page = kSource / path;
    ASSERT_TRUE(fs::is_regular_file(page)) << "missing recipe page " << page;
    EXPECT_GT(fs::file_size(page), kMinPageBytes) << "recipe page is a stub: " << page;
  }
}

TEST(Recipes, IssueListedPagesExist) {
  // The pages issue 3 lists, including the guide no rule links to directly.
  for (const char* path : {"docs/recipes/troubleshoot/slow-spark-jobs.md",
                           "docs/recipes/data-skew-diagnosis.md", "docs/recipes/oom-and-spill.md",
                           "docs/recipes/shuffle-bottleneck.md", "docs/recipes/gc-pressure.md",
                           "docs/recipes/resource-wait-long.md", "docs/recipes/s3-write-slow.md",
                           "docs/recipes/observability/spark-profiling-guide.md"}) {
    SCOPED_TRACE(path);
    const fs::path page = kSource / path;
    ASSERT_TRUE(fs::is_regular_file(page));
    EXPECT_GT(fs::file_size(page), kMinPageBytes);
  }
}

}  // namespace
