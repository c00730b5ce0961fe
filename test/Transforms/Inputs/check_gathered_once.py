#!/usr/bin/env python3
"""Checks that every parameter ZeRO-3 gathers (`%v = dist.all_gather %argN`)
is read by exactly one op: the gathered copy is a temporary of that op,
freed once it has run, and a later reader gathers again.

usage: check_gathered_once.py < partitioned.mlir
"""
import re
import sys

lines = sys.stdin.read().splitlines()
gathers = 0
for number, line in enumerate(lines):
    match = re.match(r"\s*(%[\w.]+) = dist\.all_gather %arg\d+ ", line)
    if not match:
        continue
    gathers += 1
    name = re.escape(match.group(1))
    readers = [n for n, text in enumerate(lines)
               if n != number and re.search(name + r"(?![\w.#])", text)]
    if len(readers) != 1:
        sys.exit(f"line {number + 1}: {match.group(1)} is read on lines "
                 f"{[n + 1 for n in readers]}, not by one op")
if gathers == 0:
    sys.exit("no gathered parameters")
print(f"ok: {gathers} gathered parameters, each read by one op")
