#!/usr/bin/env python3
"""Command-evaluator harness for softmax_pallas (docs/COMMAND_PROTOCOL.md).

Documentation example for a Cloud TPU with jax[tpu]. NOT executed: the
machine it was written on has no TPU and no PyPI access.

Timing: wall clock around fn(x) followed by jax.block_until_ready (JAX
dispatch is asynchronous); warm-up calls absorb jit compilation and are not
recorded. There is no portable TPU cache-flush call; inputs (tens of MiB)
are larger than on-chip memory in this example.

Usage (evaluator.run): python3 {task_dir}/harness.py {job}
"""
import importlib.util
import json
import sys
import time
import traceback

import numpy as np
import jax
import jax.numpy as jnp


def load(path, name):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def answer(job, **fields):
    with open(job["answer"], "w") as f:
        json.dump({"protocol": 1, "nonce": job["nonce"], **fields}, f)
    sys.exit(0)


def inputs(shape, seed):
    key = jax.random.PRNGKey(seed)
    return jax.random.uniform(key, (shape["rows"], shape["cols"]), jnp.float32, -4.0, 4.0)


def main():
    job = json.load(open(sys.argv[1]))
    tol, knobs = job["task"]["tolerance"], job["knobs"]
    try:
        cand = load(job["source"], "candidate")
    except Exception:
        answer(job, outcome="build_failed", reason="the candidate does not import", log=traceback.format_exc())
    ref = load(job["reference"], "reference")
    run_c = lambda x: jax.block_until_ready(cand.softmax(x, **knobs))
    run_r = lambda x: jax.block_until_ready(ref.softmax(x))

    worst = {}
    for shape in job["check_shapes"] + job["shapes"]:
        a_max = r_max = 0.0
        for s in range(job["input_sets"]):
            x = inputs(shape, job["seed"] * 1000 + s)
            x_host = np.asarray(x)            # JAX arrays are immutable; the copy checks the buffer anyway
            want = np.asarray(run_r(x))
            try:
                got1, got2 = np.asarray(run_c(x)), np.asarray(run_c(x))
            except Exception:
                answer(job, outcome="crashed", reason="the candidate raised", log=traceback.format_exc())
            if not np.array_equal(np.asarray(x), x_host):
                answer(job, outcome="wrong", reason=f"the candidate modified its input on {shape}")
            if got1.shape != want.shape or not np.isfinite(got1).all() or not np.array_equal(got1, got2):
                answer(job, outcome="wrong", reason=f"bad shape, non-finite output or runs disagree on {shape}")
            diff = np.abs(got1 - want)
            if (diff > tol["atol"] + tol["rtol"] * np.abs(want)).any():
                answer(job, outcome="wrong", reason=f"outside tolerance on {shape} (max abs {diff.max():.3g})")
            a_max = max(a_max, float(diff.max()))
            r_max = max(r_max, float((diff / np.maximum(np.abs(want), 1e-30)).max()))
        worst[json.dumps(shape, sort_keys=True)] = (a_max, r_max)

    shapes = []
    for shape in job["shapes"]:
        x = jax.block_until_ready(inputs(shape, job["seed"]))
        for _ in range(3):                    # warm-up: jit compile, excluded
            run_c(x); run_r(x)
        cs, rs, t0 = [], [], time.perf_counter()
        while len(cs) < job["min_samples"] or time.perf_counter() - t0 < job["min_time_s"]:
            for fn, out in ((run_c, cs), (run_r, rs)):   # interleaved
                t = time.perf_counter(); fn(x); out.append(time.perf_counter() - t)
        a, r = worst[json.dumps(shape, sort_keys=True)]
        shapes.append({"shape": shape, "candidate_s": cs, "reference_s": rs,
                       "max_abs_error": a, "max_rel_error": r})
    answer(job, outcome="measured", shapes=shapes, log=f"{jax.devices()[0].device_kind}\n")


if __name__ == "__main__":
    main()
