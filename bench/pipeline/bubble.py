#!/usr/bin/env python3
"""Pipeline bubble of a compiled program, from its --trace file.

    mpirun -np 2 ./prog.stage0 --steps 5 --trace trace.json \\
         : -np 2 ./prog.stage1 --steps 5 --trace trace.json
    /usr/bin/python3 bench/pipeline/bubble.py trace.json [--skip N]

For each rank (pid) prints, per step on average: busy time (the sum of its
"compute" events), the time in point-to-point calls (waiting in recv
included) and in collectives, the step's wall time (its "step N" event:
parc_program_step plus the end-of-step synchronize), and the bubble
fraction 1 - busy / wall; then the mean fraction over ranks. Everything
but compute is idle time of the rank's compute units.

--skip N leaves out the first N steps (default: 1 when the trace has more
than one step, like the launcher's "step time": the first step warms caches
and communicators). On the cuda backend tracing synchronizes around every
call (docs/runtime.md, "Tracing"), so compute events are device times but
the streams do not overlap while tracing.
"""
import argparse
import json
from collections import defaultdict

parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
parser.add_argument("trace")
parser.add_argument("--skip", type=int, default=None,
                    help="steps to leave out at the start")
options = parser.parse_args()

with open(options.trace) as file:
    events = json.load(file)["traceEvents"]

names = {e["pid"]: e["args"]["name"] for e in events
         if e["ph"] == "M" and e["name"] == "process_name"}
complete = [e for e in events if e["ph"] == "X"]
numbers = sorted({e["args"]["step"] for e in complete if e["cat"] == "step"})
if not numbers:
    raise SystemExit(f"bubble: {options.trace} has no step events")
skip = options.skip
if skip is None:
    skip = 1 if len(numbers) > 1 else 0
steps = set(numbers[skip:])
if not steps:
    raise SystemExit(f"bubble: --skip {skip} leaves none of the "
                     f"{len(numbers)} steps")

# rank -> category -> µs over the selected steps.
totals = defaultdict(lambda: defaultdict(float))
for e in complete:
    if e["args"]["step"] in steps:
        totals[e["pid"]][e["cat"]] += e["dur"]

print(f"{len(steps)} step(s) of {len(numbers)}, times in ms per step")
print(f"{'rank':<20} {'busy':>10} {'p2p':>10} {'collective':>10} "
      f"{'wall':>10} {'bubble':>7}")
fractions = []
for rank in sorted(totals):
    time = {category: total / len(steps) / 1000
            for category, total in totals[rank].items()}
    busy, wall = time.get("compute", 0.0), time.get("step", 0.0)
    fraction = 1 - busy / wall if wall > 0 else 0.0
    fractions.append(fraction)
    print(f"{names.get(rank, f'rank {rank}'):<20} {busy:10.4f} "
          f"{time.get('p2p', 0.0):10.4f} {time.get('collective', 0.0):10.4f} "
          f"{wall:10.4f} {fraction:7.1%}")
print(f"mean bubble fraction over {len(fractions)} ranks: "
      f"{sum(fractions) / len(fractions):.1%}")
