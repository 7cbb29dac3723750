// Kernels launched through CUDA graphs as well as directly (tests/collector/test_gpu_graphs.py; docs/collector.md,
// "CUDA graphs"): the collector lists each kernel node of each graph launch as a launch and does not instrument it;
// the app's results must stay right and its direct launches keep their records.
//   graphs [direct|capture|manual|interleaved|all]
//     direct: the two kernels launched directly; capture: captured into a graph, launched twice; manual: a graph
//     built node by node, launched once; interleaved: a graph instantiated before any direct launch, then a direct
//     round, the graph, a direct round (a module patched at the first direct launch, after the graph's
//     instantiation, would leave the graph's kernels on an illegal instruction); all: direct, capture, manual.
// Prints "graphs: ok" when every result is right, else the first wrong element, exit status 1.
#include <cstdio>
#include <cstring>
#include <vector>

#include <cuda_runtime.h>

#define CHECK(call)                                                                              \
  do {                                                                                           \
    cudaError_t e = (call);                                                                      \
    if (e != cudaSuccess) {                                                                      \
      std::fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call, cudaGetErrorString(e)); \
      return 1;                                                                                  \
    }                                                                                            \
  } while (0)

constexpr int kN = 8192;  // 256 warps: scale writes 2 records a warp, accumulate 3 (and each block its exits)
constexpr int kThreads = 256;

__global__ void scale(const float* in, float* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = 2.0f * in[i];
}

__global__ void accumulate(const float* a, float* b, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) b[i] += a[i];
}

// One round: out = 2 in; out += in  =>  out = 3 in.
static void round_direct(const float* in, float* out, cudaStream_t s) {
  scale<<<kN / kThreads, kThreads, 0, s>>>(in, out, kN);
  accumulate<<<kN / kThreads, kThreads, 0, s>>>(in, out, kN);
}

static int check(const float* d_out, const std::vector<float>& in, const char* what) {
  std::vector<float> out(kN);
  CHECK(cudaMemcpy(out.data(), d_out, kN * sizeof(float), cudaMemcpyDeviceToHost));
  for (int i = 0; i < kN; ++i) {
    if (out[i] != 3.0f * in[i]) {
      std::printf("graphs: %s: element %d is %g, expected %g\n", what, i, out[i], 3.0f * in[i]);
      return 1;
    }
  }
  return 0;
}

int main(int argc, char** argv) {
  const char* mode = argc > 1 ? argv[1] : "all";
  const bool all = std::strcmp(mode, "all") == 0;
  std::vector<float> in(kN);
  for (int i = 0; i < kN; ++i) in[i] = float(i % 97);
  float *d_in, *d_out;
  CHECK(cudaMalloc(&d_in, kN * sizeof(float)));
  CHECK(cudaMalloc(&d_out, kN * sizeof(float)));
  CHECK(cudaMemcpy(d_in, in.data(), kN * sizeof(float), cudaMemcpyHostToDevice));
  cudaStream_t s;
  CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));

  if (all || std::strcmp(mode, "direct") == 0) {
    round_direct(d_in, d_out, s);
    CHECK(cudaStreamSynchronize(s));
    if (check(d_out, in, "direct")) return 1;
  }
  if (all || std::strcmp(mode, "capture") == 0) {
    cudaGraph_t graph;
    cudaGraphExec_t exec;
    CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
    round_direct(d_in, d_out, s);
    CHECK(cudaStreamEndCapture(s, &graph));
    CHECK(cudaGraphInstantiate(&exec, graph, 0));
    for (int k = 0; k < 2; ++k) {
      CHECK(cudaMemsetAsync(d_out, 0, kN * sizeof(float), s));
      CHECK(cudaGraphLaunch(exec, s));
      CHECK(cudaStreamSynchronize(s));
      if (check(d_out, in, "captured graph")) return 1;
    }
    CHECK(cudaGraphExecDestroy(exec));
    CHECK(cudaGraphDestroy(graph));
  }
  if (std::strcmp(mode, "interleaved") == 0) {
    cudaGraph_t graph;
    cudaGraphExec_t exec;
    CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
    round_direct(d_in, d_out, s);
    CHECK(cudaStreamEndCapture(s, &graph));
    CHECK(cudaGraphInstantiate(&exec, graph, 0));
    for (int k = 0; k < 3; ++k) {  // direct, the graph, direct
      CHECK(cudaMemsetAsync(d_out, 0, kN * sizeof(float), s));
      if (k == 1) {
        CHECK(cudaGraphLaunch(exec, s));
      } else {
        round_direct(d_in, d_out, s);
      }
      CHECK(cudaStreamSynchronize(s));
      if (check(d_out, in, k == 1 ? "graph between direct launches" : "direct launches around a graph")) return 1;
    }
    CHECK(cudaGraphExecDestroy(exec));
    CHECK(cudaGraphDestroy(graph));
  }
  if (all || std::strcmp(mode, "manual") == 0) {
    cudaGraph_t graph;
    cudaGraphExec_t exec;
    CHECK(cudaGraphCreate(&graph, 0));
    int n = kN;
    const float* cin = d_in;
    void* scale_args[] = {&cin, &d_out, &n};
    void* accumulate_args[] = {&cin, &d_out, &n};
    cudaKernelNodeParams p = {};
    p.gridDim = dim3(kN / kThreads);
    p.blockDim = dim3(kThreads);
    p.func = reinterpret_cast<void*>(scale);
    p.kernelParams = scale_args;
    cudaGraphNode_t first, second;
    CHECK(cudaGraphAddKernelNode(&first, graph, nullptr, 0, &p));
    p.func = reinterpret_cast<void*>(accumulate);
    p.kernelParams = accumulate_args;
    CHECK(cudaGraphAddKernelNode(&second, graph, &first, 1, &p));
    CHECK(cudaGraphInstantiate(&exec, graph, 0));
    CHECK(cudaMemsetAsync(d_out, 0, kN * sizeof(float), s));
    CHECK(cudaGraphLaunch(exec, s));
    CHECK(cudaStreamSynchronize(s));
    if (check(d_out, in, "manual graph")) return 1;
    CHECK(cudaGraphExecDestroy(exec));
    CHECK(cudaGraphDestroy(graph));
  }
  CHECK(cudaStreamDestroy(s));
  CHECK(cudaFree(d_in));
  CHECK(cudaFree(d_out));
  std::printf("graphs: ok\n");
  return 0;
}
