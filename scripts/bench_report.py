#!/usr/bin/env python3
"""Writes the generated part of docs/BENCHMARKS.md (scripts/bench).

    scripts/bench_report.py RESULTS_DIR TARGET.md

TARGET.md is a hand-written top part, then the marker line MARKER, then the
generated part. The top part is kept as it is; everything after the marker is
replaced: a header with the date and host of the run, one table per Google
Benchmark JSON file in RESULTS_DIR (*.json, one per benchmark program), then
each *.md file in RESULTS_DIR verbatim as its own section (the markdown table
strategy_bench prints on stdout, for one). A TARGET.md without the marker is
taken as wholly generated: it gets a minimal top part.
"""
import json
import os
import sys

MARKER = "<!-- Everything below is written by scripts/bench; do not edit by hand. -->"

DEFAULT_TOP = (
    "# Benchmarks\n\n"
    "What Kestrel's own machinery costs and how well its search does; the tables after the marker are written by "
    "`scripts/bench`.\n"
)

# Fields of a Google Benchmark JSON run that are not user counters.
KNOWN = {"name", "family_index", "per_family_instance_index", "run_name", "run_type", "repetitions",
         "repetition_index", "threads", "iterations", "real_time", "cpu_time", "time_unit", "aggregate_name",
         "aggregate_unit", "label", "error_occurred", "error_message"}


def fmt_time(value, unit):
    scale = {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1.0}[unit]
    seconds = value * scale
    for limit, name, factor in ((1e-6, "ns", 1e9), (1e-3, "us", 1e6), (1.0, "ms", 1e3)):
        if seconds < limit:
            return f"{seconds * factor:.1f} {name}"
    return f"{seconds:.2f} s"


def fmt_counter(key, value):
    return f"{key}={value:.4g}" if isinstance(value, float) else f"{key}={value}"


def json_section(name, data):
    rows = ["| benchmark | wall | CPU | iterations | counters |", "|---|---|---|---|---|"]
    for bench in data.get("benchmarks", []):
        if bench.get("run_type") == "aggregate":
            continue
        if bench.get("error_occurred"):
            rows.append(f"| {bench['name']} | | | | error: {bench.get('error_message', '?')} |")
            continue
        unit = bench.get("time_unit", "ns")
        counters = ", ".join(fmt_counter(k, v) for k, v in bench.items() if k not in KNOWN)
        if bench.get("label"):
            counters = f"{bench['label']}; {counters}" if counters else bench["label"]
        rows.append(f"| {bench['name']} | {fmt_time(bench['real_time'], unit)} | "
                    f"{fmt_time(bench['cpu_time'], unit)} | {bench['iterations']} | {counters} |")
    return f"## {name}\n\n" + "\n".join(rows) + "\n"


def markdown_section(name, text):
    text = text.strip("\n")
    if text.startswith("## "):
        return text + "\n"
    return f"## {name}: summary\n\n{text}\n"


def fmt_load(load):
    if isinstance(load, list):
        return ", ".join(f"{value:.2f}" for value in load)
    return str(load)


def generated_part(folder):
    names = sorted(os.listdir(folder))
    tables, verbatim = [], []
    context = None
    for name in names:
        path = os.path.join(folder, name)
        program, ext = os.path.splitext(name)
        if ext == ".json":
            with open(path) as handle:
                data = json.load(handle)
            context = context or data.get("context")
            tables.append(json_section(program, data))
        elif ext == ".md":
            with open(path) as handle:
                verbatim.append(markdown_section(program, handle.read()))
    context = context or {}
    header = (
        "## The last run of scripts/bench\n\n"
        "The machines here are shared and noisy: compare ratios within one run rather than absolute figures\n"
        "across runs.\n\n"
        f"- date: {context.get('date', '?')}\n"
        f"- host: {context.get('host_name', '?')}, {context.get('num_cpus', '?')} CPUs at "
        f"{context.get('mhz_per_cpu', '?')} MHz, load average {fmt_load(context.get('load_avg', '?'))}\n"
        f"- Google Benchmark library build: {context.get('library_build_type', '?')} (Debian's package; "
        "Kestrel's own code is built as configured in the build folder)\n"
    )
    return "\n".join([header] + tables + verbatim)


def hand_written_part(target):
    """The text above the marker, or the default top part when there is none."""
    try:
        with open(target) as handle:
            old = handle.read()
    except FileNotFoundError:
        return DEFAULT_TOP
    lines = old.splitlines(keepends=True)
    for index, line in enumerate(lines):
        if line.strip() == MARKER:
            return "".join(lines[:index]).rstrip("\n") + "\n"
    return DEFAULT_TOP


def main(folder, target):
    text = hand_written_part(target) + "\n" + MARKER + "\n\n" + generated_part(folder)
    with open(target + ".tmp", "w") as handle:
        handle.write(text)
    os.replace(target + ".tmp", target)


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__.split("\n\n")[1].strip())
    main(sys.argv[1], sys.argv[2])
