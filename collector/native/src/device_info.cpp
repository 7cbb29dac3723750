#include "device_info.h"

#include <dlfcn.h>

#include <fstream>
#include <regex>

namespace rlc {

void query_device(CUdevice dev, std::string* name_out, std::string* arch_out, uint64_t* l2_bytes_out) {
  void* h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
  if (!h) h = dlopen("libcuda.so.1", RTLD_NOW);
  if (!h) return;
  using NameFn = CUresult (*)(char*, int, CUdevice);
  using AttrFn = CUresult (*)(int*, CUdevice_attribute, CUdevice);
  auto get_name = reinterpret_cast<NameFn>(dlsym(h, "cuDeviceGetName"));
  auto get_attr = reinterpret_cast<AttrFn>(dlsym(h, "cuDeviceGetAttribute"));
  char name[256] = {0};
  if (get_name && get_name(name, sizeof name, dev) == CUDA_SUCCESS) *name_out = name;
  int major = 0, minor = 0;
  if (get_attr && get_attr(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev) == CUDA_SUCCESS &&
      get_attr(&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev) == CUDA_SUCCESS)
    *arch_out = "sm_" + std::to_string(major * 10 + minor);
  int l2 = 0;
  if (get_attr && get_attr(&l2, CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE, dev) == CUDA_SUCCESS && l2 > 0)
    *l2_bytes_out = uint64_t(l2);
}

bool device_memory_info(uint64_t* free_bytes, uint64_t* total_bytes) {
  using InfoFn = CUresult (*)(size_t*, size_t*);
  static const InfoFn get_info = [] {
    void* h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
    return h ? reinterpret_cast<InfoFn>(dlsym(h, "cuMemGetInfo_v2")) : nullptr;
  }();
  size_t free_now = 0, total = 0;
  if (get_info == nullptr || get_info(&free_now, &total) != CUDA_SUCCESS) return false;
  *free_bytes = free_now;
  *total_bytes = total;
  return true;
}

std::string nvidia_driver_version() {
  std::ifstream v("/proc/driver/nvidia/version");
  std::string line;
  if (std::getline(v, line)) {
    std::smatch m;
    if (std::regex_search(line, m, std::regex("Kernel Module\\s+(?:for \\S+\\s+)?([0-9]+\\.[0-9.]+)")) ||
        std::regex_search(line, m, std::regex("([0-9]{3}\\.[0-9]+(?:\\.[0-9]+)?)")))
      return m[1];
  }
  return "";
}

}  // namespace rlc
