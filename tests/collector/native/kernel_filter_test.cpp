// Checks KernelFilter (collector/native/src/kernel_filter.cpp) without a GPU.
//   kernel_filter_test          ordinary filters select the kernels they did with std::regex, and names of
//                               30,000+ characters are matched on a thread with a small stack (std::regex's
//                               recursion overflowed it); prints "ok" and exits 0, or names the failed check.
//   kernel_filter_test check P  for each pattern P, "ok" when the collector accepts it as a kernel filter, else
//                               "error: <reason>" (tests/collector/test_kernel_filter.py compares these with
//                               the launcher's check).
// Built and run by tests/collector/test_kernel_filter.py.
#include <pthread.h>

#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "expect.h"
#include "kernel_filter.h"

namespace {

const char* kGemm = "_Z11gemm_kernelPfS_S_i";       // gemm_kernel(float*, float*, float*, int)
const char* kSoftmax = "_Z14softmax_kernelPKfPfi";  // softmax_kernel(float const*, float*, int)
const char* kVecadd = "_Z6vecaddPfS_S_";            // vecadd(float*, float*, float*)
const char* kPlain = "plain_kernel";                // extern "C"

// The names among `launched` that a fresh filter with `regex` (and launch range [first, end)) selects.
std::vector<std::string> selected(const std::string& regex, const std::vector<std::string>& launched,
                                  uint64_t first = 0, uint64_t end = UINT64_MAX) {
  rlc::Config config;
  config.regex_text = regex;
  config.range_first = first;
  config.range_end = end;
  rlc::KernelFilter filter;
  std::vector<std::string> errors;
  filter.load(config, &errors);
  std::vector<std::string> out;
  if (!errors.empty()) out.push_back("error: " + errors.front());
  for (const auto& name : launched)
    if (filter.select(name)) out.push_back(name);
  return out;
}

using Names = std::vector<std::string>;

int ordinary_filters() {
  Names all = {kGemm, kSoftmax, kVecadd, kPlain};
  EXPECT(selected("gemm", all) == Names({kGemm}));
  EXPECT(selected("^softmax", all) == Names({kSoftmax}));  // the demangled name starts with it
  EXPECT(selected("softmax|vecadd", all) == Names({kSoftmax, kVecadd}));
  EXPECT(selected(".*kernel.*", all) == Names({kGemm, kSoftmax, kPlain}));
  EXPECT(selected("^_Z6vecadd", all) == Names({kVecadd}));  // the mangled name
  EXPECT(selected("gemm_kernel\\(float\\*", all) == Names({kGemm}));
  EXPECT(selected("[0-9]+gemm", all) == Names({kGemm}));
  EXPECT(selected("^plain_kernel$", all) == Names({kPlain}));
  EXPECT(selected("nothing_like_this", all).empty());
  // The launch range counts the launches that pass the name filter; a repeated name is counted each time.
  EXPECT(selected("kernel", {kGemm, kVecadd, kSoftmax, kGemm, kPlain}, 1, 3) == Names({kSoftmax, kGemm}));
  return 0;
}

// A graph's instantiation asks matches_name of every loaded function ahead of any launch (the tool keeps the
// answers per function id): the answers are the name filter's, and asking counts no launch of the launch range.
int names_asked_ahead() {
  rlc::Config config;
  config.regex_text = "gemm|softmax";
  config.range_first = 1;
  rlc::KernelFilter filter;
  std::vector<std::string> errors;
  filter.load(config, &errors);
  EXPECT(errors.empty());
  for (int round = 0; round < 2; ++round) {  // asking again changes nothing
    EXPECT(filter.matches_name(kGemm));
    EXPECT(filter.matches_name(kSoftmax));
    EXPECT(!filter.matches_name(kVecadd));
    EXPECT(!filter.matches_name(kPlain));
  }
  EXPECT(!filter.select(kGemm));  // the first passing launch, outside [1, end)
  EXPECT(!filter.select(kVecadd));
  EXPECT(filter.select(kSoftmax));
  EXPECT(filter.select(kGemm));
  return 0;
}

// A mangled template name of about 36,000 characters: `head`<cutlass::shape<0>, ..., cutlass::shape<1499>>().
std::string long_mangled(const std::string& head) {
  std::string name = "_Z" + std::to_string(head.size()) + head + "IJ";
  for (int i = 0; i < 1500; ++i) name += "N7cutlass5shapeILi" + std::to_string(i) + "EEE";
  return name + "EEvv";
}

struct LongNameResult {
  int failed = 1;
};

void* long_names(void* out) {
  auto* result = static_cast<LongNameResult*>(out);
  std::string with_gemm = long_mangled("gemm"), without = long_mangled("copy");
  std::string plain(40000, 'k');
  plain += "_gemm";
  result->failed = 0;
  if (with_gemm.size() < 30000) result->failed = __LINE__;
  if (selected(".*gemm.*", {with_gemm, without, plain}) != Names({with_gemm, plain})) result->failed = __LINE__;
  if (selected("^_Z4gemm.*Li1499EEEEEvv$", {with_gemm, without}) != Names({with_gemm})) result->failed = __LINE__;
  if (selected("copyIJ(N7cutlass5shapeILi[0-9]+EEE)+EEvv$", {with_gemm, without}) != Names({without}))
    result->failed = __LINE__;
  return nullptr;
}

int long_names_on_a_small_stack() {
  // Matching must not need stack in proportion to the name: 512 KiB is far less than what std::regex's
  // recursion took for one 30,000-character name.
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  pthread_attr_setstacksize(&attr, 512 * 1024);
  LongNameResult result;
  pthread_t thread;
  EXPECT(pthread_create(&thread, &attr, long_names, &result) == 0);
  pthread_join(thread, nullptr);
  pthread_attr_destroy(&attr);
  if (result.failed != 0) std::printf("failed: long names (line %d)\n", result.failed);
  return result.failed != 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc >= 2 && std::strcmp(argv[1], "check") == 0) {
    for (int i = 2; i < argc; ++i) {
      auto result = selected(argv[i], {});
      std::printf("%s\n", result.empty() ? "ok" : result.front().c_str());
    }
    return 0;
  }
  if (ordinary_filters() != 0 || names_asked_ahead() != 0 || long_names_on_a_small_stack() != 0) return 1;
  std::printf("ok\n");
  return 0;
}
