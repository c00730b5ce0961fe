#!/usr/bin/env python3
"""PipeDream-2BW trained serially, as the reference of the pipelined runs:
W(t) = AdamW(W(t-1), grad(W(t-2))), with W(-1) = W(0). The gradients come
from the reference evaluator (parc-run on the model's --parc-autodiff form);
the update is numpy's, in float64, with the formula of parc's adamw_update.

usage: pipedream_2bw_reference.py PARC_RUN GRADIENT_MODEL INITIAL STEPS OUT
           [--lr 0.01] [--beta1 0.9] [--beta2 0.999] [--eps 1e-5]
           [--weight-decay 0]
INITIAL holds W(0) (parc-run --weights-out of the train step); prints
"step N: loss = X" as parc-run does and writes OUT with the names a train
step's results have: each parameter, its .adam_m and .adam_v, the
optimizer.step and the last loss.
"""
import os
import re
import subprocess
import sys
import tempfile

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "..", ".."))
import safetensors_file  # noqa: E402


def option(name, default):
    return float(sys.argv[sys.argv.index(name) + 1]) if name in sys.argv else default


parc_run, model, initial, steps, out = sys.argv[1:6]
steps = int(steps)
lr, beta1, beta2 = option("--lr", 0.01), option("--beta1", 0.9), option("--beta2", 0.999)
eps, decay = option("--eps", 1e-5), option("--weight-decay", 0.0)

start = safetensors_file.read(initial)
names = [n for n in start if not n.endswith((".adam_m", ".adam_v"))
         and n not in ("loss", "optimizer.step")]
newest = {n: start[n].astype(np.float64) for n in names}
stale = dict(newest)
m = {n: np.zeros_like(w) for n, w in newest.items()}
v = {n: np.zeros_like(w) for n, w in newest.items()}
with tempfile.TemporaryDirectory() as scratch:
    weights = os.path.join(scratch, "stale.safetensors")
    gradients = os.path.join(scratch, "gradients.safetensors")
    for step in range(1, steps + 1):
        safetensors_file.write(weights, {n: w.astype(np.float32)
                                         for n, w in stale.items()})
        run = subprocess.run([parc_run, "--reference", model, "--weights", weights,
                              "--precision", "f64", "--out", gradients],
                             check=True, capture_output=True, text=True)
        loss = float(re.search(r"^loss = (\S+)", run.stdout, re.M).group(1))
        print(f"step {step}: loss = {loss:.6g}")
        grads = safetensors_file.read(gradients)
        c1, c2 = 1 - beta1 ** step, 1 - beta2 ** step
        updated = {}
        for n, w in newest.items():
            g = grads[n + ".grad"].astype(np.float64)
            m[n] = beta1 * m[n] + (1 - beta1) * g
            v[n] = beta2 * v[n] + (1 - beta2) * g * g
            updated[n] = w - lr * (m[n] / c1 / (np.sqrt(v[n] / c2) + eps) + decay * w)
        stale, newest = newest, updated

result = {"loss": np.array(loss, dtype=np.float32),
          "optimizer.step": np.array(steps + 1, dtype=np.float32)}
for n in names:
    result[n] = newest[n].astype(np.float32)
    result[n + ".adam_m"] = m[n].astype(np.float32)
    result[n + ".adam_v"] = v[n].astype(np.float32)
safetensors_file.write(out, result)
