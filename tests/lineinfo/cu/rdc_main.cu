// Host side of the -rdc test program: launches kernels from both translation units so nvlink keeps them.
__global__ void kernB(float *out, const float *in, int n);
__global__ void ext_kernel(float *p);
__global__ void other_kernel(float *p, int n);

int main()
{
    float *d = nullptr;
    if (cudaMalloc(&d, 1024 * sizeof(float)) != cudaSuccess)
        return 1;
    kernB<<<4, 256>>>(d, d, 1024);
    ext_kernel<<<1, 256>>>(d);
    other_kernel<<<1, 256>>>(d, 256);
    cudaDeviceSynchronize();
    cudaFree(d);
    return 0;
}
