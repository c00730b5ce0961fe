#!/usr/bin/env python3
"""Runs a command, prints its stdout and stderr, and exits 0 only if the
command exited with the given code (a crash or abort never matches).

usage: expect-exit.py CODE COMMAND [ARGS...]
"""
import subprocess
import sys

expected = int(sys.argv[1])
result = subprocess.run(sys.argv[2:], stdout=subprocess.PIPE,
                        stderr=subprocess.STDOUT)
sys.stdout.write(result.stdout.decode(errors="replace"))
if result.returncode != expected:
    sys.stdout.write(f"expect-exit: exit code {result.returncode}, "
                     f"expected {expected}\n")
    sys.exit(1)
