#!/usr/bin/python3
"""kprobes that come after kinstr, on the same bytes (issue: a kprobe added while kinstr held the
site ended in an Oops). While 'kinstr count SPEC...' holds its sites, a kprobe event at each site,
at every instruction boundary inside its displaced bytes and at every boundary up to 4 bytes
before it (an optimized kprobe's jump from there would cover the site) must be refused by the
kernel; kinstr's counts must stay exact. Once kinstr is gone, a kprobe event at each site must be
accepted and count exactly.

  kprobe_fence.py N SPEC...   every SPEC in one function; getppid_loop N is the workload, and
                              with N > 0 every count (kinstr's, then the kprobes') must be N;
                              N = 0 checks the refusals only
"""
import os
import re
import subprocess
import sys
import tempfile
import time

KINSTR = "build/kinstr"
LOOP = "build/tests/vm/progs/getppid_loop"
T = "/sys/kernel/tracing"
BLACKLIST = "/sys/kernel/debug/kprobes/blacklist"


CNT = None


def fail(why):
    print(f"kprobe_fence: FAIL: {why}")
    if CNT and CNT.poll() is None:
        CNT.kill()  # its descriptor closes: every probe goes
        CNT.wait()
    sys.exit(1)


def run(*cmd):
    return subprocess.run(cmd, capture_output=True, text=True)


WHY = {}


def write_events(line):
    """One write(2) with O_APPEND, as 'echo >>' does (Python's "a" mode seeks: tracefs says EINVAL)."""
    fd = os.open(f"{T}/kprobe_events", os.O_WRONLY | os.O_APPEND)
    try:
        os.write(fd, (line + "\n").encode())
    finally:
        os.close(fd)


def kprobe_event(name, where):
    """Add a kprobe event; True when the kernel accepted it (else WHY[name] says why)."""
    try:
        write_events(f"p:{name} {where}")
        return True
    except OSError as e:
        WHY[name] = e.strerror
        return False


def drop_event(name):
    try:
        write_events(f"-:{name}")
    except OSError:
        pass


def fences(lo, hi):
    """Blacklist entries inside [lo, hi): the kernel names them by symbol, maybe an alias."""
    out = []
    with open(BLACKLIST) as f:
        for ln in f:
            m = re.match(r"0x([0-9a-f]+)-0x([0-9a-f]+)", ln)
            if m and lo <= int(m.group(1), 16) and int(m.group(2), 16) <= hi:
                out.append(ln)
    return out


n, specs = int(sys.argv[1]), sys.argv[2:]
plan = run(KINSTR, "count", "--dry-run", *specs)
if plan.returncode:
    fail(f"dry run: {plan.stdout}{plan.stderr}")
sites = []  # (name, class, addr, len)
for ln in plan.stdout.splitlines():
    m = re.match(r"^(\S+)\s+(jump|trap|ftrace)\s+0x([0-9a-f]+)\s+((?:[0-9a-f]{2} )+)", ln)
    if m:
        sites.append((m.group(1), m.group(2), int(m.group(3), 16), len(m.group(4).split())))
func = sites[0][0].split("+")[0].split("%")[0] if sites else fail("no sites in the dry run")
dis = run(KINSTR, "disasm", "--json", func)
if dis.returncode:
    fail(f"disasm: {dis.stderr}")
import json
d = json.loads(dis.stdout)
insns = [i for b in d["blocks"] for i in b["insns"]] if "blocks" in d else d["insns"]
bounds = sorted(int(i["addr"], 16) for i in insns)
start = min(bounds)
span = (start - 4, max(int(i["addr"], 16) + i["len"] for i in insns))

cands = []  # (what, offset)
for name, cls, addr, ln in sites:
    if cls == "ftrace":
        continue  # ftrace arbitrates its own site's users
    cands.append(("at " + name, addr - start))
    cands += [("inside " + name, b - start) for b in bounds if addr < b < addr + ln]
    cands += [("before " + name, b - start) for b in bounds if addr - 4 <= b < addr]
print(f"{func}: {len(sites)} kinstr sites, {len(cands)} kprobe addresses to try")

# control: without kinstr, the kernel takes a kprobe at each of these addresses (one it never takes,
# such as the int3 filler after a ret, is left out), so a refusal below is kinstr's fence
kept = []
for i, (what, off) in enumerate(cands):
    if kprobe_event(f"kinstr_ctl{i}", f"{func}+{off:#x}"):
        drop_event(f"kinstr_ctl{i}")
        kept.append((what, off))
    elif what.startswith("at "):
        fail(f"control: before kinstr, a kprobe at {func}+{off:#x} ({what}) was refused: {WHY.get(f'kinstr_ctl{i}')}")
    else:
        print(f"control: the kernel never takes a kprobe at {func}+{off:#x} ({what}): {WHY.get(f'kinstr_ctl{i}')}")
cands = kept
print(f"control: all {len(cands)} kprobes accepted before kinstr")
before = len(fences(*span))
fifo = os.path.join(tempfile.mkdtemp(), "hold")
os.mkfifo(fifo)
cnt = CNT = subprocess.Popen([KINSTR, "count", "-c", f"cat {fifo}", *specs], stdout=subprocess.PIPE,
                             stderr=subprocess.STDOUT, text=True)
held = [s for s in sites if s[1] != "ftrace"]
deadline = time.time() + 120
while len(fences(*span)) < before + len(held):
    if cnt.poll() is not None or time.time() > deadline:
        fail(f"kinstr's fences never appeared in {BLACKLIST}: {cnt.stdout.read() if cnt.poll() is not None else ''}")
    time.sleep(0.2)
print("fences:", "".join(fences(*span)).strip().replace("\n", "; "))

bad = []
for i, (what, off) in enumerate(cands):
    ev = f"kinstr_fence{i}"
    if kprobe_event(ev, f"{func}+{off:#x}"):
        bad.append(f"{what}: {func}+{off:#x} accepted")
        drop_event(ev)
    else:
        print(f"refused as it must be: kprobe at {func}+{off:#x} ({what}): {WHY.get(ev)}")
if n and subprocess.run([LOOP, str(n)], capture_output=True).returncode:
    fail("getppid_loop failed")
with open(fifo, "w"):
    pass  # the child (cat) sees EOF and exits: count prints its table
out, _ = cnt.communicate(timeout=120)
print(out.strip())
if cnt.returncode:
    fail(f"kinstr count exited {cnt.returncode}")
if bad:
    fail("; ".join(bad))
hits = [int(m.group(1)) for m in re.finditer(r"^\S+\s+(?:jump|trap|ftrace)\s+\S+\s+(\d+)$", out, re.M)]
if len(hits) != len(sites) or (n and any(h != n for h in hits)):
    fail(f"kinstr counted {hits}, want {n} at each of {len(sites)} probes")

deadline = time.time() + 30
while fences(*span) and len(fences(*span)) > before:
    if time.time() > deadline:
        fail("kinstr's fences were not removed")
    time.sleep(0.2)
# the same addresses now take kprobes, and those count exactly
if not n:
    print(f"kprobe_fence: ok: {len(cands)} kprobes refused while kinstr held {len(held)} sites")
    sys.exit(0)
evs = []
for i, (name, cls, addr, ln) in enumerate(held):
    ev = f"kinstr_after{i}"
    if not kprobe_event(ev, f"{func}+{addr - start:#x}"):
        fail(f"after kinstr: a kprobe at {name} was refused: {WHY.get(ev)}")
    evs.append(ev)
for ev in evs:
    with open(f"{T}/events/kprobes/{ev}/enable", "w") as f:
        f.write("1")
if subprocess.run([LOOP, str(n)], capture_output=True).returncode:
    fail("getppid_loop failed")
for ev in evs:
    with open(f"{T}/events/kprobes/{ev}/enable", "w") as f:
        f.write("0")
prof = {ln.split()[0]: int(ln.split()[1]) for ln in open(f"{T}/kprobe_profile")}
for ev in evs:
    drop_event(ev)
got = [prof.get(ev, -1) for ev in evs]
print(f"after kinstr: kprobe hits {got}")
if any(g != n for g in got):
    fail(f"kprobes after kinstr counted {got}, want {n} each")
print(f"kprobe_fence: ok: {len(cands)} kprobes refused while kinstr held {len(held)} sites, "
      f"{len(evs)} accepted after, exact")
