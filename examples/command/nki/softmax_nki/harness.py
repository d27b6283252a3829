#!/usr/bin/env python3
"""Command-evaluator harness for softmax_nki (docs/COMMAND_PROTOCOL.md).

Documentation example for AWS Trainium (trn1/trn2) with the Neuron SDK
(neuronxcc). NOT executed: the machine it was written on has no Trainium and
no PyPI access.

Timing: wall clock (time.perf_counter) around nki.baremetal calls, after
warm-up calls that absorb compilation. This includes host<->device transfer
and launch overhead for both candidate and reference kernels alike; for
device-only times use the Neuron profiler (nki.benchmark / neuron-profile),
whose API is UNCERTAIN across SDK releases and not used here.
The reference here is NumPy on the host, so the reported speedup compares a
Trainium kernel with a CPU softmax; for a fair search make the reference an
NKI kernel too (any reference.py with the same softmax() works).

Usage (evaluator.run): python3 {task_dir}/harness.py {job}
"""
import importlib.util
import json
import sys
import time
import traceback

import numpy as np


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
    rng = np.random.default_rng(seed)
    return rng.uniform(-4.0, 4.0, (shape["rows"], shape["cols"])).astype(np.float32)


def main():
    job = json.load(open(sys.argv[1]))
    tol, knobs = job["task"]["tolerance"], job["knobs"]
    try:
        cand = load(job["source"], "candidate")
    except Exception:
        answer(job, outcome="build_failed", reason="the candidate does not import", log=traceback.format_exc())
    ref = load(job["reference"], "reference")
    run_c = lambda x: np.asarray(cand.softmax(x, **knobs))
    run_r = lambda x: np.asarray(ref.softmax(x))

    worst = {}
    for shape in job["check_shapes"] + job["shapes"]:
        key = json.dumps(shape, sort_keys=True)
        a_max = r_max = 0.0
        for s in range(job["input_sets"]):
            x = inputs(shape, job["seed"] * 1000 + s)
            x_copy = x.copy()
            want = run_r(x)
            try:
                got1, got2 = run_c(x), run_c(x)
            except Exception:
                answer(job, outcome="crashed", reason="the candidate raised", log=traceback.format_exc())
            if not np.array_equal(x, x_copy):
                answer(job, outcome="wrong", reason=f"the candidate modified its input on {shape}")
            if got1.shape != want.shape or not np.isfinite(got1).all() or not np.array_equal(got1, got2):
                answer(job, outcome="wrong", reason=f"bad shape, non-finite output or runs disagree on {shape}")
            diff = np.abs(got1 - want)
            if (diff > tol["atol"] + tol["rtol"] * np.abs(want)).any():
                answer(job, outcome="wrong", reason=f"outside tolerance on {shape} (max abs {diff.max():.3g})")
            a_max = max(a_max, float(diff.max()))
            r_max = max(r_max, float((diff / np.maximum(np.abs(want), 1e-30)).max()))
        worst[key] = (a_max, r_max)

    shapes = []
    for shape in job["shapes"]:
        x = inputs(shape, job["seed"])
        for _ in range(3):                       # warm-up: compile + load NEFF
            run_c(x); run_r(x)
        cs, rs, t0 = [], [], time.perf_counter()
        while len(cs) < job["min_samples"] or time.perf_counter() - t0 < job["min_time_s"]:
            for fn, out in ((run_c, cs), (run_r, rs)):   # interleaved
                t = time.perf_counter(); fn(x); out.append(time.perf_counter() - t)
        a, r = worst[json.dumps(shape, sort_keys=True)]
        shapes.append({"shape": shape, "candidate_s": cs, "reference_s": rs,
                       "max_abs_error": a, "max_rel_error": r})
    answer(job, outcome="measured", shapes=shapes, log="timing: wall clock around nki.baremetal, warm-up excluded\n")


if __name__ == "__main__":
    main()
