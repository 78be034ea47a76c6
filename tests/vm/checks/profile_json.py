#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""The first function of a 'kinstr profile --json' file: its counts on one line, and its
min <= mean <= max (an assertion: exit 1 when the times are out of order)."""
import json
import sys

f = json.load(open(sys.argv[1]))["functions"][0]
print(f["function"], "calls", f["calls"], "starts", f["starts"], "unmatched", f["unmatched"],
      "dropped", f["dropped"], "hist", sum(f["hist_log2_ns"]))
if not f["min_ns"] <= f["mean_ns"] <= f["max_ns"]:
    sys.exit("min %d, mean %d, max %d: out of order" % (f["min_ns"], f["mean_ns"], f["max_ns"]))
print("order ok")
