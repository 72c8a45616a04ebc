// tl-grade: grades a submission (or a folder of them, a class) against a lab, without a GPU.
//
//   tl-grade labs/01-coalescing my_transpose.tl                 # one submission, its report
//   tl-grade labs/01-coalescing my.tl --json r.json --junit r.xml
//   tl-grade labs/01-coalescing submissions/ --csv class.csv     # every *.tl below it, in parallel
//   tl-grade labs/01-coalescing --check-lab                      # the lab's own files, as CI checks them
//
// Exit status: one submission: 0 when every check passes, 1 when one fails; a folder: 0 when
// every submission was graded (their results are in the files); --check-lab: 0 when every file
// does what it says; 2 for a usage error or when the grader itself fails (the lab's spec or
// reference is broken, a file cannot be written, a grading process died).
#include <CLI/CLI.hpp>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <random>
#include <thread>

#include "grader/Grader.h"
#include "runtime/Budget.h"
#include "runtime/Hash.h"

namespace fs = std::filesystem;
using namespace tl::grade;

namespace {

bool writeFile(const std::string& path, const std::string& text) {
  std::ofstream f(path);
  if (!(f << text)) {
    std::cerr << "tl-grade: error: cannot write '" << path << "'\n";
    return false;
  }
  return true;
}

// Quotes a CSV field when it needs it.
std::string csv(const std::string& s) {
  if (s.find_first_of(",\"\n") == std::string::npos) return s;
  std::string o = "\"";
  for (char c : s) o += c == '"' ? std::string("\"\"") : std::string(1, c);
  return o + "\"";
}

// "[##########..........]  150/300" on stderr, redrawn in place (only on a terminal).
void progress(size_t done, size_t total) {
  static const bool tty = isatty(STDERR_FILENO);
  if (!tty) return;
  const int width = 30;
  int filled = total ? int(width * done / total) : width;
  std::cerr << "\r  [" << std::string(size_t(filled), '#') << std::string(size_t(width - filled), '.') << "] "
            << done << "/" << total << std::flush;
  if (done == total) std::cerr << "\n";
}

std::string dumpJson(const nlohmann::ordered_json& j) {
  // Invalid UTF-8 in a submission's text (echoed in an error) must not stop the report.
  return j.dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace) + "\n";
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"tl-grade: grade .tl submissions against a lab (labs/NN-name), on the simulator: no GPU needed"};
  app.set_version_flag("--version", tl::releaseVersion());
  std::string labDir, target, jsonFile, junitFile, csvFile;
  uint64_t seed = 0;
  unsigned jobs = std::max(1u, std::thread::hardware_concurrency());
  bool quiet = false, checkLabFiles = false;
  GradeLimits limits;
  double memoryMiB = double(limits.memoryBytes >> 20);
  app.add_option("lab", labDir, "The lab folder (holds lab.json)")->required()->check(CLI::ExistingDirectory);
  app.add_option("submission", target, "A submission .tl file, or a folder of them (a class; searched recursively)")
      ->check(CLI::ExistingPath);
  app.add_flag("--check-lab", checkLabFiles,
               "Grade the lab's own files: the solution must pass, the starter and each wrong/*.tl must fail what "
               "its first line names (# expect-fail: id)");
  app.add_option("--json", jsonFile, "Write the results as JSON (a list for a folder)")->type_name("FILE");
  app.add_option("--junit", junitFile, "Write the checks as a JUnit XML test suite")->type_name("FILE");
  app.add_option("--csv", csvFile, "Write one row per submission (a class summary)")->type_name("FILE");
  app.add_option("--seed", seed, "Seed the inputs with this (default: a fresh one, printed with the results)")
      ->check(CLI::Range(uint64_t(1), uint64_t(1) << 62));
  app.add_option("--jobs", jobs, "Submissions graded at once (default: every core)")->check(CLI::Range(1u, 256u));
  app.add_option("--timeout", limits.seconds, "Seconds one submission may take (0: no limit)")
      ->check(CLI::Range(0.0, 86400.0))
      ->capture_default_str();
  app.add_option("--memory-limit", memoryMiB, "MiB of address space one submission may use (0: no limit)")
      ->check(CLI::Range(0.0, 1048576.0))
      ->capture_default_str();
  app.add_flag("-q,--quiet", quiet, "Only the score lines");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;  // --help and --version are 0; every usage error is 2
  }
  limits.memoryBytes = uint64_t(memoryMiB) << 20;
  tl::workLimits().progress = false;  // the grader prints its own progress; --timeout bounds a submission
  if (target.empty() && !checkLabFiles) {
    std::cerr << "tl-grade: error: give a submission (a .tl file or a folder of them), or --check-lab\n";
    return 2;
  }

  LabSpec spec;
  try {
    spec = loadLabSpec(labDir);
  } catch (const SpecError& e) {
    std::cerr << "tl-grade: error: " << e.what() << "\n";
    return 2;
  }
  if (seed == 0) seed = (uint64_t(std::random_device{}()) << 20 | std::random_device{}()) % (uint64_t(1) << 62) + 1;

  ReferenceRuns reference;
  try {
    reference = runReference(spec, seed);
  } catch (const std::exception& e) {
    std::cerr << "tl-grade: error: " << e.what() << "\n";
    return 2;
  }

  if (checkLabFiles) {
    bool all = true;
    for (const LabFileVerdict& v : checkLab(spec, reference)) {
      std::cout << "  " << v.line << "\n";
      all = all && v.ok;
    }
    std::cout << "tl-grade: " << spec.title << ": " << (all ? "every file does what it says" : "some files do not")
              << " (seed " << seed << ")\n";
    return all ? 0 : 2;
  }

  std::vector<std::string> files;
  const bool folder = fs::is_directory(target);
  if (folder) {  // one folder per student is common: every *.tl below it
    for (const auto& e : fs::recursive_directory_iterator(target, fs::directory_options::skip_permission_denied))
      if (e.is_regular_file() && e.path().extension() == ".tl") files.push_back(e.path().string());
    std::sort(files.begin(), files.end());
    if (files.empty()) {
      std::cerr << "tl-grade: error: no .tl files in " << target << "\n";
      return 2;
    }
  } else {
    files.push_back(target);
  }

  auto start = std::chrono::steady_clock::now();
  std::vector<GradeResult> results;
  try {
    results = gradeClass(spec, files, reference, folder ? jobs : 1, limits, folder ? progress : nullptr);
  } catch (const std::exception& e) {
    std::cerr << "tl-grade: error: " << e.what() << "\n";
    return 2;
  }
  if (!folder) {
    if (quiet) std::cout << files[0] << ": " << results[0].score << " / " << results[0].maxScore << "\n";
    else std::cout << formatResult(results[0], spec);
  } else {
    double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    size_t passing = 0, broken = 0;
    for (const auto& r : results) {
      passing += r.allPass();
      broken += !r.infrastructureError.empty();
      if (!quiet)
        std::cout << "  " << std::left << std::setw(40) << r.submission << std::right << std::fixed
                  << std::setprecision(1) << std::setw(6) << r.score << " / " << r.maxScore
                  << (!r.infrastructureError.empty() ? "  ERROR: " + r.infrastructureError
                      : r.allPass()                  ? "  all checks pass"
                                                     : "")
                  << "\n";
    }
    std::cout << "tl-grade: " << files.size() << " submissions in " << std::fixed << std::setprecision(1) << seconds
              << " s (" << jobs << " jobs, seed " << seed << "): " << passing << " pass every check";
    if (broken) std::cout << ", " << broken << " could not be graded";
    std::cout << "\n";
  }

  bool ok = true;
  if (!jsonFile.empty()) {
    nlohmann::ordered_json j;
    if (folder) {
      j = nlohmann::ordered_json::array();
      for (const auto& r : results) j.push_back(toJson(r));
    } else {
      j = toJson(results[0]);
    }
    ok &= writeFile(jsonFile, dumpJson(j));
  }
  if (!junitFile.empty()) ok &= writeFile(junitFile, toJUnit(results, spec.title));
  if (!csvFile.empty()) {
    std::ostringstream os;
    os << "submission,source_sha256,score,max_score,pass,seconds";
    for (const auto& c : spec.checks) os << "," << csv(c.id);
    os << ",performance" << (spec.cpuPerformance.enabled ? ",cpu_performance" : "") << ",error\n";
    for (const auto& r : results) {
      os << csv(r.submission) << "," << r.sourceSha256 << "," << r.score << "," << r.maxScore << ","
         << (r.allPass() ? 1 : 0) << "," << r.seconds;
      for (const auto& c : spec.checks) {
        auto it = std::find_if(r.checks.begin(), r.checks.end(), [&](const CheckOutcome& o) { return o.id == c.id; });
        os << "," << (it != r.checks.end() && it->pass ? "pass" : "fail");
      }
      os << "," << r.performance.earned;
      if (spec.cpuPerformance.enabled) os << "," << r.cpuPerformance.earned;
      os << "," << csv(r.infrastructureError) << "\n";
    }
    ok &= writeFile(csvFile, os.str());
  }
  if (!ok) return 2;
  for (const auto& r : results)
    if (!r.infrastructureError.empty()) {
      std::cerr << "tl-grade: error: " << r.submission << ": " << r.infrastructureError << "\n";
      return 2;
    }
  if (folder) return 0;
  return results[0].allPass() ? 0 : 1;
}
