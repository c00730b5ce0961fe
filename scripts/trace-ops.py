#!/usr/bin/env python3
"""Time per op of a traced run (the launcher's --trace, Chrome's format):
per rank, each op's total over the steps after the first, per step, the
ops that take the most first, with their share of the step.

    scripts/trace-ops.py TRACE.json [COUNT]   (default: the 12 largest)
"""
import collections
import json
import sys


def main():
    path = sys.argv[1]
    count = int(sys.argv[2]) if len(sys.argv) > 2 else 12
    events = [e for e in json.load(open(path))["traceEvents"]
              if e.get("ph") == "X"]
    for rank in sorted({e["pid"] for e in events}):
        ops = collections.Counter()
        steps = set()
        total = 0.0
        for e in events:
            step = e.get("args", {}).get("step", 0)
            if e["pid"] != rank or step <= 1:
                continue
            if e["name"] == f"step {step}":
                total += e["dur"]
                steps.add(step)
            elif not e["name"].startswith("step "):
                ops[e["name"]] += e["dur"]
        if not steps:
            print(f"rank {rank}: no step after the first in {path}")
            continue
        per_step = total / len(steps) / 1000
        print(f"rank {rank}: {per_step:.3f} ms per step over "
              f"{len(steps)} steps")
        for name, micros in ops.most_common(count):
            ms = micros / len(steps) / 1000
            print(f"  {name:24s} {ms:10.3f} ms  {100 * ms / per_step:5.1f}%")


if __name__ == "__main__":
    main()
