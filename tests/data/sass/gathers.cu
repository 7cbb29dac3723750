// Addresses computed from loaded values (analyzer/address_origin.py, tests/analyzer/test_address_origin.py): each
// kernel's uncoalesced accesses are gathers or scatters whose address register the SASS computes from an earlier
// load, an atomic or a shuffle of a loaded value, next to accesses whose addresses come from the thread's indices
// alone. Built with
//   nvcc -cubin -lineinfo -O3 -arch=sm_90 -o gathers.sm_90.cubin gathers.cu   (nvcc 13.0)
// and listed with nvdisasm -c gathers.sm_90.cubin > gathers.sm_90.sass (CUDA 13.0).

// A breadth-first step over a CSR graph (SHOC BFS's shape): the frontier's vertex, its edge range, its neighbours.
__global__ void csr_step(const unsigned* frontier, const unsigned* row, const unsigned* col, unsigned* cost,
                         unsigned* out, unsigned frontier_len) {
  unsigned tid = blockIdx.x * blockDim.x + threadIdx.x;
  if (tid >= frontier_len) return;
  unsigned node = frontier[tid];
  unsigned begin = row[node], end = row[node + 1];
  for (unsigned j = begin; j < end; ++j) {
    unsigned next = col[j];
    atomicMin(&cost[next], cost[node] + 1);
  }
  out[tid * 33] = begin;  // strided by the thread's index only
}

// A pointer read from a table indexed by the block: every lane reads the same entry, so the base is warp-uniform.
__global__ void table_of_rows(const float* const* rows, float* out) {
  const float* base = rows[blockIdx.x];
  out[threadIdx.x * 32] = base[threadIdx.x * 32];
}

// A lookup whose index is computed from a loaded float (a Monte-Carlo table lookup's shape).
__global__ void float_lookup(const float* x, const float* table, float* out, float scale) {
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  int k = static_cast<int>(x[i] * scale);
  out[i] = table[k];
}

// A scatter into the slot an atomic returned.
__global__ void atomic_slots(const float* in, float* out, int* count) {
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  int slot = atomicAdd(count, 1);
  out[slot] = in[i];
}

// An index staged in shared memory, then used by another lane, and one exchanged through a shuffle.
__global__ void shared_and_shuffled(const int* perm, const float* in, float* out) {
  __shared__ int index[256];
  index[threadIdx.x] = perm[blockIdx.x * 256 + threadIdx.x];
  __syncthreads();
  int k = index[255 - threadIdx.x];
  out[blockIdx.x * 256 + threadIdx.x] = in[k * 7];
  int swapped = __shfl_xor_sync(0xffffffffu, k, 1);
  out[swapped * 5 + 3] = 1.0f;
}

// Slots claimed from a shared counter by the lanes that pass a test, then a scatter into them.
__global__ void shared_slots(const float* in, float* out) {
  __shared__ int claimed;
  if (threadIdx.x == 0) claimed = 0;
  __syncthreads();
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  float value = in[i];
  if (value > 0.5f) {
    int slot = atomicAdd(&claimed, 1);
    out[blockIdx.x * blockDim.x + slot * 3] = value;
  }
}

// A table staged in shared memory and read at a loaded key (a lookup), next to a read at the thread's index.
__global__ void shared_lookup(const int* keys, const float* table, float* out) {
  __shared__ float staged[1024];
  for (int j = threadIdx.x; j < 1024; j += blockDim.x) staged[j] = table[j];
  __syncthreads();
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  int k = keys[i];
  out[i] = staged[k & 1023] + staged[(threadIdx.x * 32) & 1023];
}

// A binary search through a sorted array in shared memory, then a scatter to the rank found: the loaded values pick
// the rank through comparisons only (predicates), not through arithmetic.
__global__ void rank_in_sorted(const unsigned* sorted, const unsigned* keys, unsigned* out) {
  __shared__ unsigned staged[256];
  staged[threadIdx.x] = sorted[threadIdx.x];
  __syncthreads();
  unsigned key = keys[blockIdx.x * blockDim.x + threadIdx.x], rank = 0;
  for (unsigned stride = 128; stride > 0; stride >>= 1)
    if (staged[rank + stride - 1] < key) rank += stride;
  out[rank * 32 + blockIdx.x] = key;
}
