# Seed for softmax_triton (Triton). Documentation example; never executed here.
# Knobs: Kestrel only recognises a declaration after "//" on a line, so in
# Python write it inside a comment, "# " and then the declaration, as below.
# The values reach the harness through {job} ("knobs"), not through the source.
# // kestrel:knob BLOCK_ROWS 1 2 4
# // kestrel:knob NUM_WARPS 4 8 16
import torch
import triton
import triton.language as tl


@triton.jit
def _softmax_kernel(x_ptr, y_ptr, rows, cols, stride, BLOCK_COLS: tl.constexpr, BLOCK_ROWS: tl.constexpr):
    pid = tl.program_id(0)
    for r in tl.static_range(BLOCK_ROWS):
        row = pid * BLOCK_ROWS + r
        if row < rows:
            offs = tl.arange(0, BLOCK_COLS)
            mask = offs < cols
            v = tl.load(x_ptr + row * stride + offs, mask=mask, other=-float("inf"))
            v = v - tl.max(v, axis=0)
            e = tl.exp(v)
            tl.store(y_ptr + row * stride + offs, e / tl.sum(e, axis=0), mask=mask)


def softmax(x: torch.Tensor, BLOCK_ROWS: str = "1", NUM_WARPS: str = "4") -> torch.Tensor:
    rows, cols = x.shape
    y = torch.empty_like(x)
    br = int(BLOCK_ROWS)
    _softmax_kernel[(triton.cdiv(rows, br),)](x, y, rows, cols, x.stride(0),
                                              BLOCK_COLS=triton.next_power_of_2(cols), BLOCK_ROWS=br,
                                              num_warps=int(NUM_WARPS))
    return y
