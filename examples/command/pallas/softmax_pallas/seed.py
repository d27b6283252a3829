# Seed for softmax_pallas (TPU, jax.experimental.pallas). Documentation example; never executed here.
# Knobs: declared after "//" inside a Python comment (the only form Kestrel parses):
# // kestrel:knob BLOCK_ROWS 8 16 32 64
import functools

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl


def _softmax_kernel(x_ref, y_ref):
    x = x_ref[...]
    e = jnp.exp(x - jnp.max(x, axis=1, keepdims=True))
    y_ref[...] = e / jnp.sum(e, axis=1, keepdims=True)


@functools.partial(jax.jit, static_argnames=("block_rows",))
def _softmax(x, block_rows):
    rows, cols = x.shape
    return pl.pallas_call(
        _softmax_kernel,
        out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype),
        grid=(pl.cdiv(rows, block_rows),),
        in_specs=[pl.BlockSpec((block_rows, cols), lambda i: (i, 0))],
        out_specs=pl.BlockSpec((block_rows, cols), lambda i: (i, 0)),
    )(x)


def softmax(x, BLOCK_ROWS: str = "8"):
    return _softmax(x, block_rows=int(BLOCK_ROWS))
