#!/usr/bin/env python3
"""Writes docs/BENCHMARKS.md from Google Benchmark JSON files (scripts/bench)."""
import json
import os
import sys


def fmt_time(value, unit):
    scale = {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1.0}[unit]
    seconds = value * scale
    for limit, name, factor in ((1e-6, "ns", 1e9), (1e-3, "us", 1e6), (1.0, "ms", 1e3)):
        if seconds < limit:
            return f"{seconds * factor:.1f} {name}"
    return f"{seconds:.2f} s"


def main(folder, target):
    sections = []
    context = None
    for name in sorted(os.listdir(folder)):
        with open(os.path.join(folder, name)) as handle:
            data = json.load(handle)
        context = context or data.get("context", {})
        rows = ["| benchmark | wall | CPU | iterations | counters |", "|---|---|---|---|---|"]
        for bench in data.get("benchmarks", []):
            if bench.get("run_type") == "aggregate":
                continue
            unit = bench.get("time_unit", "ns")
            known = {"name", "family_index", "per_family_instance_index", "run_name", "run_type", "repetitions",
                     "repetition_index", "threads", "iterations", "real_time", "cpu_time", "time_unit"}
            counters = ", ".join(f"{k}={v:.4g}" if isinstance(v, float) else f"{k}={v}"
                                 for k, v in bench.items() if k not in known)
            rows.append(f"| {bench['name']} | {fmt_time(bench['real_time'], unit)} | "
                        f"{fmt_time(bench['cpu_time'], unit)} | {bench['iterations']} | {counters} |")
        sections.append(f"## {os.path.splitext(name)[0]}\n\n" + "\n".join(rows) + "\n")
    context = context or {}
    header = (
        "# Benchmarks\n\n"
        "Written by `scripts/bench` (Google Benchmark); do not edit by hand. The machines here are shared\n"
        "and noisy: compare ratios within one run rather than absolute figures across runs.\n\n"
        f"- date: {context.get('date', '?')}\n"
        f"- host: {context.get('host_name', '?')}, {context.get('num_cpus', '?')} CPUs at "
        f"{context.get('mhz_per_cpu', '?')} MHz, load average {context.get('load_avg', '?')}\n"
        f"- Google Benchmark library build: {context.get('library_build_type', '?')} (Debian's package; "
        "Kestrel's own code is built as configured in the build folder)\n\n"
    )
    with open(target, "w") as handle:
        handle.write(header + "\n".join(sections))


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
