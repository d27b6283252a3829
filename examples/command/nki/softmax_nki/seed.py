# Seed for softmax_nki (AWS Trainium, neuronxcc.nki). Documentation example;
# never executed here. API names follow the public NKI docs; marked UNCERTAIN
# where they may differ between Neuron SDK releases.
# Knobs: declared after "//" inside a Python comment (the only form Kestrel parses):
# // kestrel:knob ROWS_PER_TILE 128
# // kestrel:knob COL_CHUNK 512 1024 2048
import numpy as np
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl


def make_kernel(COL_CHUNK):
    @nki.jit   # UNCERTAIN: older SDKs use @nki.baremetal directly on the kernel
    def softmax_kernel(x):
        rows, cols = x.shape
        y = nl.ndarray((rows, cols), dtype=x.dtype, buffer=nl.shared_hbm)
        p = nl.tile_size.pmax                      # 128 partitions
        for t in nl.affine_range((rows + p - 1) // p):
            i_p = t * p + nl.arange(p)[:, None]
            i_f = nl.arange(cols)[None, :]
            tile = nl.load(x[i_p, i_f], mask=(i_p < rows))
            m = nl.max(tile, axis=1, keepdims=True)
            e = nl.exp(nl.subtract(tile, m))
            s = nl.sum(e, axis=1, keepdims=True)
            nl.store(y[i_p, i_f], value=nl.divide(e, s), mask=(i_p < rows))
        return y
    return softmax_kernel


def softmax(x: np.ndarray, ROWS_PER_TILE: str = "128", COL_CHUNK: str = "512") -> np.ndarray:
    # COL_CHUNK is a tuning knob for a chunked variant; the seed loads whole rows.
    kernel = nki.baremetal(make_kernel(int(COL_CHUNK)))   # UNCERTAIN: wrapper form per SDK release
    return kernel(x)
