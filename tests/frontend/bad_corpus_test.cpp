// The bad-kernel corpus: every tests/bad/NAME.tl starts with one or more lines
//
//   # expect: LINE:COL: error: TEXT
//
// (TEXT a substring of the message), one per expected error, in order. Each file is run through
// parse -> evalLaunch -> compile, stopping after the first phase that reports errors, and
// exactly the expected located errors must appear; the rendered output must show the source
// line with a caret under the column.
#include <gtest/gtest.h>

#include <filesystem>
#include <regex>
#include <sstream>

#include "FrontendTestUtil.h"

namespace tl {
namespace {

namespace fs = std::filesystem;

struct Expectation {
  uint32_t line = 0, col = 0;
  std::string text;
};

std::vector<Expectation> readExpectations(const std::string& source) {
  static const std::regex re(R"(^# expect: (\d+):(\d+): error: (.+)$)");
  std::vector<Expectation> out;
  std::istringstream in(source);
  std::string line;
  while (std::getline(in, line)) {
    std::smatch m;
    if (!std::regex_match(line, m, re)) break;
    out.push_back({static_cast<uint32_t>(std::stoul(m[1])), static_cast<uint32_t>(std::stoul(m[2])), m[3]});
  }
  return out;
}

std::vector<fs::path> corpusFiles() {
  std::vector<fs::path> files;
  fs::path dir = fs::path(TL_SOURCE_DIR) / "tests" / "bad";
  if (fs::exists(dir))
    for (const auto& e : fs::directory_iterator(dir))
      if (e.path().extension() == ".tl") files.push_back(e.path());
  std::sort(files.begin(), files.end());
  return files;
}

TEST(BadCorpus, HasEnoughFiles) { EXPECT_GE(corpusFiles().size(), 30u); }

TEST(BadCorpus, EveryFileReportsExactlyItsExpectedErrors) {
  for (const auto& path : corpusFiles()) {
    SCOPED_TRACE(path.filename().string());
    auto file = SourceFile::load(path.string());
    std::vector<Expectation> want = readExpectations(file->text());
    ASSERT_FALSE(want.empty()) << "no '# expect:' lines";
    auto r = test::runFrontend(file->text(), {}, path.string());
    std::vector<Diagnostic> errors;
    for (const auto& d : r->diag.diagnostics())
      if (d.severity == Severity::Error) errors.push_back(d);
    ASSERT_EQ(errors.size(), want.size()) << r->errors();
    for (size_t k = 0; k < want.size(); ++k) {
      const Diagnostic& d = errors[k];
      EXPECT_EQ(d.loc.line, want[k].line) << r->errors();
      EXPECT_EQ(d.loc.col, want[k].col) << r->errors();
      EXPECT_NE(d.message.find(want[k].text), std::string::npos) << "expected: " << want[k].text << "\n" << r->errors();
      // Rendered chibicc-style: "path:line:col: error: msg", the source line, a caret.
      std::string rendered = r->diag.render(d);
      std::string head = path.string() + ":" + std::to_string(d.loc.line) + ":" + std::to_string(d.loc.col) + ": error: ";
      EXPECT_EQ(rendered.rfind(head, 0), 0u) << rendered;
      std::string src(r->file->line(static_cast<int>(d.loc.line)));
      EXPECT_NE(rendered.find("\n    " + src + "\n"), std::string::npos) << rendered;
      size_t caretLine = rendered.find("\n", rendered.find("\n") + 1) + 1;
      std::string caret = rendered.substr(caretLine);
      EXPECT_EQ(caret.find('^'), 4 + d.loc.col - 1) << rendered;
    }
  }
}

}  // namespace
}  // namespace tl
