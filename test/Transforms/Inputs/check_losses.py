#!/usr/bin/env python3
"""Checks the `step N: loss = X` lines of a training run on stdin.

usage: check_losses.py decreasing STEPS
       check_losses.py same STEPS REFERENCE_LOG [RTOL]   (default relative 1e-4
                                                          per step)
"""
import re
import sys


def losses(text):
    return [float(v) for v in re.findall(r"step \d+: loss = (\S+)", text)]


mode, steps = sys.argv[1], int(sys.argv[2])
values = losses(sys.stdin.read())
if len(values) != steps:
    sys.exit(f"expected {steps} losses, got {values}")
if mode == "decreasing":
    if not all(a > b for a, b in zip(values, values[1:])):
        sys.exit(f"losses do not decrease: {values}")
else:
    with open(sys.argv[3]) as f:
        reference = losses(f.read())
    if len(reference) < steps:
        sys.exit(f"the reference has {len(reference)} losses, not {steps}: "
                 f"{reference}")
    rtol = float(sys.argv[4]) if len(sys.argv) > 4 else 1e-4
    for step, (a, b) in enumerate(zip(reference, values), 1):
        if abs(a - b) > rtol * abs(a):
            sys.exit(f"step {step}: loss {b} differs from {a}")
print("ok:", values)
