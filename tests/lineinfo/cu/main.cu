// Host program: gives an executable whose .nv_fatbin holds the kernels (fatbinary extraction tests).
#include <cstdio>
__global__ void app_kernel(float *p, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        p[i] = p[i] * p[i] + 1.0f;
}

int main()
{
    float *d = nullptr;
    if (cudaMalloc(&d, 256 * sizeof(float)) != cudaSuccess)
        return 1;
    app_kernel<<<1, 256>>>(d, 256);
    cudaDeviceSynchronize();
    cudaFree(d);
    return 0;
}
