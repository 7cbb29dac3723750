import torch
x = torch.randn(512, 512, device="cuda")
y = x @ x                      # cuBLAS GEMM (closed-source kernel, no line info)
z = torch.relu(y).sum()        # PyTorch elementwise + reduction kernels
w = torch.nn.functional.softmax(y, dim=1).max()
torch.cuda.synchronize()
print("torch ok", float(z), float(w))
