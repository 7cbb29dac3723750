// Kernels for the source-mapping tests: loops, force-inlined chains (combine -> sq -> poly across a header),
// a __noinline__ callee (cloned by ptxas as $kernel$callee), a template with two instantiations using shared
// memory, an extern "C" kernel and CUDA math that is attributed to the calling line.
#include "helpers.cuh"

__device__ __forceinline__ float combine(float a, float b)
{
    return sq(a) + poly(b, 3);
}

__device__ __noinline__ float slowfn(float x)
{
    return sinf(x) * cosf(x) + sqrtf(fabsf(x));
}

__device__ float ext_scale(float x);  // defined in other.cu (only linked with -rdc)

__global__ void loop_kernel(float *out, const float *in, int n)
{
    float acc = 0.0f;
    for (int i = threadIdx.x; i < n; i += blockDim.x)
        acc += in[i] * 2.0f;
    out[threadIdx.x] = acc;
}

__global__ void kernA(float *out, const float *in, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        out[i] = combine(in[i], in[n - 1 - i]);
}

__global__ void kernB(float *out, const float *in, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        out[i] = combine(in[i], 1.5f) * sinf(in[i]);
}

__global__ void call_kernel(float *out, const float *in, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        out[i] = slowfn(in[i]) + slowfn(in[i] * 0.5f);
}

template <typename T, int BLOCK>
__global__ void tmpl_kernel(T *out, const T *in, int n)
{
    __shared__ T tile[BLOCK];
    int i = blockIdx.x * BLOCK + threadIdx.x;
    tile[threadIdx.x] = i < n ? in[i] : T(0);
    __syncthreads();
    T v = tile[(threadIdx.x + 1) % BLOCK];
    if (i < n)
        out[i] = v * v;
}

template __global__ void tmpl_kernel<float, 256>(float *, const float *, int);
template __global__ void tmpl_kernel<double, 128>(double *, const double *, int);

namespace {
__global__ void anon_kernel(int *p) { p[threadIdx.x] += 1; }
}
void *anon_kernel_ptr() { return (void *)anon_kernel; }

extern "C" __global__ void c_kernel(float *p, int n)
{
    for (int i = threadIdx.x; i < n; i += 32)
        p[i] = poly(p[i], 2);
}

#ifdef WITH_EXTERNAL
__global__ void ext_kernel(float *p)
{
    p[threadIdx.x] = ext_scale(p[threadIdx.x]);
}
#endif
