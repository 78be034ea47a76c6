#!/usr/bin/python3
"""Check a kinstr trace with the real consumer, babeltrace2 (run in the guest).

  check_trace.py DIR [--count EVENT COMM N]... [--count-where EVENT COMM FIELD VALUE N]... [--values EVENT COMM FIELD V1,V2,...]...
                     [--field-eq EVENT COMM FIELD VALUE]... [--distinct EVENT COMM FIELD]...
                     [--discarded N] [--total N]

Always: babeltrace2 exits 0, writes nothing to stderr but 'Tracer discarded N events' warnings,
and timestamps never go backwards on a CPU. Prints one summary line, then 'trace ok', or the
first failed check and exits 1.
"""
import argparse
import collections
import re
import subprocess
import sys

LINE = re.compile(r'^\[(\d+)\] (?:\(\+[^)]*\) )?\S+ (\S+): \{ cpu_id = (\d+) \}, \{ (.*) \}$')
FIELD = re.compile(r'(\w+) = ("(?:[^"\\]|\\.)*"|[^,]+)(?:, |$)')
DISCARD = re.compile(r'[Tt]racer discarded (\d+) events?')


def fail(why):
    print(f"trace check failed: {why}")
    sys.exit(1)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("dir")
    ap.add_argument("--count", nargs=3, action="append", default=[], metavar=("EVENT", "COMM", "N"))
    ap.add_argument("--values", nargs=4, action="append", default=[], metavar=("EVENT", "COMM", "FIELD", "VALUES"))
    ap.add_argument("--field-eq", nargs=4, action="append", default=[], metavar=("EVENT", "COMM", "FIELD", "VALUE"))
    ap.add_argument("--count-where", nargs=5, action="append", default=[],
                    metavar=("EVENT", "COMM", "FIELD", "VALUE", "N"))
    ap.add_argument("--distinct", nargs=3, action="append", default=[], metavar=("EVENT", "COMM", "FIELD"),
                    help="print the field's distinct values (for the caller to compare)")
    ap.add_argument("--discarded", type=int)
    ap.add_argument("--total", type=int, help="events of every kind")
    a = ap.parse_args()

    p = subprocess.run(["babeltrace2", "--clock-cycles", "--no-delta", a.dir], capture_output=True, text=True,
                       errors="replace")
    if p.returncode != 0:
        fail(f"babeltrace2 exit {p.returncode}: " + " | ".join(p.stderr.strip().splitlines()[-6:]))
    discarded = 0
    warn_lines = 0
    for l in p.stderr.splitlines():
        m = DISCARD.search(l)
        if m:
            discarded += int(m.group(1))
            warn_lines += 1
        elif "discarded" in l.lower() or l.strip().startswith(("WARNING", "ERROR")) or "error" in l.lower():
            fail(f"babeltrace2 said: {l.strip()}")
    events = []
    last_ts = {}
    for l in p.stdout.splitlines():
        m = LINE.match(l)
        if not m:
            fail(f"babeltrace2 line not understood: {l[:200]}")
        ts, name, cpu, body = int(m.group(1)), m.group(2), int(m.group(3)), m.group(4)
        fields = {}
        for fm in FIELD.finditer(body):
            v = fm.group(2)
            fields[fm.group(1)] = v[1:-1] if v.startswith('"') else v
        if ts < last_ts.get(cpu, 0):
            fail(f"cpu {cpu}: timestamp {ts} after {last_ts[cpu]}")
        last_ts[cpu] = ts
        events.append((name, cpu, fields))
    print(f"babeltrace2: {len(events)} events on cpus {sorted(last_ts)}, {discarded} discarded "
          f"({warn_lines} warnings)")

    def select(ev, comm):
        return [f for n, _, f in events if n == ev and (comm == "*" or f.get("comm") == comm)]

    for ev, comm, n in a.count:
        got = select(ev, comm)
        if len(got) != int(n):
            fail(f"{len(got)} {ev} events of {comm}, expected {n}")
        tids = {f.get("tid") for f in got}
        print(f"{ev} {comm}: {len(got)} events, tids {sorted(tids)}")
    for ev, comm, field, value, n in a.count_where:
        got = [f for f in select(ev, comm) if f.get(field) == value]
        if len(got) != int(n):
            fail(f"{len(got)} {ev} events of {comm} with {field} = {value}, expected {n}")
        print(f"{ev} {comm} {field} = {value}: {len(got)} events")
    for ev, comm, field, values in a.values:
        got = collections.Counter(f.get(field) for f in select(ev, comm))
        want = collections.Counter(values.split(","))
        if got != want:
            diff = (got - want) + (want - got)
            fail(f"{ev} {comm} {field}: values differ: {dict(list(diff.items())[:5])}")
        print(f"{ev} {comm} {field}: {sum(want.values())} values as expected")
    for ev, comm, field, value in a.field_eq:
        got = select(ev, comm)
        bad = [f.get(field) for f in got if f.get(field) != value]
        if not got or bad:
            fail(f"{ev} {comm} {field}: {len(bad)} of {len(got)} events differ from {value} (e.g. {bad[:3]})")
        print(f"{ev} {comm} {field} = {value} in all {len(got)} events")
    for ev, comm, field in a.distinct:
        got = sorted({f.get(field) for f in select(ev, comm)}, key=str)
        if not got:
            fail(f"no {ev} events of {comm}")
        print(f"{ev} {comm} {field} distinct: {' '.join(map(str, got))}")
    if a.discarded is not None and discarded != a.discarded:
        fail(f"babeltrace2 reports {discarded} discarded events, expected {a.discarded}")
    if a.total is not None and len(events) != a.total:
        fail(f"{len(events)} events, expected {a.total}")
    print("trace ok")


main()
