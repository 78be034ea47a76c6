#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""The whole-kernel sweep (in the guest, kinstr.ko loaded): every probeable core function of
`kinstr -l`, in slices; per slice, under a 2-CPU workload, `kinstr count -d 1` at every entry and
every return (FUNC and FUNC%return), the live core text checked against the text read at the
start, `kinstr profile -d 1` of the slice, the text again, `kinstr trace -d 1` of a sample of
it, the text again, and the kernel log written since the sweep started scanned for splats. One
`kinstr batch` runs every command over one analysis of the kernel. Prints one line per slice and a summary; exit 1 on any
failure (a command that fails for another reason than a named refusal, text not restored,
a splat).

  sweep.py [--size N] (--all | --slices I,J,... | --sample K) [--with FUNC]... [--trace-every M]
           [--skip FILE] [--listing FILE] [--log FILE]

--skip leaves out the functions FILE names (one a line: what an earlier run swept), so the slices
are made over what remains; --listing writes every probeable function, in order, to FILE. Both,
and the names lines of --log, give a function of a shared name as NAME#K (the K-th of that name in
address order), which KASLR does not change; the commands get NAME@ADDR.
"""
import argparse
import atexit
import json
import os
import re
import shutil
import subprocess
import sys
import time

ap = argparse.ArgumentParser()
ap.add_argument("--size", type=int, default=500, help="functions per slice (default 500)")
g = ap.add_mutually_exclusive_group(required=True)
g.add_argument("--all", action="store_true", help="every slice")
g.add_argument("--slices", help="slice numbers (from 0), comma-separated")
g.add_argument("--sample", type=int, help="K slices spread evenly over the kernel, first and last included")
ap.add_argument("--with", dest="with_", action="append", default=[],
                help="also the slice holding FUNC (or, if FUNC is not probeable, the one where it would be)")
ap.add_argument("--trace-every", type=int, default=10, help="trace every M-th function of a slice (default 10)")
ap.add_argument("--kinstr", default="build/kinstr")
ap.add_argument("--log", help="append per-slice details (names, refusals) to this file")
ap.add_argument("--skip", help="leave out the functions named in this file (one a line)")
ap.add_argument("--listing", help="write the probeable functions, in order, to this file")
args = ap.parse_args()

tmp = "/tmp/kinstr-sweep"
shutil.rmtree(tmp, ignore_errors=True)
os.makedirs(tmp)
logf = open(args.log, "a") if args.log else None
# the kernel log from here on: a splat of an earlier test in the same guest (one that was expected
# there, like the test module's deliberate WARN) is not the sweep's
kmsg = os.open("/dev/kmsg", os.O_RDONLY | os.O_NONBLOCK)
os.lseek(kmsg, 0, os.SEEK_END)


def log(s):
    print(s, flush=True)
    if logf:
        logf.write(s + "\n")
        logf.flush()


t_start = time.time()
batch = subprocess.Popen([args.kinstr, "batch"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                         stderr=subprocess.STDOUT, text=True, bufsize=1)


def run(words):
    """One command through the batch: (rc, output lines)."""
    if logf:  # progress, so that a hung guest shows which command it was in
        logf.write("%.1f run %s (%d words)\n" % (time.time() - t_start, " ".join(words[:6]), len(words)))
        logf.flush()
    batch.stdin.write(" ".join(words) + "\n")
    batch.stdin.flush()
    out = []
    for line in batch.stdout:
        m = re.match(r"^batch: rc=(-?\d+) ", line)
        if m:
            return int(m.group(1)), out
        out.append(line.rstrip("\n"))
    raise SystemExit("FAIL kinstr batch ended early:\n" + "\n".join(out[-20:]))


t_start = time.time()
rc, out = run(["-l"])
if rc:
    raise SystemExit("FAIL kinstr -l: rc %d\n%s" % (rc, "\n".join(out[-10:])))
# a name kallsyms holds more than once is listed as NAME@ADDR, which every command takes; those
# come after the others, so that the slices of the unique names keep their numbers
funcs, by_addr, listed = [], [], set()
for line in out:
    p = line.split()
    if len(p) < 2 or p[1] not in ("jump", "trap", "ftrace") or p[0] in listed:
        continue  # a module's function has "[module]" second
    listed.add(p[0])
    (by_addr if "@" in p[0] else funcs).append(p[0])
nunique = len(funcs)
funcs += by_addr
# NAME@ADDR -> NAME#K and back: the address moves with KASLR from boot to boot, K does not
canon, real, seen = {}, {}, {}
for n in sorted(by_addr, key=lambda x: int(x.split("@")[1], 16)):
    base = n.split("@")[0]
    seen[base] = seen.get(base, 0) + 1
    canon[n] = "%s#%d" % (base, seen[base])
    real[canon[n]] = n
funcs = [canon.get(n, n) for n in funcs]
nlisted = len(funcs)
if args.listing:
    with open(args.listing, "w") as f:
        f.write("".join(n + "\n" for n in funcs))
skipped = ""
if args.skip:
    skip = set(open(args.skip).read().split())
    funcs = [n for n in funcs if n not in skip]
    skipped = ", %d left out (--skip), %d to sweep" % (nlisted - len(funcs), len(funcs))
nslices = (len(funcs) + args.size - 1) // args.size
log("sweep: %d probeable core functions (%d by a unique name, then %d as NAME@ADDR)%s, %d slices of %d, "
    "list in %.1f s" % (nlisted, nunique, len(by_addr), skipped, nslices, args.size, time.time() - t_start))

if args.all:
    chosen = list(range(nslices))
elif args.slices:
    chosen = [int(x) for x in args.slices.split(",")]
else:
    k = max(1, min(args.sample, nslices))
    chosen = sorted({round(i * (nslices - 1) / max(1, k - 1)) for i in range(k)})
for name in args.with_:
    if name in funcs:
        chosen.append(funcs.index(name) // args.size)
    else:  # refused now: the slice of the kernel-order neighbour it had in -l --all
        rc, o = run(["-l", "--all"])
        order = [l.split()[0] for l in o if len(l.split()) > 1 and not l.split()[1].startswith("[")]
        pos = set(funcs)
        i = order.index(name) if name in order else -1
        while i >= 0 and order[i] not in pos:
            i -= 1
        chosen.append(funcs.index(order[i]) // args.size if i >= 0 else 0)
chosen = sorted(set(c for c in chosen if 0 <= c < nslices))
log("sweep: slices %s" % ",".join(map(str, chosen)))

# the 2-CPU workload: workload.sh runs two writers itself; a getppid loop on top
wl = subprocess.Popen(["sh", "-c", "while :; do sh tests/vm/progs/workload.sh > /dev/null; done"],
                      start_new_session=True)
gp = subprocess.Popen(["build/tests/vm/progs/getppid_loop", "1000000000000"], stdout=subprocess.DEVNULL)


def stop_workload():
    for p, kill in ((wl, lambda: os.killpg(wl.pid, 15)), (gp, gp.kill)):
        if p.poll() is None:
            try:
                kill()
            except OSError:
                pass


atexit.register(stop_workload)  # also when a failure exits early

failures, refusals = [], []


line_re = re.compile(r"^kinstr: ([^ :]+): (.*)$")


def refused_in(out, names):
    """The names the lines of out refuse, each with its reason: "kinstr: SPEC: why", where SPEC is
    the name, or a site of it (NAME+0xOFF: its entry, else NAME%return) when that is not itself a
    spec of the command."""
    got = {}
    for line in out:
        m = line_re.match(line)
        if not m:
            continue
        base = re.sub(r"(%return|\+0x[0-9a-f]+)$", "", m.group(1))
        # a site of the name's (its entry, or a return: the module's refusal at install)
        for name in (m.group(1), base, base + "%return"):
            if name in names and name not in got:
                got[name] = m.group(2)
                break
    return got


def run_dropping(what, words_for, names, i):
    """Run a command (with --keep-going: the library's refusals are reported and left out) over
    names; where it still fails naming some (the module refused at install), drop them and run
    again. Returns (output, the names it ran with), or (None, []) when every one was refused."""
    names = list(names)
    for _ in range(100):
        if not names:
            return None, names  # every one refused by name: nothing left to run (not a failure)
        rc, out = run(words_for(names))
        bad = refused_in(out, names)
        for name, why in bad.items():
            refusals.append((i, what, name, why))
            if logf:
                logf.write("slice %d %s refused %s: %s\n" % (i, what, name, why))
        names = [n for n in names if n not in bad]
        if rc == 0:
            return out, names
        if not bad:
            failures.append("slice %d: %s failed (rc %d): %s" % (i, what, rc, " | ".join(out[-5:])))
            return None, names
    failures.append("slice %d: %s: too many refusals" % (i, what))
    return None, names


def text_ok(i, after):
    rc, out = run(["text-check"])
    if rc:
        failures.append("slice %d: text not restored after %s: %s" % (i, after, " | ".join(out[-4:])))
    return rc == 0


def splat(i):
    with open(tmp + "/dmesg", "a") as f:
        while True:
            try:
                rec = os.read(kmsg, 8192)
            except BlockingIOError:
                break
            except BrokenPipeError:  # records overwritten before they were read: go on with the next
                continue
            if not rec:
                break
            # "prio,seq,usec,flags;text" then continuation lines: the text is what splat-scan reads
            f.write(rec.decode(errors="replace").split(";", 1)[-1])
    r = subprocess.run(["sh", "tests/vm/splat-scan", tmp + "/dmesg"], capture_output=True, text=True)
    if r.returncode:
        failures.append("slice %d: kernel splat: %s" % (i, r.stdout.strip().splitlines()[0]))
    return r.returncode != 0


rc, out = run(["text-check"])  # the reference is the text read by -l, before any probe
if rc:
    failures.append("text differs before any probe: " + " | ".join(out[-4:]))
totals = {"probes": 0, "hits": 0, "timed": 0, "calls": 0, "events": 0}
for i in chosen:
    t0 = time.time()
    names = [real.get(n, n) for n in funcs[i * args.size:(i + 1) * args.size]]
    if logf:  # before anything runs: a slice that hangs or takes the guest down is known by its names
        logf.write("slice %d names: %s\n" % (i, " ".join(canon.get(n, n) for n in names)))
        logf.flush()
    nf0 = len(failures)
    # count: every entry and every return
    specs = [s for n in names for s in (n, n + "%return")]
    cjson = tmp + "/count.json"
    # FUNC%return refusals name the function: drop the spec that failed, not the function's entry
    out, counted = run_dropping("count", lambda s: ["count", "-k", "-d", "1", "--json", "-o", cjson] + s, specs, i)
    cnt_probes, cnt_hits = 0, 0
    if out is not None:
        d = json.load(open(cjson))
        cnt_probes = len(d["probes"])
        cnt_hits = sum(p["hits"] for p in d["probes"])
    if splat(i) or not text_ok(i, "count"):
        log("slice %d: FAIL after count" % i)
        break
    pjson = tmp + "/profile.json"
    out, timed = run_dropping("profile", lambda s: ["profile", "-k", "-d", "1", "--json", "-o", pjson] + s, names, i)
    calls = 0
    if out is not None:
        d = json.load(open(pjson))
        fl = d.get("functions", d if isinstance(d, list) else [])
        calls = sum(x.get("calls", 0) for x in fl) if isinstance(fl, list) else 0
    if splat(i) or not text_ok(i, "profile"):
        log("slice %d: FAIL after profile" % i)
        break
    tdir = tmp + "/trace"
    shutil.rmtree(tdir, ignore_errors=True)
    sample = names[::args.trace_every]
    out, traced = run_dropping("trace", lambda s: ["trace", "-k", "-d", "1", "-o", tdir] + s, sample, i)
    events = 0
    if out is not None:
        rc, rep = run(["report", tdir])
        if rc:
            failures.append("slice %d: kinstr report of the trace failed: %s" % (i, " | ".join(rep[-3:])))
        for line in rep:
            m = re.match(r"^events:\s+(\d+)", line)
            if m:
                events = int(m.group(1))
                break
    if splat(i) or not text_ok(i, "trace"):
        log("slice %d: FAIL after trace" % i)
        break
    totals["probes"] += cnt_probes
    totals["hits"] += cnt_hits
    totals["timed"] += len(timed)
    totals["calls"] += calls
    totals["events"] += events
    log("slice %d/%d: %d functions %s..%s: count %d probes %d hits, profile %d timed %d calls, "
        "trace %d functions %d events, text restored, %s, %.1f s"
        % (i, nslices, len(names), names[0], names[-1], cnt_probes, cnt_hits, len(timed), calls,
           len(traced), events, "FAIL" if len(failures) > nf0 else "ok", time.time() - t0))

os.killpg(wl.pid, 15)
gp.kill()
wl.wait()
gp.wait()
batch.stdin.close()
batch.wait()
for r in refusals:
    log("refused: slice %d %s %s: %s" % r)
log("sweep: %d slices, %d probes counted (%d hits), %d functions timed (%d calls), %d trace events, "
    "%d refusals, %d failures, %.1f s" % (len(chosen), totals["probes"], totals["hits"], totals["timed"],
                                          totals["calls"], totals["events"], len(refusals), len(failures),
                                          time.time() - t_start))
for f in failures:
    log("FAIL " + f)
if not failures:
    log("sweep: ok")
sys.exit(1 if failures else 0)
