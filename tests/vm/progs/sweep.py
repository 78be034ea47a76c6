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

  sweep.py [--mode count|cover] [--size N] (--all | --slices I,J,... | --sample K) [--with FUNC]...
           [--trace-every M] [--random K --seed S] [--skip FILE] [--listing FILE] [--log FILE]
           [--edges-every M] [--ref R]

--mode cover: per slice, under a broad workload (tests/vm/progs/broad_workload.sh: file I/O,
pipes, fork/exec, TCP and UDP over loopback, timers), the library's plan (`kinstr cover
--dry-run --json`, its refusals counted by reason), then `kinstr cover -k -d 1 --json` of the
slice (--edges on every M-th slice, --edges-every, default 10), the module's refusals at
install counted by reason, the text checked, the kernel log scanned, KINSTR_IOC_LIMITS and
kinstr's /proc/vmallocinfo areas back to what they were before the sweep; then the kprobe
reference on R covered functions of the slice (--ref, default 2; drawn at random, seeded,
among those tests/vm/progs/ref_workload runs): with the background workload stopped, the
block counts of `cover -c 'ref_workload N'` for N = B, 2B, 3B against the hits of a kprobe
event on each block's first instruction for the same N, compared as differences (what does
not depend on N cancels out); a function whose differences are not the same from B to 2B as
from 2B to 3B, under cover or under kprobes, is noisy (something besides the workload ran it)
and left out of the comparison, counted; any other difference fails the slice.

--random K --seed S: the slices are made over a seeded random sample of K functions of the
listing (the seed printed; --listing then writes the sample), not over all of them.

--skip leaves out the functions FILE names (one a line: what an earlier run swept), so the slices
are made over what remains; --listing writes every probeable function, in order, to FILE. Both,
and the names lines of --log, give a function of a shared name as NAME#K (the K-th of that name in
address order), which KASLR does not change; the commands get NAME@ADDR.
"""
import argparse
import atexit
import fcntl
import json
import os
import random
import re
import struct
import shutil
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from tracefs import TR, quiet_event, write_tr  # noqa: E402

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
ap.add_argument("--mode", choices=("count", "cover"), default="count",
                help="count: count, profile and trace of each slice (default); cover: the code cache")
ap.add_argument("--random", type=int, help="sweep a seeded random sample of K functions of the listing")
ap.add_argument("--seed", type=int, help="the sample's seed (with --random; default: from the clock, printed)")
ap.add_argument("--edges-every", type=int, default=10, help="cover: --edges on every M-th slice (default 10)")
ap.add_argument("--ref", type=int, default=2, help="cover: functions per slice checked against kprobes (default 2)")
ap.add_argument("--ref-base", type=int, default=10, help="cover: the reference's rounds B (default 10)")
args = ap.parse_args()
if args.seed is not None and args.random is None:
    ap.error("--seed goes with --random")

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
sampled, nall = "", len(funcs)
if args.random is not None:
    # the sample over the whole listing, in listing order: the same seed gives the same functions
    # on every boot (the canonical names do not move with KASLR), so --skip resumes it
    if args.seed is None:
        args.seed = int(time.time())
    pick = set(random.Random(args.seed).sample(funcs, min(args.random, len(funcs))))
    sampled = ", a random sample of %d of the %d (seed %d)" % (len(pick), len(funcs), args.seed)
    funcs = [n for n in funcs if n in pick]
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
log("sweep: %d probeable core functions (%d by a unique name, then %d as NAME@ADDR)%s%s, %d slices of %d, "
    "list in %.1f s" % (nall, nunique, len(by_addr), sampled, skipped, nslices, args.size, time.time() - t_start))

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

# the 2-CPU workload: workload.sh runs two writers itself; a getppid loop on top; for cover, the
# broad one (file I/O, pipes, fork/exec, loopback networking, timers) instead of workload.sh
progs = "build/tests/vm/progs"
if args.mode == "cover":
    wl = subprocess.Popen(["sh", "tests/vm/progs/broad_workload.sh", progs], start_new_session=True,
                          stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
else:
    wl = subprocess.Popen(["sh", "-c", "while :; do sh tests/vm/progs/workload.sh > /dev/null; done"],
                          start_new_session=True)
gp = subprocess.Popen([progs + "/getppid_loop", "1000000000000"], stdout=subprocess.DEVNULL,
                      start_new_session=True)


def stop_workload():
    for p, kill in ((wl, lambda: os.killpg(wl.pid, 15)), (gp, gp.kill)):
        if p.poll() is None:
            try:
                kill()
            except OSError:
                pass


def pause_workload(stop):
    """SIGSTOP (or SIGCONT) the background workload's process groups: the kprobe reference runs alone."""
    for p in (wl, gp):
        try:
            os.killpg(p.pid, 19 if stop else 18)
        except OSError:
            pass


atexit.register(stop_workload)  # also when a failure exits early

class Failures(list):
    """Each failure into the log as it happens (a guest stopped before its end still leaves it there)."""

    def append(self, f):
        super().append(f)
        if logf:
            logf.write("failure: %s\n" % f)
            logf.flush()


failures, refusals = Failures(), []


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


KINSTR_IOC_LIMITS = 0xb708  # _IO(0xb7, 0x08)
LIMITS = struct.Struct("<II12Q")  # struct kinstr_limits, ABI 0.10: 104 bytes


def vmalloc_areas():
    """The kernel's count of the vmalloc areas kinstr.ko's code asked for (as cache_check reads it)."""
    with open("/proc/vmallocinfo") as f:
        return sum(1 for line in f if " [kinstr]" in line)


def held(base=None, wait=10.0):
    """What kinstr holds now (KINSTR_IOC_LIMITS: probes, trace bytes, timers, areas, their text and
    per-CPU bytes; /proc/vmallocinfo's kinstr areas). With base: waits up to `wait` s (the module
    frees after quiescence, from its worker) for all of it to be back to base; "back" says if it is."""
    t = time.time()
    while True:
        buf = bytearray(LIMITS.pack(LIMITS.size, 0, *([0] * 12)))
        fd = os.open("/dev/kinstr", os.O_RDWR)
        try:
            fcntl.ioctl(fd, KINSTR_IOC_LIMITS, buf)
        finally:
            os.close(fd)
        v = LIMITS.unpack(bytes(buf))
        h = dict(zip(("probes", "trace_bytes", "timers", "areas", "text_bytes", "percpu_bytes"), v[8:14]))
        h["vmalloc"] = vmalloc_areas()
        if base is None:
            return h
        h["back"] = all(h[k] == (base[k] if k == "vmalloc" else 0) for k in base if k != "back")
        if h["back"] or time.time() - t > wait:
            return h
        time.sleep(0.2)


def fmt_held(h):
    return "%d probes, %d trace bytes, %d timers, %d areas, %d text bytes, %d per-CPU bytes, %d vmalloc areas" % (
        h["probes"], h["trace_bytes"], h["timers"], h["areas"], h["text_bytes"], h["percpu_bytes"], h["vmalloc"])


def json_of(out):
    """The JSON object a command printed (its one line that starts with '{')."""
    for line in reversed(out):
        if line.startswith("{"):
            try:
                return json.loads(line)
            except ValueError:
                return None
    return None


def key_of(spec):
    """How a spec is found in cover's JSON: NAME@ADDR by its address, a unique NAME by its name."""
    return int(spec.split("@")[1], 16) if "@" in spec else spec


def keys_of(entry):
    return (entry["function"], int(entry["addr"], 16))


def reason_of(r):
    """A refusal's reason without what names the function: the kind, then the module's words."""
    why = r["why"]
    m = re.search(r"the module refused the code cache: (.*)$", why)
    if m:
        why = m.group(1)
    elif r["by"] != "module":
        why = re.sub(r"^.*?: (the copy changed|an entry point|\d+ counters)", r"\1", why)
    why = re.sub(r"0x[0-9a-f]+", "0x?", why)
    why = re.sub(r"\(cache offset 0x\?\)", "", why).strip()
    return (r["by"], ("%s: %s" % (r["refused"], why)) if r["by"] == "library" else why)


def ref_script(n):
    """A script that runs ref_workload N: the batch takes -c CMD as one word."""
    path = "%s/ref%d.sh" % (tmp, n)
    if not os.path.exists(path):
        with open(path, "w") as f:
            f.write("#!/bin/sh\nexec %s/%s/ref_workload %d\n" % (os.getcwd(), progs, n))
        os.chmod(path, 0o755)
    return path


def counts_of(d):
    """{(spec key) -> {offset: count}} of a cover JSON."""
    return {keys_of(f): {b["offset"]: b["count"] for b in f["counts"]} for f in d["functions"]}


def kprobe_runs(i, picked, blocks, ns):
    """Hits of a kprobe event on each block's first instruction, one run of ref_workload per N in ns
    (the events enabled around each run); a block kprobes refuse is left out. -> ({(fn, off): [hits per
    run]}, refused blocks)."""
    write_tr(TR + "/kprobe_events", "")
    names, refused = {}, 0
    for fi, (spec, addr) in enumerate(picked):
        for off in blocks[fi]:
            ev = "s%d_%d" % (fi, off)
            try:
                write_tr(TR + "/kprobe_events", "p:kswp/%s 0x%x\n" % (ev, addr + off), append=True)
            except OSError:
                refused += 1
                continue
            names[ev] = (spec, off)
    hits = {v: [] for v in names.values()}
    if not names:
        return hits, refused

    def profile():
        got = {}
        with open(TR + "/kprobe_profile") as f:
            for line in f:
                p = line.split()
                ev = p[0].split("/")[-1]
                if ev in names:
                    got[names[ev]] = int(p[1])
        return got
    try:
        for n in ns:
            before = profile()
            write_tr(TR + "/events/kswp/enable", "1")
            r = subprocess.run([ref_script(n)], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
            write_tr(TR + "/events/kswp/enable", "0")
            if r.returncode:
                failures.append("slice %d: ref_workload %d failed under kprobes (rc %d): %s"
                                % (i, n, r.returncode, r.stderr.strip()[-200:]))
                return None, refused
            after = profile()
            for b in hits:
                hits[b].append(after.get(b, 0) - before.get(b, 0))
    finally:
        write_tr(TR + "/kprobe_events", "")
    return hits, refused


def reference(i, covered, nblocks):
    """The kprobe reference on up to args.ref of the slice's covered functions (see the top)."""
    r = {"functions": 0, "nonzero": 0, "blocks": 0, "noisy": 0, "kprobe_refused": 0, "mismatches": 0}
    if not covered or args.ref <= 0:
        return r
    B = args.ref_base
    ns = (B, 2 * B, 3 * B)
    rng = random.Random("%s/%d/%s" % (args.seed, i, covered[0]))
    pause_workload(True)
    try:
        time.sleep(0.5)  # what the workload had in flight settles
        # which of them the reference workload runs at all
        rc, out = run(["cover", "-k", "--json", "-c", ref_script(B)] + covered)
        d = json_of(out)
        if rc or d is None:
            failures.append("slice %d: reference: cover -c ref_workload %d failed (rc %d): %s"
                            % (i, B, rc, " | ".join(out[-3:])))
            return r
        spec_of = {}
        for spec in covered:
            spec_of[key_of(spec)] = spec
        ran, idle = [], []
        for f in d["functions"]:
            spec = spec_of.get(f["function"]) or spec_of.get(int(f["addr"], 16))
            if spec is None or len(f["counts"]) > 200:
                continue
            (ran if any(b["count"] for b in f["counts"]) else idle).append((spec, int(f["addr"], 16)))
        rng.shuffle(ran)
        rng.shuffle(idle)
        picked = (ran + idle)[:args.ref]
        if not picked:
            return r
        specs = [p[0] for p in picked]
        cov = []  # per N: {(spec, off): count}
        for n in ns:
            with quiet_event():
                rc, out = run(["cover", "--json", "-c", ref_script(n)] + specs)
            d = json_of(out)
            if rc or d is None:
                failures.append("slice %d: reference: cover -c ref_workload %d of %s failed (rc %d): %s"
                                % (i, n, " ".join(specs), rc, " | ".join(out[-3:])))
                return r
            c = {}
            for f in d["functions"]:
                spec = next((s for s, a in picked if a == int(f["addr"], 16)), None)
                for b in f["counts"]:
                    c[(spec, b["offset"])] = b["count"]
            cov.append(c)
        blocks = [sorted(off for (s, off) in cov[0] if s == spec) for spec, _ in picked]
        kh, refused = kprobe_runs(i, picked, blocks, ns)
        if kh is None:
            return r
        r["kprobe_refused"] = refused
        for fi, (spec, _) in enumerate(picked):
            bl = [(spec, off) for off in blocks[fi] if (spec, off) in kh]
            if not bl:
                continue
            dc = {b: (cov[1][b] - cov[0][b], cov[2][b] - cov[1][b]) for b in bl}
            dk = {b: (kh[b][1] - kh[b][0], kh[b][2] - kh[b][1]) for b in bl}
            r["functions"] += 1
            r["nonzero"] += any(dc[b][0] or dk[b][0] for b in bl)
            if any(dc[b][0] != dc[b][1] or dk[b][0] != dk[b][1] for b in bl):
                r["noisy"] += 1
                if logf:
                    logf.write("slice %d reference: %s noisy: %s\n" % (i, spec, " ".join(
                        "+0x%x:%s/%s" % (b[1], dc[b], dk[b]) for b in bl if dc[b][0] != dc[b][1] or dk[b][0] != dk[b][1])[:600]))
                continue
            r["blocks"] += len(bl)
            bad = [b for b in bl if dc[b] != dk[b]]
            if bad:
                r["mismatches"] += len(bad)
                failures.append("slice %d: reference: %s: block counts differ from kprobe hits (per %d rounds of "
                                "ref_workload): %s" % (i, spec, B, ", ".join("+0x%x cover %d kprobe %d" % (
                                    b[1], dc[b][0], dk[b][0]) for b in bad[:8])))
            if logf:
                logf.write("slice %d reference: %s: %d blocks, per %d rounds %s\n" % (i, spec, len(bl), B, " ".join(
                    "+0x%x:%d" % (b[1], dc[b][0]) for b in bl)[:600]))
    finally:
        write_tr(TR + "/kprobe_events", "")
        pause_workload(False)
    return r


def cover_slice(i, names):
    """The cover sweep's slice; the middle of its line, or None when it must stop (failure logged)."""
    edges = args.edges_every > 0 and i % args.edges_every == 0
    ex = ["--edges"] if edges else []
    sreasons = {}  # this slice's refusals by reason: logged for the host, which sums them over the slices that passed
    # the library's plan: which functions it refuses, and why
    rc, out = run(["cover", "--dry-run", "--json"] + ex + names)
    d = json_of(out)
    if rc or d is None:
        failures.append("slice %d: cover --dry-run failed (rc %d): %s" % (i, rc, " | ".join(out[-5:])))
        log("slice %d: FAIL after cover --dry-run" % i)
        return None
    lib = {}
    for f in d["functions"]:
        if "refused" in f:
            for k in keys_of(f):
                lib[k] = f
    planned = [n for n in names if key_of(n) not in lib]
    for f in d["functions"]:
        if "refused" in f:
            k = reason_of({"by": "library", "refused": f["refused"], "why": f["why"]})
            reasons[k] = reasons.get(k, 0) + 1
            sreasons[k] = sreasons.get(k, 0) + 1
            if logf:
                logf.write("slice %d cover plan refused %s: %s: %s\n" % (i, f["function"], f["refused"], f["why"]))
    ctot["functions"] += len(names)
    ctot["planned"] += len(planned)
    ctot["lib_refused"] += len(names) - len(planned)
    covered, nb, nhit, passes, nmod, flow = [], 0, 0, 0, 0, [0, 0, 0]
    if planned:
        rc, out = run(["cover", "-k", "-d", "1", "--json"] + ex + planned)
        d = json_of(out)
        if rc or d is None:
            failures.append("slice %d: cover -k failed (rc %d): %s" % (i, rc, " | ".join(out[-5:])))
        else:
            spec_of = {key_of(n): n for n in planned}
            for f in d["functions"]:
                spec = spec_of.get(f["function"]) or spec_of.get(int(f["addr"], 16))
                if spec:
                    covered.append(spec)
                nb += f["blocks"]
                nhit += f["covered"]
                passes += sum(b["count"] for b in f["counts"])
            for r in d["refused"]:
                if r["by"] == "library":  # the plan at the function accepted it, the dry run's at +1 GiB not
                    if logf:
                        logf.write("slice %d cover -k refused by the library (the dry run planned it) %s: %s\n"
                                   % (i, r["function"], r["why"]))
                    continue
                nmod += 1
                k = reason_of(r)
                reasons[k] = reasons.get(k, 0) + 1
                sreasons[k] = sreasons.get(k, 0) + 1
                refusals.append((i, "cover", r["function"], r["why"]))
                if logf:
                    logf.write("slice %d cover refused at install %s: %s\n" % (i, r["function"], r["why"]))
            if edges:
                flow = [d.get("flow_conserved", 0), d.get("flow_differs", 0), d.get("flow_unseen", 0)]
    ctot["covered"] += len(covered)
    ctot["mod_refused"] += nmod
    ctot["blocks"] += nb
    ctot["hit"] += nhit
    ctot["passes"] += passes
    if edges:
        ctot["edge_slices"] += 1
        for k, v in zip(("flow_conserved", "flow_differs", "flow_unseen"), flow):
            ctot[k] += v
    if logf:
        logf.write("slice %d reasons: %s\n" % (i, json.dumps([[b, w, n] for (b, w), n in sorted(sreasons.items())])))
        logf.flush()
    if splat(i) or not text_ok(i, "cover"):
        log("slice %d: FAIL after cover" % i)
        return None
    mem = held(mem0)
    if not mem["back"]:
        failures.append("slice %d: kinstr still holds after cover: %s (before: %s)" % (i, fmt_held(mem), fmt_held(mem0)))
        log("slice %d: FAIL after memory" % i)
        return None
    ref = reference(i, covered, nb)
    for k in ("functions", "nonzero", "blocks", "noisy", "kprobe_refused", "mismatches"):
        ctot["ref_" + k] += ref[k]
    if splat(i) or not text_ok(i, "the kprobe reference"):
        log("slice %d: FAIL after reference" % i)
        return None
    mem = held(mem0)
    if not mem["back"]:
        failures.append("slice %d: kinstr still holds after the reference: %s" % (i, fmt_held(mem)))
    return ("cover%s %d planned %d covered %d refused at install %d blocks %d hit %d passes%s, "
            "reference %d functions (%d run by it) %d blocks %d noisy %d mismatches, text restored, memory back"
            % (" --edges" if edges else "", len(planned), len(covered), nmod, nb, nhit, passes,
               " flow %d conserved %d differ %d unseen" % tuple(flow) if edges else "",
               ref["functions"], ref["nonzero"], ref["blocks"], ref["noisy"], ref["mismatches"]))


rc, out = run(["text-check"])  # the reference is the text read by -l, before any probe
if rc:
    failures.append("text differs before any probe: " + " | ".join(out[-4:]))
mem0 = held()  # kinstr's memory before any probe: what every slice must come back to
log("sweep: kinstr holds before the first slice: %s" % fmt_held(mem0))
totals = {"probes": 0, "hits": 0, "timed": 0, "calls": 0, "events": 0}
ctot = {k: 0 for k in ("functions", "planned", "lib_refused", "covered", "mod_refused", "blocks", "hit",
                       "passes", "edge_slices", "flow_conserved", "flow_differs", "flow_unseen", "ref_functions",
                       "ref_nonzero", "ref_blocks", "ref_noisy", "ref_kprobe_refused", "ref_mismatches")}
reasons = {}  # (by, reason) -> functions
for i in chosen:
    t0 = time.time()
    names = [real.get(n, n) for n in funcs[i * args.size:(i + 1) * args.size]]
    if logf:  # before anything runs: a slice that hangs or takes the guest down is known by its names
        logf.write("slice %d names: %s\n" % (i, " ".join(canon.get(n, n) for n in names)))
        logf.flush()
    nf0 = len(failures)
    if args.mode == "cover":
        line = cover_slice(i, names)
        if line is None:
            break
        log("slice %d/%d: %d functions %s..%s: %s, %s, %.1f s"
            % (i, nslices, len(names), canon.get(names[0], names[0]), canon.get(names[-1], names[-1]), line,
               "FAIL" if len(failures) > nf0 else "ok", time.time() - t0))
        continue
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

stop_workload()
wl.wait()
gp.wait()
batch.stdin.close()
batch.wait()
# the batch is gone: every descriptor of kinstr's closed; all it held must come back
mem = held(mem0)
if not mem["back"]:
    failures.append("after the sweep, kinstr still holds: %s (before: %s)" % (fmt_held(mem), fmt_held(mem0)))
log("sweep: kinstr holds after the last slice: %s" % fmt_held(mem))
for r in refusals:
    log("refused: slice %d %s %s: %s" % r)
if args.mode == "cover":
    for (by, why), n in sorted(reasons.items(), key=lambda kv: -kv[1]):
        log("refusals: %d by the %s: %s" % (n, by, why))
    log("sweep: %d slices, %d functions: %d planned (%d refused by the library), %d covered (%d refused by the "
        "module at install), %d blocks, %d hit, %d block passes; --edges on %d slices: flow conserved in %d "
        "blocks, differs in %d, unseen %d; kprobe reference: %d functions (%d run by it), %d blocks compared, "
        "%d noisy functions, %d blocks kprobes refused, %d mismatches; %d failures, %.1f s"
        % (len(chosen), ctot["functions"], ctot["planned"], ctot["lib_refused"], ctot["covered"],
           ctot["mod_refused"], ctot["blocks"], ctot["hit"], ctot["passes"], ctot["edge_slices"],
           ctot["flow_conserved"], ctot["flow_differs"], ctot["flow_unseen"], ctot["ref_functions"],
           ctot["ref_nonzero"], ctot["ref_blocks"], ctot["ref_noisy"], ctot["ref_kprobe_refused"],
           ctot["ref_mismatches"], len(failures), time.time() - t_start))
else:
    log("sweep: %d slices, %d probes counted (%d hits), %d functions timed (%d calls), %d trace events, "
        "%d refusals, %d failures, %.1f s" % (len(chosen), totals["probes"], totals["hits"], totals["timed"],
                                              totals["calls"], totals["events"], len(refusals), len(failures),
                                              time.time() - t_start))
for f in failures:
    log("FAIL " + f)
if not failures:
    log("sweep: ok")
sys.exit(1 if failures else 0)
