// Every diagnosis finding carries a `recipe`: the docs page a reader follows to understand and fix
// the problem. This test scans the rule sources for the paths they name and fails when a page is
// missing or is only a stub, so a new rule cannot ship pointing at nothing. It also follows the
// relative links between the docs pages and the chart's alert runbook links (with their #anchors),
// so moving a page cannot leave a dangling link behind.
#include <gtest/gtest.h>

#include <cctype>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
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
  for (const fs::directory_entry& entry :
       fs::directory_iterator(kSource / "analyzer/diagnosis/rules")) {
    if (entry.path().extension() != ".cc") continue;
    const std::string text = ReadAll(entry.path());
    for (auto it = std::sregex_iterator(text.begin(), text.end(), recipe);
         it != std::sregex_iterator(); ++it) {
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
                           "docs/recipes/troubleshoot/data-skew-diagnosis.md",
                           "docs/recipes/troubleshoot/oom-and-spill.md",
                           "docs/recipes/troubleshoot/shuffle-bottleneck.md",
                           "docs/recipes/troubleshoot/gc-pressure.md",
                           "docs/recipes/troubleshoot/resource-wait-long.md",
                           "docs/recipes/troubleshoot/s3-write-slow.md",
                           "docs/recipes/observability/spark-profiling-guide.md"}) {
    SCOPED_TRACE(path);
    const fs::path page = kSource / path;
    ASSERT_TRUE(fs::is_regular_file(page));
    EXPECT_GT(fs::file_size(page), kMinPageBytes);
  }
}

// GitHub's heading anchor: lower case, punctuation other than '-' and '_' dropped, spaces to '-'.
std::string HeadingAnchor(const std::string& heading) {
  std::string anchor;
  for (const char c : heading) {
    const unsigned char u = static_cast<unsigned char>(c);
    if (std::isalnum(u) || c == '-' || c == '_') {
      anchor += static_cast<char>(std::tolower(u));
    } else if (c == ' ') {
      anchor += '-';
    }
  }
  return anchor;
}

bool PageHasAnchor(const fs::path& page, const std::string& anchor) {
  std::istringstream lines(ReadAll(page));
  bool in_fence = false;
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind("```", 0) == 0) in_fence = !in_fence;
    if (in_fence || line.empty() || line[0] != '#') continue;
    const std::size_t text = line.find_first_not_of('#');
    if (text == std::string::npos || line[text] != ' ') continue;
    if (HeadingAnchor(line.substr(text + 1)) == anchor) return true;
  }
  return false;
}

// Checks one repository-relative target "path[#anchor]" resolved against `base`.
void ExpectTargetExists(const fs::path& base, const std::string& target, const std::string& where) {
  const std::size_t hash = target.find('#');
  const std::string file = target.substr(0, hash);
  const fs::path page = file.empty() ? base : (base / file).lexically_normal();
  ASSERT_TRUE(fs::exists(page)) << where << ": link to missing " << target << " (" << page << ")";
  if (hash != std::string::npos && page.extension() == ".md") {
    EXPECT_TRUE(PageHasAnchor(page, target.substr(hash + 1)))
        << where << ": no heading for #" << target.substr(hash + 1) << " in " << page;
  }
}

TEST(Recipes, RelativeDocsLinksResolve) {
  const std::regex link(R"re(\]\(([^)\s]+)\))re");
  std::size_t links = 0;
  for (const fs::directory_entry& entry : fs::recursive_directory_iterator(kSource / "docs")) {
    if (entry.path().extension() != ".md") continue;
    std::string text = ReadAll(entry.path());
    // Links inside fenced code blocks are examples, not links.
    text = std::regex_replace(text, std::regex("```[^`]*```"), "");
    for (auto it = std::sregex_iterator(text.begin(), text.end(), link);
         it != std::sregex_iterator(); ++it) {
      const std::string target = (*it)[1].str();
      if (std::regex_search(target, std::regex("^[a-z]+:"))) continue;  // http:, https:, mailto:
      const std::string where = fs::relative(entry.path(), kSource).string();
      if (target[0] == '#') {
        ExpectTargetExists(entry.path(), target, where);
      } else {
        ExpectTargetExists(entry.path().parent_path(), target, where);
      }
      ++links;
    }
  }
  EXPECT_GT(links, 50u) << "the link scan found too few links; the pattern broke";
}

TEST(Recipes, AlertRunbooksResolve) {
  const fs::path rules = kSource / "helm/sparkprof/files/sparkprof-alerts.rules.yaml";
  ASSERT_TRUE(fs::is_regular_file(rules)) << rules;
  const std::string text = ReadAll(rules);
  const std::regex runbook(R"re(runbook_url:\s*(\S+))re");
  std::size_t runbooks = 0;
  for (auto it = std::sregex_iterator(text.begin(), text.end(), runbook);
       it != std::sregex_iterator(); ++it) {
    ExpectTargetExists(kSource, (*it)[1].str(), "sparkprof-alerts.rules.yaml");
    ++runbooks;
  }
  EXPECT_GE(runbooks, 7u);
}

}  // namespace
