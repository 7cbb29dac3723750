// Second translation unit for -rdc builds: its own inlined helper and an external device function.
#include "helpers.cuh"

__device__ float ext_scale(float x) { return poly(x, 2) * 3.0f; }

__global__ void other_kernel(float *p, int n)
{
    int i = threadIdx.x;
    if (i < n)
        p[i] = poly(p[i], 4) + sq(p[i]);
}
