#!/usr/bin/env python3
"""Launches a compiled program, then kills (SIGKILL) or stops (SIGSTOP) one
of its ranks once rank 0 has printed its first step (so every rank is past
setup, whose collectives the watchdog does not cover), and checks that the whole job exits non-zero within
the deadline with a message naming a rank.

usage: kill-rank.py kill|stop RANK DEADLINE_S LAUNCH_SH [PROGRAM ARGS...]

stop@SECONDS stops the rank that many seconds after the launch instead,
before any step (while the ranks load their arguments: the model must take
longer than that to load).
"""
import os
import signal
import subprocess
import sys
import threading
import time

mode, victim, deadline = sys.argv[1], sys.argv[2], float(sys.argv[3])
delay = None
if mode.startswith("stop@"):
    mode, delay = "stop", float(mode[len("stop@"):])
command = sys.argv[4:]
# Only this job's ranks (its `program`, or `program.stageN` of a pipeline):
# other tests may run programs at the same time.
directory = os.path.dirname(os.path.realpath(command[0])).encode()
job = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                       start_new_session=True)


def rank_pids():
    """Processes of the job with their MPI rank, from their environment."""
    found = {}
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            with open(f"/proc/{pid}/environ", "rb") as f:
                env = dict(item.split(b"=", 1) for item in f.read().split(b"\0")
                           if b"=" in item)
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                cmdline = f.read()
        except OSError:
            continue
        rank = env.get(b"OMPI_COMM_WORLD_RANK")
        executable = cmdline.split(b"\0")[0]
        if (rank is not None and os.path.dirname(executable) == directory
                and os.path.basename(executable).startswith(b"program")):
            found[rank.decode()] = int(pid)
    return found


chunks = []
first_step = threading.Event()


def read_output():
    for line in job.stdout:
        chunks.append(line)
        if line.startswith(b"step "):
            first_step.set()


reader = threading.Thread(target=read_output, daemon=True)
reader.start()
target = None
if delay is not None:
    time.sleep(delay)
    if first_step.is_set():
        os.killpg(job.pid, signal.SIGKILL)
        sys.exit(f"a step ran within {delay} s: the stop came after loading")
    target = rank_pids().get(victim)
elif first_step.wait(timeout=60):
    target = rank_pids().get(victim)
if target is None:
    os.killpg(job.pid, signal.SIGKILL)
    sys.exit(f"rank {victim} never ran a step" if delay is None
             else f"rank {victim} is not running after {delay} s")
os.kill(target, signal.SIGKILL if mode == "kill" else signal.SIGSTOP)
hit = time.time()
try:
    job.wait(timeout=deadline)
    reader.join(timeout=deadline)
except subprocess.TimeoutExpired:
    os.killpg(job.pid, signal.SIGKILL)
    if mode == "stop":
        os.kill(target, signal.SIGKILL)
    sys.exit(f"the job did not exit within {deadline} s")
text = b"".join(chunks).decode(errors="replace")
sys.stdout.write(text)
print(f"exit code {job.returncode} after {time.time() - hit:.1f} s")
if job.returncode == 0:
    sys.exit("the job exited 0")
