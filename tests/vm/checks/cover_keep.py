#!/usr/bin/env python3
"""kinstr cover -k (cover.t): refusals by the library, by the module and names that match
nothing are reported with their reasons and left out; the rest is covered.

cover_keep.py KINSTR planted WORKLOAD: in one `kinstr batch` (its view of the kernel read once, first),
a kprobe event is put on an interior instruction of vfs_read after the view was read, so the
library plans vfs_read's copy from bytes the live text no longer holds and kinstr.ko refuses
it at install. `cover -k` of vfs_read, ksys_read, __x64_sys_getppid, a function the library
refuses (the first of 'vfs_*' the dry run refuses) and a name that matches nothing must cover
ksys_read and __x64_sys_getppid, list vfs_read as refused by the module and the other as
refused by the library, and exit 0 (with -c 'WORKLOAD 100': the getppid entry counted 100); the same cover without -k must fail on the module's
refusal with nothing covered. The kprobe is taken out and the text checked after each.

cover_keep.py KINSTR sample N SEED: `cover -k -d 1 --json` of N functions of `kinstr -l`
drawn with SEED (printed): exit 0, every function covered or refused with a reason, each one
the module refused refused again when covered alone (without -k).
"""
import json
import os
import random
import re
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "progs"))
from tracefs import TR, write_tr as write  # noqa: E402


class Batch:
    def __init__(self, kinstr, env=None):
        self.p = subprocess.Popen([kinstr, "batch"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                  stderr=subprocess.STDOUT, text=True, bufsize=1, env=dict(os.environ, **(env or {})))

    def run(self, words):
        self.p.stdin.write(" ".join(words) + "\n")
        self.p.stdin.flush()
        out = []
        for line in self.p.stdout:
            m = re.match(r"^batch: rc=(-?\d+) ", line)
            if m:
                return int(m.group(1)), out
            out.append(line.rstrip("\n"))
        sys.exit("FAIL kinstr batch ended early:\n" + "\n".join(out[-20:]))

    def close(self):
        self.p.stdin.close()
        self.p.wait()


def doc_of(out):
    docs = [json.loads(l) for l in out if l.startswith("{")]
    return docs[-1] if docs else None


def planted(kinstr, workload):
    b = Batch(kinstr, {"COVER_WORKLOAD_N": "100"})
    rc, out = b.run(["text-check"])  # the view: read now, before the kprobe
    print("text before:", "ok" if rc == 0 else "DIFFERS " + " | ".join(out[-3:]))
    rc, out = b.run(["disasm", "vfs_read"])
    offs = [l.split()[0] for l in out if re.match(r"^\s*\+0x[0-9a-f]+\s", l)]
    off = offs[11]
    # one the library refuses: the kernels differ in which (6.12 refuses no vfs_* one), so the
    # first of a few globs that has one; static call trampolines are refused on every kernel
    lib = None
    for glob in ("vfs_*", "ksys_*", "do_sys_*", "__SCT__*"):
        rc, out = b.run(["cover", "--dry-run", glob])
        lib = next((l.split()[0] for l in out if re.match(r"^\S+ +refused \(", l)), None)
        if lib:
            break
    print("interior", off, "library-refused", lib)
    write(f"{TR}/kprobe_events", f"p:kck/a vfs_read{off}\n", append=True)
    try:
        # the batch splits words on blanks (no quoting): the workload's N is in the batch's environment
        rc, out = b.run(["cover", "-k", "--json", "-c", workload, "vfs_read", "ksys_read",
                         "__x64_sys_getppid", lib, "no_such_function_kck"])
        d = doc_of(out)
        print("keep rc", rc)
        if d:
            cov = sorted(f["function"] for f in d["functions"])
            ref = {r["function"]: r for r in d["refused"]}
            print("covered", " ".join(cov), "getppid entry", sum(f["counts"][0]["count"] for f in d["functions"]
                                                                   if f["function"] == "__x64_sys_getppid"))
            for name in ("vfs_read", lib):
                r = ref.get(name)
                print("refused", name, "by", r and r["by"], "as", r and r["refused"], "why", r and r["why"])
            print("refused_at_install", d["refused_at_install"])
        for l in out:
            if l.startswith("kinstr:"):
                print(l)
        rc, out = b.run(["cover", "-d", "1", "vfs_read", "ksys_read", "__x64_sys_getppid"])
        print("without -k rc", rc)
        for l in out:
            if l.startswith("kinstr:"):
                print(l)
    finally:
        write(f"{TR}/kprobe_events", "-:kck/a\n", append=True)
    rc, out = b.run(["text-check"])
    print("text after:", "ok" if rc == 0 else "DIFFERS " + " | ".join(out[-3:]))
    b.close()


def sample(kinstr, n, seed):
    b = Batch(kinstr)
    rc, out = b.run(["-l"])
    funcs = sorted({l.split()[0] for l in out if len(l.split()) > 1 and l.split()[1] in ("jump", "trap", "ftrace")})
    pick = random.Random(seed).sample(funcs, n)
    print("seed", seed, "functions", len(funcs), "sample", n)
    rc, out = b.run(["cover", "-k", "--json", "-d", "1"] + pick)
    d = doc_of(out)
    print("keep rc", rc)
    if not d:
        print("no JSON:", " | ".join(out[-5:]))
        return
    cov = {f["function"] for f in d["functions"]}
    ref = {r["function"]: r for r in d["refused"]}
    named = {p.split("@")[0] for p in pick}
    seen = {x.split("@")[0] for x in cov | set(ref)}
    noreason = [r for r in ref.values() if not r["why"]]
    mod = [r for r in ref.values() if r["by"] != "library"]
    print("covered", len(cov), "refused", len(ref), "by the module or at install", len(mod),
          "unaccounted", len(named - seen), "without a reason", len(noreason))
    again = 0
    for r in mod[:5]:  # each one alone, without -k: refused again, with the same reason
        rc, o = b.run(["cover", "-d", "0.2", r["function"]])
        again += rc != 0 and any("refused the code cache" in l or "at install" in l or
                                 "changed between plan and install" in l for l in o)
    print("module refusals checked alone", min(5, len(mod)), "refused again", again)
    rc, out = b.run(["text-check"])
    print("text after:", "ok" if rc == 0 else "DIFFERS " + " | ".join(out[-3:]))
    b.close()


if __name__ == "__main__":
    if sys.argv[2] == "planted":
        planted(sys.argv[1], sys.argv[3])
    else:
        sample(sys.argv[1], int(sys.argv[3]), int(sys.argv[4]))
