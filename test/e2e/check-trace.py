#!/usr/bin/env python3
"""Checks a --trace file of a compiled program: it parses as a Chrome trace,
every rank 0..RANKS-1 has a process name and STEPS step events, every op
event lies inside its rank's step event of the same step, durations are
non-negative, collectives name their bytes and axes, sends and receives
their bytes, peer and channel, and every send has its matching receive.

usage: check-trace.py TRACE RANKS STEPS [--p2p] [--collective]
  --p2p         the program sends and receives (a pipeline)
  --collective  the program runs collectives
"""
import json
import sys

EPSILON = 0.002  # µs: times are printed with three decimals

path, ranks, steps = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
flags = set(sys.argv[4:])
errors = []

with open(path) as file:
    events = json.load(file)["traceEvents"]

names = {e["pid"]: e["args"]["name"] for e in events
         if e["ph"] == "M" and e["name"] == "process_name"}
if sorted(names) != list(range(ranks)):
    errors.append(f"process names for pids {sorted(names)}, "
                  f"expected 0..{ranks - 1}")

complete = [e for e in events if e["ph"] == "X"]
for e in complete:
    if e["dur"] < 0 or e["ts"] < 0:
        errors.append(f"negative time: {e}")
    if e["tid"] != 0:
        errors.append(f"tid is not 0: {e}")

for rank in range(ranks):
    mine = [e for e in complete if e["pid"] == rank]
    step_events = {e["args"]["step"]: e for e in mine if e["cat"] == "step"}
    if sorted(step_events) != list(range(1, steps + 1)):
        errors.append(f"rank {rank}: step events {sorted(step_events)}")
        continue
    ops = [e for e in mine if e["cat"] != "step"]
    if not ops:
        errors.append(f"rank {rank}: no op events")
    for e in ops:
        step = step_events[e["args"]["step"]]
        if (e["ts"] + EPSILON < step["ts"] or
                e["ts"] + e["dur"] > step["ts"] + step["dur"] + EPSILON):
            errors.append(f"rank {rank}: {e} is outside {step}")
        if e["cat"] not in ("compute", "collective", "p2p"):
            errors.append(f"rank {rank}: unknown category in {e}")
        needed = {"collective": ("bytes", "axes"),
                  "p2p": ("bytes", "peer", "channel")}.get(e["cat"], ())
        for key in needed:
            if key not in e["args"]:
                errors.append(f"rank {rank}: {e} has no '{key}'")

    if "--p2p" in flags:
        kinds = {e["name"] for e in ops if e["cat"] == "p2p"}
        if kinds != {"send", "recv"}:
            errors.append(f"rank {rank}: point-to-point events {kinds}")
    if "--collective" in flags and not any(e["cat"] == "collective"
                                          for e in ops):
        errors.append(f"rank {rank}: no collective events")

# Every send has its recv: same pair, channel and bytes.
def messages(kind, key):
    found = {}
    for e in complete:
        if e["name"] == kind and e["cat"] == "p2p":
            args = e["args"]
            message = key(e["pid"], args["peer"]) + (args["channel"],
                                                    args["bytes"])
            found[message] = found.get(message, 0) + 1
    return found


sends = messages("send", lambda rank, peer: (rank, peer))
recvs = messages("recv", lambda rank, peer: (peer, rank))
if sends != recvs:
    errors.append(f"sends {sends} do not match receives {recvs} "
                  "(from, to, channel, bytes)")

for error in errors:
    print("check-trace:", error)
if errors:
    sys.exit(1)
print(f"check-trace: {len(complete)} events of {ranks} ranks are consistent")
