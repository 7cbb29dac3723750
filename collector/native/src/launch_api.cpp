#include "launch_api.h"

#include <generated_cuda_meta.h>
#include <generated_cuda_runtime_api_meta.h>

namespace rlc {

namespace {

// Read from the launch API call's parameters (ENTER), used by the LAUNCH_BEGIN nested inside it, cleared at
// EXIT. -1 = unknown.
thread_local int64_t t_pending_smem = -1;

void read_runtime_launch(Sanitizer_CallbackId cbid, const void* p) {
  if (cbid == SANITIZER_CBID_RUNTIME_API_cudaLaunchKernel || cbid == SANITIZER_CBID_RUNTIME_API_cudaLaunchKernel_ptsz)
    t_pending_smem = (int64_t)static_cast<const cudaLaunchKernel_v7000_params*>(p)->sharedMem;
  else if (auto* c = static_cast<const cudaLaunchKernelExC_v11060_params*>(p)->config)
    t_pending_smem = (int64_t)c->dynamicSmemBytes;
}

void read_driver_launch(Sanitizer_CallbackId cbid, const void* p) {
  if (cbid == SANITIZER_CBID_DRIVER_API_cuLaunchKernel || cbid == SANITIZER_CBID_DRIVER_API_cuLaunchKernel_ptsz)
    t_pending_smem = static_cast<const cuLaunchKernel_params*>(p)->sharedMemBytes;
  else if (auto* c = static_cast<const cuLaunchKernelEx_params*>(p)->config)
    t_pending_smem = c->sharedMemBytes;
}

}  // namespace

void enable_launch_api_callbacks(Sanitizer_SubscriberHandle sub, std::vector<std::string>* errors) {
  struct Cb {
    Sanitizer_CallbackDomain d;
    uint32_t id;
  };
  const Cb api[] = {
      {SANITIZER_CB_DOMAIN_RUNTIME_API, SANITIZER_CBID_RUNTIME_API_cudaLaunchKernel},
      {SANITIZER_CB_DOMAIN_RUNTIME_API, SANITIZER_CBID_RUNTIME_API_cudaLaunchKernel_ptsz},
      {SANITIZER_CB_DOMAIN_RUNTIME_API, SANITIZER_CBID_RUNTIME_API_cudaLaunchKernelExC},
      {SANITIZER_CB_DOMAIN_RUNTIME_API, SANITIZER_CBID_RUNTIME_API_cudaLaunchKernelExC_ptsz},
      {SANITIZER_CB_DOMAIN_DRIVER_API, SANITIZER_CBID_DRIVER_API_cuLaunchKernel},
      {SANITIZER_CB_DOMAIN_DRIVER_API, SANITIZER_CBID_DRIVER_API_cuLaunchKernel_ptsz},
      {SANITIZER_CB_DOMAIN_DRIVER_API, SANITIZER_CBID_DRIVER_API_cuLaunchKernelEx},
      {SANITIZER_CB_DOMAIN_DRIVER_API, SANITIZER_CBID_DRIVER_API_cuLaunchKernelEx_ptsz},
  };
  for (const Cb& c : api) {
    SanitizerResult e = sanitizerEnableCallback(1, sub, c.d, (Sanitizer_CallbackId)c.id);
    if (e != SANITIZER_SUCCESS)
      errors->push_back("sanitizerEnableCallback(launch API " + std::to_string(c.id) + ") failed");
  }
}

void on_launch_api_call(Sanitizer_CallbackDomain domain, Sanitizer_CallbackId cbid, const Sanitizer_CallbackData* cd) {
  if (cd->callbackSite != SANITIZER_API_ENTER) {
    t_pending_smem = -1;
    return;
  }
  const void* p = cd->functionParams;
  if (p == nullptr) return;
  if (domain == SANITIZER_CB_DOMAIN_RUNTIME_API)
    read_runtime_launch(cbid, p);
  else
    read_driver_launch(cbid, p);
}

int64_t pending_dynamic_smem() { return t_pending_smem; }

}  // namespace rlc
