#include "ir/Diagnostics.h"

#include <ostream>
#include <sstream>

#include "ir/FileRead.h"

namespace tl {

SourceFile::SourceFile(std::string path, std::string text)
    : path_(std::move(path)), text_(std::move(text)) {
  lineStarts_.push_back(0);
  for (size_t i = 0; i < text_.size(); ++i)
    if (text_[i] == '\n' && i + 1 < text_.size()) lineStarts_.push_back(i + 1);
}

// Through the bounded reader (ir/FileRead.h): a regular file of at most the kernel source limit
// (4 MiB); anything else throws FileReadError, a std::runtime_error naming the file and why.
std::shared_ptr<SourceFile> SourceFile::load(const std::string& path) {
  return std::make_shared<SourceFile>(path, readFileBounded(path, FileKind::KernelSource));
}

std::string_view SourceFile::line(int line) const {
  if (line < 1 || line > numLines()) return {};
  size_t begin = lineStarts_[line - 1];
  size_t end = text_.find('\n', begin);
  if (end == std::string::npos) end = text_.size();
  std::string_view v(text_.data() + begin, end - begin);
  if (!v.empty() && v.back() == '\r') v.remove_suffix(1);
  return v;
}

static const char* severityName(Severity s) {
  switch (s) {
    case Severity::Error: return "error";
    case Severity::Warning: return "warning";
    case Severity::Note: return "note";
  }
  return "error";
}

std::string renderDiagnostic(const SourceFile* file, Severity sev, Loc loc,
                             std::string_view message) {
  std::ostringstream os;
  os << (file ? file->path() : std::string("<input>"));
  if (loc.known()) os << ':' << loc.line << ':' << loc.col;
  os << ": " << severityName(sev) << ": " << message << '\n';
  if (file && loc.known()) {
    std::string_view text = file->line(static_cast<int>(loc.line));
    os << "    " << text << '\n' << "    ";
    // Keep tabs so the caret lines up under tab-indented source.
    for (uint32_t i = 1; i < loc.col && i <= text.size(); ++i) os << (text[i - 1] == '\t' ? '\t' : ' ');
    os << "^\n";
  }
  return os.str();
}

void DiagEngine::error(Loc loc, std::string message) {
  if (numErrors_ >= kMaxErrors) return;
  diags_.push_back({Severity::Error, loc, std::move(message)});
  ++numErrors_;
}

void DiagEngine::warning(Loc loc, std::string message) {
  diags_.push_back({Severity::Warning, loc, std::move(message)});
}

void DiagEngine::note(Loc loc, std::string message) {
  diags_.push_back({Severity::Note, loc, std::move(message)});
}

std::string DiagEngine::render(const Diagnostic& d) const {
  return renderDiagnostic(file_.get(), d.severity, d.loc, d.message);
}

std::string DiagEngine::renderAll() const {
  std::string out;
  for (const auto& d : diags_) out += render(d);
  if (numErrors_ >= kMaxErrors) out += "too many errors; stopping\n";
  return out;
}

void DiagEngine::print(std::ostream& os) const { os << renderAll(); }

}  // namespace tl
