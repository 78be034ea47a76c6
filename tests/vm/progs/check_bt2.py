#!/usr/bin/python3
"""A kinstr trace through babeltrace2's Python bindings (python3-bt2), not its CLI: every event's payload
fields must have the class the CTF metadata declares for them (signed or unsigned integer of the declared
size and base; string, and a UTF-8 char array, which CTF 1.8 makes a string too), and the bindings must see as many events as `babeltrace2` prints.
  check_bt2.py TRACE_DIR
Prints per event name its count and the field classes seen, then "bt2 ok" (exit 0) or the first mismatch."""
import re
import subprocess
import sys

import bt2  # Debian's python3-bt2, under /usr/bin/python3

trace = sys.argv[1]
meta = open(f"{trace}/metadata").read()
declared = {}
for name, body in re.findall(r'event \{\n\tname = "([^"]*)";.*?fields := struct \{\n(.*?)\t\};', meta, re.S):
    fields = {}
    for line in body.splitlines():
        m = re.match(r"\s*integer \{ size = (\d+); align = 8; signed = (\d); encoding = (\w+); base = (\d+); \} _(\w+)(\[\d+\])?;", line)
        if m:
            size, signed, enc, base, fname, arr = m.groups()
            # an array of UTF-8 chars is text in CTF 1.8: babeltrace2 makes it a string field
            fields[fname] = ("string",) if arr and enc == "UTF8" else ("int", int(size), signed == "1", int(base))
            continue
        m = re.match(r"\s*string \{ encoding = UTF8; \} _(\w+);", line)
        if m:
            fields[m.group(1)] = ("string",)
            continue
        sys.exit(f"check_bt2: unparsed field declaration: {line!r}")
    declared[name] = fields

def kind(fc):
    if isinstance(fc, bt2._StringFieldClassConst):
        return ("string",)
    if isinstance(fc, bt2._StaticArrayFieldClassConst):
        return ("array",)
    if isinstance(fc, bt2._SignedIntegerFieldClassConst):
        return ("int", fc.field_value_range, True, int(fc.preferred_display_base))
    if isinstance(fc, bt2._UnsignedIntegerFieldClassConst):
        return ("int", fc.field_value_range, False, int(fc.preferred_display_base))
    return (type(fc).__name__,)

counts, seen = {}, {}
for msg in bt2.TraceCollectionMessageIterator(trace):
    if type(msg) is not bt2._EventMessageConst:
        continue
    ev = msg.event
    counts[ev.name] = counts.get(ev.name, 0) + 1
    if ev.name in seen:
        continue
    want = declared.get(ev.name)
    if want is None:
        sys.exit(f"check_bt2: event {ev.name} is not in the metadata")
    got = {}
    for fname, field in ev.payload_field.items():
        got[fname.lstrip("_")] = kind(field.cls)
    if set(got) != set(want):
        sys.exit(f"check_bt2: {ev.name}: fields {sorted(got)}, declared {sorted(want)}")
    for fname, k in got.items():
        w = want[fname]
        ok = k[0] == w[0] and (k[0] != "int" or (k[1] == w[1] and k[2] == w[2] and k[3] == w[3]))
        if not ok:
            sys.exit(f"check_bt2: {ev.name}.{fname}: bt2 sees {k}, the metadata declares {w}")
    seen[ev.name] = got
cli = subprocess.run(["babeltrace2", trace], capture_output=True, text=True, check=True).stdout.count("\n")
for name in sorted(counts):
    print(f"{name}: {counts[name]} events, fields {', '.join(f'{f}:{k[0]}' for f, k in sorted(seen[name].items()))}")
total = sum(counts.values())
print(f"bt2 events {total}, babeltrace2 lines {cli}")
if total != cli:
    sys.exit("check_bt2: the bindings and the CLI disagree")
print("bt2 ok")
