"""Prints each memory term parc-plan predicted beside the one parc-compile's
summary reports at its peak (inputs count with the activations), then their
totals (the compiled one without what the placement leaves unused)."""
import json
import re
import sys

predicted = json.load(open(sys.argv[1]))["predicted"]["memory"]
summary = open(sys.argv[2]).read()
line = re.search(r"at the most bytes live \(.*?\): (.*)", summary).group(1)
compiled = {name: int(value) for name, value in re.findall(r"([a-z ]+?) (\d+)(?:,|;|$)", line)}
compiled = {name.strip(): value for name, value in compiled.items()}
pairs = [
    ("parameters", predicted["parameters"], compiled["parameters"]),
    ("optimizer state", predicted["optimizer_state"], compiled["optimizer state"]),
    ("gradients", predicted["gradients"], compiled["gradients"]),
    ("activations", predicted["activations"],
     compiled["saved activations"] + compiled["inputs"]),
    ("temporaries", predicted["temporaries"], compiled["temporaries"]),
]
for name, model, arena in pairs:
    print(f"{name} {model:.0f} {arena}")
print(f"total {sum(p[1] for p in pairs):.0f} {sum(p[2] for p in pairs)}")
print(f"unused {compiled['unused by the placement']}")
