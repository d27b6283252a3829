#!/usr/bin/env python3
"""Command-evaluator harness for softmax_triton (docs/COMMAND_PROTOCOL.md).

Documentation example: needs an NVIDIA GPU with torch and triton. It was NOT
executed (the machine it was written on has no GPU and no PyPI access).

Usage (evaluator.run): python3 {task_dir}/harness.py {job}
"""
import importlib.util
import json
import statistics
import sys
import time
import traceback

import torch


def load(path, name):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def answer(job, **fields):
    doc = {"protocol": 1, "nonce": job["nonce"], **fields}
    with open(job["answer"], "w") as f:
        json.dump(doc, f)
    sys.exit(0)


def inputs(shape, seed):
    g = torch.Generator(device="cuda").manual_seed(seed)
    # task.json: uniform(-4, 4)
    return torch.rand((shape["rows"], shape["cols"]), generator=g, device="cuda", dtype=torch.float32) * 8 - 4


def errors(got, want):
    diff = (got - want).abs()
    return float(diff.max()), float((diff / want.abs().clamp_min(1e-30)).max())


def main():
    job = json.load(open(sys.argv[1]))
    tol = job["task"]["tolerance"]
    knobs = job["knobs"]
    try:
        cand = load(job["source"], "candidate")
    except Exception:
        answer(job, outcome="build_failed", reason="the candidate does not import", log=traceback.format_exc())
    ref = load(job["reference"], "reference")
    run_c = lambda x: cand.softmax(x, **knobs)
    run_r = ref.softmax

    # 1. Correctness on check shapes and timed shapes, input_sets fresh seeds each.
    worst = {}
    for shape in job["check_shapes"] + job["shapes"]:
        key = json.dumps(shape, sort_keys=True)
        worst.setdefault(key, (0.0, 0.0))
        for s in range(job["input_sets"]):
            x = inputs(shape, job["seed"] * 1000 + s)
            x_copy = x.clone()
            want = run_r(x)
            try:
                got1 = run_c(x)
                torch.cuda.synchronize()
                got2 = run_c(x)
                torch.cuda.synchronize()
            except Exception:
                answer(job, outcome="crashed", reason="the candidate raised", log=traceback.format_exc())
            if not torch.equal(x, x_copy):
                answer(job, outcome="wrong", reason=f"the candidate modified its input on {shape}")
            if got1.shape != want.shape or not torch.isfinite(got1).all():
                answer(job, outcome="wrong", reason=f"bad shape or non-finite output on {shape}")
            if not torch.equal(got1, got2):
                answer(job, outcome="wrong", reason=f"two runs disagree on {shape}")
            a, r = errors(got1, want)
            bad = (got1 - want).abs() > tol["atol"] + tol["rtol"] * want.abs()
            if bad.any():
                answer(job, outcome="wrong", reason=f"{int(bad.sum())} elements outside tolerance on {shape} "
                       f"(max abs {a:.3g}, max rel {r:.3g})")
            worst[key] = (max(worst[key][0], a), max(worst[key][1], r))

    # 2. Timing: interleaved, L2 flushed, events after a device-wide sync.
    l2 = torch.cuda.get_device_properties(0).L2_cache_size
    flush = torch.empty(2 * l2 // 4 + 1, dtype=torch.float32, device="cuda")
    start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)

    def sample(fn, x):
        flush.zero_()                  # evict x from L2
        torch.cuda.synchronize()
        start.record()
        fn(x)
        stop.record()
        stop.synchronize()
        return start.elapsed_time(stop) / 1e3   # ms -> s

    shapes = []
    for shape in job["shapes"]:
        x = inputs(shape, job["seed"])
        for _ in range(3):                     # warm-up: Triton JIT, autotune, caches
            run_c(x); run_r(x)
        torch.cuda.synchronize()
        cs, rs, t0 = [], [], time.perf_counter()
        while len(cs) < job["min_samples"] or time.perf_counter() - t0 < job["min_time_s"]:
            cs.append(sample(run_c, x))        # interleave: C, R, C, R ...
            rs.append(sample(run_r, x))
        a, r = worst[json.dumps(shape, sort_keys=True)]
        shapes.append({"shape": shape, "candidate_s": cs, "reference_s": rs,
                       "max_abs_error": a, "max_rel_error": r})
    answer(job, outcome="measured", shapes=shapes,
           log=f"{torch.cuda.get_device_name(0)}; median candidate {statistics.median(shapes[0]['candidate_s']):.3g} s\n")


if __name__ == "__main__":
    main()
