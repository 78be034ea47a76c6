#!/usr/bin/env python3
"""The taken branches per call of a layout (kinstr optimize --dry-run --json) under the edge counts
of a separate run (kinstr cover --edges --json), counted here from the edges: a taken edge stays
taken unless the layout put its target right after a block ending on a jcc (inverted) or a jmp
(dropped); a fall-through edge out of a block that runs on in the copy (falls, jcc, fixed) becomes
taken when its target is not next. Calls, returns and exits are left out, as kinstr does.
    taken.py LAYOUT.json EDGES.json"""
import json
import sys

lay = json.load(open(sys.argv[1]))["functions"][0]
cov = json.load(open(sys.argv[2]))["functions"][0]
order = [b["offset"] for b in lay["layout"]]
end = {b["offset"]: b["end"] for b in lay["layout"]}
nxt = {o: (order[i + 1] if i + 1 < len(order) else None) for i, o in enumerate(order)}
calls = sum(e["count"] for e in cov["edges"] if e["kind"] == "entry")
before = after = 0
offs = sorted(order)
orig_next = {o: (offs[i + 1] if i + 1 < len(offs) else None) for i, o in enumerate(offs)}
for e in cov["edges"]:
    f, t, c = e["from"], e["to"], e["count"]
    if f is None or t is None:
        continue
    if e["kind"] == "taken":
        before += c if not (end[f] == "jmp" and orig_next[f] == t) else 0
        after += c if not (end[f] in ("jcc", "jmp") and nxt[f] == t) else 0
    elif e["kind"] == "fall" and end[f] in ("falls", "jcc", "fixed"):
        before += c if orig_next[f] != t else 0
        after += c if nxt[f] != t else 0
print(f"taken branches per call: predicted {lay['per_call_before']:.3f} -> {lay['per_call_after']:.3f} "
      f"(from the optimize run's edges); measured by a second run {before / calls:.3f} -> {after / calls:.3f} "
      f"({calls} calls); copy {lay['copy_bytes']} bytes, {lay['blocks']} blocks")
print("layout (offset in the original, count, how the block ends, what the layout did):")
for b in lay["layout"]:
    did = [w for w, k in (("inverted", "inverted"), ("jmp-added", "jmp_added"), ("jmp-dropped", "jmp_dropped"),
                          ("rel8", "rel8")) if b[k]]
    print(f"  +{b['offset']:#06x} {b['count']:>8} {b['end']:<7} {' '.join(did) or '-'}")
