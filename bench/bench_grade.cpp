// tl-grade's speed on this machine (issue: under 5 s per submission per lab, 300 submissions in
// under 10 minutes). The lab's reference runs once, outside the timed loop, as tl-grade does for
// a class.
//
//   build/bench/bench_grade --benchmark_out=bench/results/grade.json --benchmark_out_format=json
//
// BM_GradeOne/<lab>/<file>: one submission (the solution, the starter, each wrong solution).
// BM_GradeClass/<lab>: 300 submissions — the lab's starter, solution and wrong solutions copied
// round-robin under 300 names — graded by gradeClass with every core, as `tl-grade LAB DIR/` does.
#include <benchmark/benchmark.h>

#include <filesystem>
#include <thread>

#include "grader/Grader.h"

namespace fs = std::filesystem;
using namespace tl::grade;

namespace {

std::vector<fs::path> labs() {
  std::vector<fs::path> out;
  for (const auto& e : fs::directory_iterator(fs::path(TL_SOURCE_DIR) / "labs"))
    if (fs::exists(e.path() / "lab.json")) out.push_back(e.path());
  std::sort(out.begin(), out.end());
  return out;
}

std::vector<fs::path> submissionsOf(const LabSpec& spec) {
  std::vector<fs::path> out{spec.reference};
  if (!spec.starter.empty()) out.push_back(spec.starter);
  for (const auto& e : fs::directory_iterator(spec.dir / "wrong"))
    if (e.path().extension() == ".tl") out.push_back(e.path());
  std::sort(out.begin() + 1, out.end());
  return out;
}

void gradeOne(benchmark::State& state, fs::path lab, fs::path file) {
  LabSpec spec = loadLabSpec(lab);
  ReferenceRuns ref = runReference(spec, 12345);
  for (auto _ : state) {
    GradeResult r = gradeSubmission(spec, file.string(), ref);
    benchmark::DoNotOptimize(r.score);
  }
}

void gradeClassOf(benchmark::State& state, fs::path lab) {
  LabSpec spec = loadLabSpec(lab);
  std::vector<fs::path> sources = submissionsOf(spec);
  fs::path dir = fs::temp_directory_path() / ("tl-bench-class-" + lab.filename().string());
  fs::remove_all(dir);
  fs::create_directories(dir);
  std::vector<std::string> files;
  for (int i = 0; i < 300; ++i) {
    fs::path f = dir / ("student" + std::to_string(1000 + i) + ".tl");
    fs::copy_file(sources[size_t(i) % sources.size()], f);
    files.push_back(f.string());
  }
  unsigned jobs = std::max(1u, std::thread::hardware_concurrency());
  for (auto _ : state) {
    ReferenceRuns ref = runReference(spec, 12345);  // part of grading a class
    std::vector<GradeResult> rs = gradeClass(spec, files, ref, jobs);
    benchmark::DoNotOptimize(rs.data());
  }
  state.counters["submissions"] = 300;
  state.counters["jobs"] = jobs;
  fs::remove_all(dir);
}

[[maybe_unused]] bool registered = [] {
  for (const fs::path& lab : labs()) {
    LabSpec spec = loadLabSpec(lab);
    for (const fs::path& f : submissionsOf(spec))
      benchmark::RegisterBenchmark(("BM_GradeOne/" + lab.filename().string() + "/" +
                                    (f == spec.reference ? std::string("solution") : f.stem().string()))
                                       .c_str(),
                                   gradeOne, lab, f)
          ->Unit(benchmark::kMillisecond)
          ->Iterations(3);
    benchmark::RegisterBenchmark(("BM_GradeClass/" + lab.filename().string()).c_str(), gradeClassOf, lab)
        ->Unit(benchmark::kSecond)
        ->Iterations(1)
        ->UseRealTime();
  }
  return true;
}();

}  // namespace

BENCHMARK_MAIN();
