"""Activation bytes per layer from two parc-compile summaries of the same GPT
with different layer counts, against Korthikanti et al. 2022 (table 2) in f32
terms: usage: activations_per_layer.py SUMMARY_A LAYERS_A SUMMARY_B LAYERS_B
S B H A EXPECTED_SBH. Exits 1 unless the bytes per layer, in units of s*b*h,
are within 10% of EXPECTED_SBH."""
import re
import sys


def saved(path):
    text = open(path).read()
    match = re.search(r"activation bytes per rank \(saved for the backward "
                      r"pass\): (\d+)", text)
    if not match:
        sys.exit(f"{path}: no activation bytes")
    return int(match.group(1))


a, layers_a, b, layers_b = sys.argv[1], int(sys.argv[2]), sys.argv[3], int(sys.argv[4])
s, batch, h, heads = (int(x) for x in sys.argv[5:9])
expected = float(sys.argv[9])
per_layer = (saved(b) - saved(a)) / (layers_b - layers_a) / (s * batch * h)
print(f"{per_layer:.2f} s*b*h bytes per layer (expected {expected:g})")
if abs(per_layer - expected) > 0.1 * expected:
    sys.exit(f"{per_layer:.2f} is not within 10% of {expected:g}")
