// A tool library that subscribes to the Sanitizer as the collector does and does nothing in its callbacks, so that
// benchmarks/teardown.py's passive mode (--library this .so) can tell what the Sanitizer's subscription costs an
// app by itself from what the collector's own callbacks cost (the `attach` mode: the collector subscribed, a
// kernel filter no kernel matches).
//
// RL_PROBE_DOMAINS (plus-separated): which of the collector's subscriptions to take (tool.cpp, launch_api.cpp):
// resource, launch, memcpy, memset (callback domains), api (the eight launch API callbacks), all (every one);
// "none" subscribes with nothing enabled; unset: no subscription at all (the library loaded, as passive).
//
//   bash benchmarks/subscribe_probe/build.sh OUT_DIR   # prints the library's path
#include <sanitizer.h>

#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <string>
#include <vector>

#include "launch_api.h"  // the collector's own list of launch API callbacks (collector/native/src)

namespace {

bool wanted(const std::string& list, const char* name) {
  const std::string padded = "+" + list + "+";
  return list == "all" || padded.find(std::string("+") + name + "+") != std::string::npos;
}

void subscribe_as_asked() {
  const char* env = std::getenv("RL_PROBE_DOMAINS");
  if (env == nullptr) return;
  const std::string list(env);
  Sanitizer_SubscriberHandle sub = nullptr;
  // A failure is said on stderr: a probe that quietly subscribed to nothing would measure the bare app.
  const SanitizerResult r =
      sanitizerSubscribe(&sub, [](void*, Sanitizer_CallbackDomain, Sanitizer_CallbackId, const void*) {}, nullptr);
  if (r != SANITIZER_SUCCESS) {
    std::fprintf(stderr, "subscribe_probe: sanitizerSubscribe failed (%d)\n", (int)r);
    return;
  }
  const struct {
    const char* name;
    Sanitizer_CallbackDomain domain;
  } domains[] = {{"resource", SANITIZER_CB_DOMAIN_RESOURCE},
                 {"launch", SANITIZER_CB_DOMAIN_LAUNCH},
                 {"memcpy", SANITIZER_CB_DOMAIN_MEMCPY},
                 {"memset", SANITIZER_CB_DOMAIN_MEMSET}};
  for (const auto& d : domains) {
    if (wanted(list, d.name) && sanitizerEnableDomain(1, sub, d.domain) != SANITIZER_SUCCESS)
      std::fprintf(stderr, "subscribe_probe: sanitizerEnableDomain(%s) failed\n", d.name);
  }
  if (wanted(list, "api")) {
    std::vector<std::string> errors;
    rlc::enable_launch_api_callbacks(sub, &errors);
    for (const std::string& e : errors) std::fprintf(stderr, "subscribe_probe: %s\n", e.c_str());
  }
  std::fprintf(stderr, "subscribe_probe: subscribed (%s)\n", list.c_str());
}

std::once_flag g_once;

}  // namespace

extern "C" __attribute__((visibility("default"))) int InitializeInjection(void) {
  std::call_once(g_once, subscribe_as_asked);
  return 1;
}

namespace {
__attribute__((constructor)) void probe_ctor() { InitializeInjection(); }
}  // namespace
