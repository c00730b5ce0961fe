"""Exits 0 when two parc-plan --format json summaries agree in everything but
the search's wall time."""
import json
import sys

a, b = (json.load(open(path)) for path in sys.argv[1:3])
for summary in (a, b):
    summary["search"].pop("seconds")
if a != b:
    sys.exit("the two searches differ")
