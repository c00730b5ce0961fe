#!/usr/bin/env python3
"""Kills a compiled training run at an arbitrary point, resumes it from its
last checkpoint and checks that the resumed run continues exactly as an
uninterrupted one: the same losses, bit for bit, and the same final weights
and optimizer state.

usage: checkpoint-resume.py WORKDIR LAUNCH_SH

The run checkpoints after every step and is killed (SIGKILL, every rank)
once rank 0 prints step 3, so the checkpoint holds step 2 or later: whichever
step k it holds, the uninterrupted run of k + 3 steps and the resumed one
must agree on steps k + 1 to k + 3.
"""
import os
import signal
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
import numpy as np  # noqa: E402
import safetensors_file  # noqa: E402

workdir, launch = sys.argv[1], sys.argv[2]
checkpoint = os.path.join(workdir, "checkpoint.safetensors")
os.makedirs(workdir, exist_ok=True)

killed = subprocess.Popen(
    [launch, "--steps", "1000000", "--checkpoint", checkpoint,
     "--checkpoint-every", "1"],
    stdout=subprocess.PIPE, stderr=subprocess.STDOUT, start_new_session=True)


def session_processes(session):
    """The processes of `session`: mpirun and the ranks it started, which
    sit in process groups of their own."""
    found = []
    for pid in os.listdir("/proc"):
        if pid.isdigit():
            try:
                with open(f"/proc/{pid}/stat") as f:
                    # pid (comm) state ppid pgrp session ...
                    fields = f.read().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if fields[0] != "Z" and int(fields[3]) == session:
                found.append(int(pid))
    return found


output = []
for line in killed.stdout:
    output.append(line.decode(errors="replace"))
    if line.startswith(b"step 3:"):
        # Every rank at once, as a machine failure would.
        while True:
            pids = session_processes(killed.pid)
            if not pids:
                break
            for pid in pids:
                try:
                    os.kill(pid, signal.SIGKILL)
                except OSError:
                    pass
            time.sleep(0.05)
        break
killed.wait()
if killed.returncode != -signal.SIGKILL:
    sys.exit(f"the run ended by itself (exit {killed.returncode}):\n" +
             "".join(output))
leftovers = [name for name in os.listdir(workdir) if ".tmp." in name]
step = int(safetensors_file.read_metadata(checkpoint)["parc.step"])
steps = step + 3


def steps_of(output):
    return [line for line in output.splitlines() if line.startswith("step ")
            and not line.startswith("step time")]


full = subprocess.run([launch, "--steps", str(steps), "--out",
                       os.path.join(workdir, "full.safetensors")],
                      capture_output=True, text=True, check=True).stdout
resumed = subprocess.run([launch, "--steps", str(steps), "--weights",
                          checkpoint, "--resume", "--out",
                          os.path.join(workdir, "resumed.safetensors")],
                         capture_output=True, text=True, check=True).stdout
expected = steps_of(full)[-3:]
if steps_of(resumed) != expected:
    sys.exit("resumed steps differ:\n" + "\n".join(steps_of(resumed)) +
             "\nuninterrupted:\n" + "\n".join(expected))
a = safetensors_file.read(os.path.join(workdir, "full.safetensors"))
b = safetensors_file.read(os.path.join(workdir, "resumed.safetensors"))
if a.keys() != b.keys() or any(not np.array_equal(a[k], b[k]) for k in a):
    sys.exit("the resumed run's final tensors differ")
print(f"checkpoint at step {step} (partial files left: {len(leftovers)}); "
      f"resumed steps {step + 1}-{steps} equal the uninterrupted run's")
