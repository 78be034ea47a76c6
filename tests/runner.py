#!/usr/bin/python3
"""kinstr's whole test suite (started by tests/run, after scripts/setup): build, host unit tests, harness self-tests, VM tests.

Ends with 'N passed, N failed, N skipped' and exits non-zero when anything failed.
A kernel splat in the guest fails the test during which it appeared, even if that test
passed its own checks; a splat outside any test fails the 'guest kernel log' check.
"""
import argparse
import json
import os
import re
import subprocess
import sys
import threading
import time

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
os.chdir(TOP)
# what a splat looks like (tests/vm/splat-patterns, as tests/vm/splat-scan reads it)
with open(os.path.join(TOP, "tests/vm/splat-patterns")) as _f:
    _SPLAT = re.compile("|".join(f"(?:{l.rstrip(chr(10))})" for l in _f if l.strip() and not l.startswith("#")))
# boot advice that matches the patterns but is no splat (as tests/vm/splat-scan leaves out)
with open(os.path.join(TOP, "tests/vm/splat-allow")) as _f:
    _ALLOW = [re.compile(l.rstrip("\n")) for l in _f if l.strip() and not l.startswith("#")]


class SPLAT:
    @staticmethod
    def search(line):
        return _SPLAT.search(line) and not any(a.search(line) for a in _ALLOW)

results = []  # (status, name, why)
_lock = threading.Lock()
_lane = threading.local()  # a VM lane's lines, printed together when the lane ends


def report(status, name, why="", secs=None, detail=""):
    t = f" ({secs:.1f}s)" if secs is not None else ""
    line = f"{status.upper():4} {name}{t}"
    if why:
        line += f": {why}"
    lines = [line]
    if detail and status == "fail":
        lines += [f"     | {l}" for l in detail.rstrip().splitlines()[-25:]]
    with _lock:
        results.append((status, name, why))
        buf = getattr(_lane, "lines", None)
        if buf is None:
            print("\n".join(lines), flush=True)
        else:
            buf.extend(lines)


def run(cmd, timeout=None, **kw):
    t0 = time.monotonic()
    try:
        p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=timeout,
                           stdin=subprocess.DEVNULL, **kw)
        return p.returncode, p.stdout.decode(errors="replace"), time.monotonic() - t0
    except subprocess.TimeoutExpired as e:
        return None, (e.stdout or b"").decode(errors="replace"), time.monotonic() - t0


def step_build(args):
    rc, out, secs = run(["make", f"-j{os.cpu_count() or 2}", "all", "kmods", "bench", "deb"], timeout=1800)
    if rc != 0:
        report("fail", "build: make (module for every kernel, library, CLI, tests, benchmarks, packages) with no warnings",
               f"exit {rc}", secs, out)
        return False
    warn = [l for l in out.splitlines() if re.search(r"\bwarning:", l)]
    report("fail" if warn else "pass", "build: make (module for every kernel, library, CLI, tests, benchmarks, packages) with no warnings",
           f"{len(warn)} warnings" if warn else "", secs, "\n".join(warn))
    return not warn


def step_unit(args):
    d = "build/tests/unit"
    progs = sorted(os.path.join(d, f) for f in os.listdir(d)
                   if f.startswith("test_") and "." not in f and os.access(os.path.join(d, f), os.X_OK)) \
        if os.path.isdir(d) else []
    progs += sorted(os.path.join("tests/unit", f) for f in os.listdir("tests/unit")
                    if f.startswith("test_") and f.endswith(".sh"))
    for prog in progs:
        base = os.path.basename(prog)
        if args.k and not re.search(args.k, base):
            continue
        rc, out, secs = run([prog], timeout=600)
        cases = 0
        for line in out.splitlines():
            m = re.match(r"(PASS|FAIL|SKIP) (\S+)(?::\s*(.*))?$", line)
            if m:
                cases += 1
                report(m.group(1).lower(), f"unit/{base}: {m.group(2)}", m.group(3) or "",
                       detail=out if m.group(1) == "FAIL" else "")
        if rc is None:
            report("fail", f"unit/{base}", "timed out", secs, out)
        elif rc != 0 and not any(s == "fail" and n.startswith(f"unit/{base}:") for s, n, _ in results):
            report("fail", f"unit/{base}", f"exit {rc} without a FAIL line", secs, out)
        elif cases == 0:
            report("fail", f"unit/{base}", "ran no case", secs, out)


def vm(cmd, out, timeout=300, extra=(), cpu=None):
    env = dict(os.environ, KINSTR_VM_CPU=cpu) if cpu else None
    return run(["tests/vm/run", "-q", "--out", out, "--timeout", str(timeout), *extra, "--", cmd],
               timeout=timeout + 60, env=env)


def step_selftest(args):
    """The harness must be able to fail: exit statuses, splats and hangs are all reported."""
    checks = [
        ("harness: a failing guest command fails the run with its exit status",
         "echo about to fail; exit 3", 120, lambda rc, o: rc == 3 and "about to fail" in o),
        ("harness: a kernel WARNING fails the run even though the command exited 0",
         "insmod tests/vm/modules/kinstr_test_warn.ko && echo loaded", 120,
         lambda rc, o: rc == 126 and "loaded" in o and "splat" in o and "WARNING" in o),
        ("harness: a hung guest ends in a timeout failure, not a stuck run",
         "sleep 100000", 30, lambda rc, o: rc == 124 and "timed out" in o),
    ]
    for i, (name, cmd, tmo, ok) in enumerate(checks):
        if args.k and not re.search(args.k, name):
            continue
        rc, out, secs = vm(cmd, f"build/vm/selftest{i}", tmo)
        report("pass" if ok(rc, out) else "fail", name, "" if ok(rc, out) else f"harness exit {rc}",
               secs, out)


def split_log(text):
    """Map test index -> kernel log lines printed while it ran; None -> lines outside any test."""
    sections, cur = {None: []}, None
    for line in text.splitlines():
        m = re.search(r"kinstr-test: (begin|end) (\d+)", line)
        if m:
            cur = int(m.group(2)) if m.group(1) == "begin" else None
            sections.setdefault(cur, [])
            continue
        sections.setdefault(cur, []).append(line)
    return sections


def matrix():
    """tests/kernels: (label, release, suite, cpu, why) of each kernel; release None: not installed."""
    lanes = []
    with open("tests/kernels") as f:
        for line in f:
            line = line.split("#")[0].split()
            if not line:
                continue
            series, flavour, suite = line[:3]
            cpu = next((w[4:] for w in line[3:] if w.startswith("cpu=")), None)
            label = series if flavour == "amd64" else f"{series}-{flavour}"
            if cpu:
                label += f"/{cpu}"
            if flavour == "debug":
                label = f"{series}-debug"
            env = dict(os.environ, KINSTR_KERNEL_SERIES=series, KINSTR_KERNEL_FLAVOUR=flavour)
            env.pop("KINSTR_KERNEL", None)
            p = subprocess.run(["scripts/kernel-release"], env=env, stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT)
            rel = p.stdout.decode().strip() if p.returncode == 0 else None
            lanes.append((label, rel, suite, cpu, p.stdout.decode().strip()))
    return lanes


def vm_files():
    return sorted(os.path.join("tests/vm/tests", f) for f in os.listdir("tests/vm/tests") if f.endswith(".t"))


WEIGHTS = "tests/vm/weights"


def measured_weights(series=None):
    """tests/vm/weights: the seconds each VM test file took in a kernel series' full suite ('FILE
    SERIES SECONDS' lines; tests/run --write-weights rewrites it from the last run). For a series
    it does not list, the mean over those it does."""
    per = {}
    if os.path.exists(WEIGHTS):
        with open(WEIGHTS) as f:
            for line in f:
                line = line.split("#")[0].split()
                if len(line) == 3:
                    per.setdefault(line[0], {})[line[1]] = float(line[2])
    return {name: v[series] if series in v else sum(v.values()) / len(v) for name, v in per.items()}


def write_weights():
    """Each file's seconds in each series' full suite, summed over its parts, from build/vm."""
    per = {}
    for d in sorted(os.listdir("build/vm")):
        path = os.path.join("build/vm", d, "results.jsonl")
        if not re.match(r"suite-[0-9.]+-[0-9]+of[0-9]+$", d) or not os.path.exists(path):
            continue
        kern = d.split("-")[1]
        with open(path) as f:
            for line in f:
                r = json.loads(line)
                if "file" in r:
                    per.setdefault(r["file"], {}).setdefault(kern, 0.0)
                    per[r["file"]][kern] += r["seconds"]
    if not per:
        raise SystemExit("no full-suite results in build/vm: run the VM suite first")
    kerns = {k for v in per.values() for k in v}
    for f in vm_files():	# a file a series ran nothing of (its tests ONCE, or KERNEL others): 0 there
        for kern in kerns:
            per.setdefault(os.path.basename(f), {}).setdefault(kern, 0.0)
    with open(WEIGHTS, "w") as f:
        f.write("# Seconds each VM test file took in each kernel series' full suite in the last run: what\n"
                "# tests/run splits a full suite into parts of equal time by. FILE SERIES SECONDS.\n"
                "# Rewritten by: tests/run --no-setup --write-weights (after a run of the VM suite).\n")
        for name in sorted(per):
            for kern in sorted(per[name], key=lambda k: [int(x) for x in k.split(".")]):
                f.write(f"{name} {kern} {per[name][kern]:.0f}\n")
    print(f"{WEIGHTS}: {len(per)} files")


def split_files(files, parts, series=None):
    """parts lists of the VM test files of about equal weight, each in a guest of its own: the weight
    of a file is what tests/vm/weights measured on the series, or for a file it does not list the
    sum of its tests' TIMEOUTs (the long ones say so). Two parts: the most even split of all;
    more: each file, heaviest first, to the lightest part. The host checks read what analysis.t
    leaves (the whole-kernel snapshot): it goes in the first part."""
    measured = measured_weights(series)

    def weight(f):
        if os.path.basename(f) in measured:
            return measured[os.path.basename(f)]
        t = 0
        with open(f) as fh:
            for line in fh:
                if line.startswith("NAME "):
                    t += 60
                elif line.startswith("TIMEOUT "):
                    t += float(line.split()[1]) - 60
        return t
    order = sorted(files, key=lambda f: (not f.endswith("/analysis.t"), -weight(f)))
    w = [weight(f) for f in order]
    if parts == 2 and 1 < len(order) <= 22:
        # every subset of the rest beside the first file (analysis.t when there): the one closest to half
        total, best, pick, n = sum(w), None, 0, len(order) - 1
        sub = [0.0] * (1 << n)	# sub[mask]: the weight of the files mask takes (by its lowest bit and the rest)
        for mask in range(1 << n):
            if mask:
                low = (mask & -mask).bit_length() - 1
                sub[mask] = sub[mask & (mask - 1)] + w[low + 1]
            d = abs(total - 2 * (w[0] + sub[mask]))
            if best is None or d < best:
                best, pick = d, mask
        one = [order[0]] + [order[i + 1] for i in range(len(order) - 1) if pick >> i & 1]
        return [sorted(one), sorted(f for f in order if f not in one)]
    groups = [[] for _ in range(parts)]
    sums = [0.0] * parts
    for f, fw in zip(order, w):
        i = 0 if f.endswith("/analysis.t") else sums.index(min(sums))
        groups[i].append(f)
        sums[i] += fw
    return [sorted(g) for g in groups if g]


# The debug kernel's lane (tests/kernels' flavour 'debug', built by tests/debug-kernel/build): KASAN,
# lockdep and kmemleak make the guest several times slower, so each test gets this many times its
# TIMEOUT, and the guest its own limit.
DEBUG_TIMEOUT_SCALE = 4
DEBUG_VM_TIMEOUT = 1500
# Every run takes the lane whenever the kernel is in the cache (a machine without it says so and
# skips it); False would make it opt-in again (tests/run --debug-kernel, or --kernel 6.1-debug).
DEBUG_LANE_BY_DEFAULT = True
# what the lane runs (its line in tests/kernels says 'smoke'; 'full' runs every file, in parts, as
# the stock kernels' full suites do: hours with one guest): the SMOKE tests of these files (count, kill -9, trace, profile, the kernel's
# facts, BPF, the scope's tracepoint probes and gates), not cover.t's, which take minutes each even on a
# stock kernel
DEBUG_FILES = ("bpf.t", "count.t", "kernel.t", "profile.t", "scope.t", "trace.t")


def step_vm(args, label, release, suite, cpu=None, files=None, part="", once=True, debug=False):
    files = files or vm_files()
    out = "build/vm/suite-" + label.replace("/", "-") + (f"-{part.replace('/', 'of')}" if part else "")
    env = ["--kernel", release, "--env", f"KINSTR_TEST_SUITE={suite}", "--env", f"KINSTR_TEST_ONCE={int(once)}"]
    if debug:
        env += ["--env", f"KINSTR_TEST_TIMEOUT_SCALE={DEBUG_TIMEOUT_SCALE}"]
    if args.k:
        env += ["--env", f"KINSTR_TEST_FILTER={args.k}"]
    cmd = "/usr/bin/python3 tests/vm/guest-runner /run/kinstr-job/results.jsonl " + " ".join(files)
    with _lock:
        print(f"---- booting {release}{' on a ' + cpu + ' CPU' if cpu else ''} for the {suite} VM suite "
              f"{'(part ' + part + ') ' if part else ''}(log: {out}/)", flush=True)
    if debug:
        # the modules for the debug kernel: built here, not by make kmods (a machine without the
        # debug kernel builds none), with the same no-warning rule as the build step
        brc, bout, bsecs = run(["scripts/build-kmod", release], timeout=1800)
        warn = [l for l in bout.splitlines() if re.search(r"\bwarning:", l)]
        ok = brc == 0 and not warn
        report("pass" if ok else "fail", f"vm {label}: kinstr.ko and the test modules build against it with no warnings",
               "" if ok else (f"exit {brc}" if brc else f"{len(warn)} warnings"), bsecs, bout)
        if not ok:
            return
    rc, hout, secs = vm(cmd, out, max(args.vm_timeout, DEBUG_VM_TIMEOUT) if debug else args.vm_timeout, env, cpu)
    res_path = os.path.join(out, "results.jsonl")
    planned, done = [], {}
    if os.path.exists(res_path):
        with open(res_path) as f:
            for line in f:
                try:
                    r = json.loads(line)
                except ValueError:
                    continue
                if "planned" in r:
                    planned = r["planned"]
                else:
                    done[r["index"]] = r
    log = ""
    for name in ("dmesg", "console.log"):
        p = os.path.join(out, name)
        if os.path.exists(p):
            with open(p, errors="replace") as f:
                log = f.read()
            if name == "dmesg" and "kinstr-vm: job done" in log:
                break
    sections = split_log(log)
    vm_ = f"vm {label}"
    if not planned:
        report("fail", f"{vm_}: guest test runner started{' (part ' + part + ')' if part else ''}",
               f"harness exit {rc}", secs, hout)
        return
    for i, name in enumerate(planned):
        r = done.get(i)
        splats = [l for l in sections.get(i, []) if SPLAT.search(l)]
        if r is None:
            report("fail", f"{vm_}: {name}", "no result: the guest died or timed out during this test",
                   detail="\n".join(sections.get(i, [])[-25:]) or hout)
            continue
        status, why = r["status"], r["why"]
        if r.get("expect_warn"):
            # the test's own WARNING, once, matching: its report is no splat; none, or more, fails
            warns = [l for l in splats if "WARNING:" in l]
            if len(warns) != 1 or not re.search(r["expect_warn"], warns[0]):
                status, why = "fail", (f"expected one kernel WARNING matching /{r['expect_warn']}/, "
                                       f"got {len(warns)}: {warns[0].strip() if warns else ''}")
                splats = []
            else:
                splats = [l for l in splats if not re.search(r"WARNING:|Call Trace:|RIP: 00", l)]
        if splats:
            status, why = "fail", f"kernel splat during the test: {splats[0].strip()}"
        report(status, f"{vm_}: {name}", why, r["seconds"], r["output"] + "\n" + "\n".join(splats))
    outside = [l for l in sections.get(None, []) if SPLAT.search(l)]
    report("fail" if outside else "pass",
           f"{vm_}: guest kernel log clean outside the tests{' (part ' + part + ')' if part else ''}",
           outside[0].strip() if outside else "", detail="\n".join(outside))
    if debug:
        # kmemleak's list after the job (tests/vm/guest-init scans twice once the tests are done)
        path = os.path.join(out, "kmemleak")
        if not os.path.exists(path):
            report("fail", f"{vm_}: kmemleak: no unreferenced object after the tests",
                   "the guest left no kmemleak list (no /sys/kernel/debug/kmemleak, or it died first)")
        else:
            with open(path, errors="replace") as f:
                leaks = f.read()
            n = len(re.findall(r"^unreferenced object", leaks, re.M))
            report("fail" if n else "pass", f"{vm_}: kmemleak: no unreferenced object after the tests",
                   f"{n} unreferenced objects" if n else "", detail=leaks)
    if suite == "full" and any(f.endswith("/analysis.t") for f in files):
        step_host_after_vm(args, out, planned, vm_)


def step_lanes(args, host_jobs):
    """Every kernel of tests/kernels, and the host's own jobs (unit tests, the harness's
    self-tests), in lanes: one TCG guest or host job per host CPU at a time. The full suites start
    first (the longest work), the rest fill in; each job's lines print together as it ends."""
    vm_jobs = []
    once_done = False
    if args.vm or not args.unit:
        for label, rel, suite, cpu, why in (l for l in matrix() if not args.kernel or l[0] in args.kernel):
            debug = label.endswith("-debug")
            if debug and not (DEBUG_LANE_BY_DEFAULT or args.debug_kernel or args.kernel):
                report("skip", f"vm {label}: the debug kernel's lane",
                       "skipped: opt-in for now (tests/run --debug-kernel)")
                continue
            if rel is None and debug:
                # built on the machine (30-90 min), not installed: a machine without it skips the lane
                report("skip", f"vm {label}: the debug kernel's lane",
                       f"skipped: {why.removeprefix('debug-build: ')}")
                continue
            if rel is None:
                report("fail", f"vm {label}: kernel installed", why)
                continue
            # the tests marked ONCE (user-space work) run in the first full suite only
            once = suite == "full" and not once_done
            once_done = once_done or once
            # a full suite in parts, each a guest of its own, so that the lanes stay evenly busy
            parts = split_files(vm_files(), args.parts, label) if suite == "full" and not args.k else [None]
            for i, files in enumerate(parts):
                part = f"{i + 1}/{len(parts)}" if files else ""
                if debug and suite != "full":
                    files = [f for f in vm_files() if os.path.basename(f) in DEBUG_FILES]
                vm_jobs.append((f"{rel} ({suite}{' ' + part if part else ''})", suite == "full" or debug,
                                lambda label=label, rel=rel, suite=suite, cpu=cpu, files=files, part=part, once=once,
                                debug=debug: step_vm(args, label, rel, suite, cpu, files, part, once, debug)))
    todo = [j for j in vm_jobs if j[1]] + host_jobs + [j for j in vm_jobs if not j[1]]

    def lane():
        while True:
            with _lock:
                if not todo:
                    return
                what, _, job = todo.pop(0)
            _lane.lines = []
            t0 = time.monotonic()
            try:
                job()
            except Exception as e:  # a broken job still fails visibly
                _lane.lines.append(f"FAIL {what}: runner error: {e}")
                with _lock:
                    results.append(("fail", f"{what}: runner", str(e)))
            lines, _lane.lines = _lane.lines, None
            with _lock:
                print(f"---- {what} done in {time.monotonic() - t0:.0f}s", flush=True)
                print("\n".join(lines), flush=True)

    threads = [threading.Thread(target=lane) for _ in range(max(1, args.jobs))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()


def step_host_after_vm(args, job, planned, vm_="vm"):
    """Host checks of what the guest left in the job folder (tests/vm/host/*.sh JOB)."""
    d = "tests/vm/host"
    for f in sorted(os.listdir(d)):
        if not f.endswith(".sh"):
            continue
        if args.k and not re.search(args.k, f):
            continue
        rc, out, secs = run([os.path.join(d, f), job], timeout=600)
        cases = 0
        for line in out.splitlines():
            m = re.match(r"(PASS|FAIL|SKIP) (\S+)(?::\s*(.*))?$", line)
            if m:
                cases += 1
                report(m.group(1).lower(), f"{vm_}: host-after-vm/{m.group(2)}", m.group(3) or "", secs,
                       detail=out if m.group(1) == "FAIL" else "")
        if not cases:
            report("fail", f"{vm_}: host-after-vm/{f}", f"exit {rc}, no PASS/FAIL line", secs, out)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--unit", action="store_true", help="host unit tests only")
    ap.add_argument("--vm", action="store_true", help="VM tests only (with the harness self-tests)")
    ap.add_argument("-k", metavar="REGEX", help="only tests whose name (a VM test's as FILE.t: NAME) matches")
    ap.add_argument("--no-setup", action="store_true", help="do not run scripts/setup first (tests/run)")
    ap.add_argument("--vm-timeout", type=int, default=2100, help="limit for each VM suite's boot (s)")
    ap.add_argument("--kernel", action="append", metavar="LABEL",
                    help="only this kernel of tests/kernels (6.1, 6.12, 6.1-rt, 6.12-rt, 6.12/EPYC-Rome, 6.1-debug; "
                         "repeatable)")
    ap.add_argument("--debug-kernel", action="store_true",
                    help="also run the debug kernel's lane (tests/kernels' 'debug' line: KASAN, lockdep, kmemleak, "
                         "UBSAN; built by tests/debug-kernel/build, skipped with the reason when absent)")
    ap.add_argument("-j", "--jobs", type=int, default=os.cpu_count() or 2,
                    help="guests at once (default: one per host CPU)")
    ap.add_argument("--parts", type=int, default=2,
                    help="guests each full suite is split over (default 2; not with -k)")
    ap.add_argument("--write-weights", action="store_true",
                    help=f"rewrite {WEIGHTS} from the full suites' results in build/vm, and exit")
    args = ap.parse_args()
    if args.write_weights:
        write_weights()
        return 0
    everything = not (args.unit or args.vm)
    t0 = time.monotonic()
    if step_build(args):
        host_jobs = []
        if args.unit or everything:
            host_jobs.append(("host unit tests", False, lambda: step_unit(args)))
        if args.vm or everything:
            host_jobs.append(("harness self-tests", False, lambda: step_selftest(args)))
        step_lanes(args, host_jobs)
    n = {s: sum(1 for r in results if r[0] == s) for s in ("pass", "fail", "skip")}
    if n["fail"]:
        print("\nfailed:")
        for s, name, why in results:
            if s == "fail":
                print(f"  {name}: {why}")
    print(f"\n({time.monotonic() - t0:.0f}s)")
    print(f"{n['pass']} passed, {n['fail']} failed, {n['skip']} skipped")
    return 1 if n["fail"] or not n["pass"] else 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except Exception as e:  # a broken runner must still end with a failing count
        import traceback
        traceback.print_exc()
        print(f"runner: internal error: {e}")
        print(f"{sum(1 for r in results if r[0] == 'pass')} passed, "
              f"{1 + sum(1 for r in results if r[0] == 'fail')} failed")
        sys.exit(1)
