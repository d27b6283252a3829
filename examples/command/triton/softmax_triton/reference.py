# Reference for softmax_triton: plain PyTorch on the GPU.
# Documentation example: needs an NVIDIA GPU, torch and triton; never executed here.
import torch


def softmax(x: torch.Tensor) -> torch.Tensor:
    return torch.softmax(x, dim=1)
