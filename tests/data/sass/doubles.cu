// Addresses computed through double-precision arithmetic (analyzer/address_origin.py, tests/analyzer/
// test_address_origin.py): DADD with a register, an immediate and a uniform register as its second operand, and
// F2I.F64 turning the sums into indices. Built with
//   nvcc -cubin -lineinfo -O3 -arch=sm_90 -o doubles.sm_90.cubin doubles.cu   (nvcc 13.0)
// and listed with nvdisasm -c doubles.sm_90.cubin > doubles.sm_90.sass (nvdisasm 13.5).

// A lookup at indices that sums of loaded doubles give (a histogram of binned measurements' shape).
__global__ void double_lookup(const double* x, const double* y, const float* table, float* out, double shift) {
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  double sum = x[i] + y[i];
  double moved = x[i] + 3.5;
  double shifted = sum + shift;
  out[i] = table[static_cast<int>(sum)] + table[static_cast<int>(moved)] + table[static_cast<int>(shifted)];
}
