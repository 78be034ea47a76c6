#!/usr/bin/env python3
"""kinstr optimize on the test module's kinstr_tc_skew (cover.t, issue 34): a branch laid out
against the odds (x % 8 != 0 on 7 calls of 8 is the out-of-line way, which jumps back).

With the workload `skew N` (x = 0..N-1):
- the layout: from objdump of the module's .ko (independent of kinstr), the function's first
  jcc, its target T (the hot way, 7N/8 calls) and its fall-through F, T's block ending on a jmp
  back to F. Expected, block by block: the entry block first with its jcc inverted, then T's
  block with its jmp dropped, then F's; the counts N, 7N/8, N; the predicted taken branches
  7N/4 before (the jcc and the jmp back, 7N/8 times each) and N/8 after (the inverted jcc).
- the same results: `skew N`'s sum with the re-laid copy in equals the original's.
- removal restores every byte: the function's live text read from /proc/kcore (the kernel's
  own view, not kinstr's) before optimize and after equal, and differs while the copy is in
  (the entry is spliced).
- taken branches measured: a second, separate run of the same workload under
  `kinstr cover --edges` (on the original) gives the edge counts; this script applies the
  installed layout to them with its own reading of the blocks (objdump's): the taken branches
  per call of the re-laid copy, against the prediction.
Prints one line per check.
"""
import json
import re
import struct
import subprocess
import sys

N = 8000
KOFF = SIZE = 0
FN = "kinstr_tc_skew"
RUN = "/sys/kernel/debug/kinstr_tc/run"
LAST = "/sys/kernel/debug/kinstr_tc/last"
WORK = f"echo skew {N} > {RUN}"


def sh(cmd):
    return subprocess.run(cmd, shell=True, capture_output=True, text=True, check=False)


def last():
    with open(LAST) as f:
        return dict(kv.split("=", 1) for kv in f.read().split())


def skew():
    with open(RUN, "w") as f:
        f.write(f"skew {N}")
    return last()


def objdump_blocks():
    """kinstr_tc_skew's instructions (offset, mnemonic, target offset) from objdump of the .ko."""
    ko = "tests/vm/modules/kinstr_test_cache.ko"
    out = sh(f"objdump -d --no-show-raw-insn {ko}").stdout
    m = re.search(r"^([0-9a-f]+) <%s>:\n(.*?)(?:\n\n|\Z)" % FN, out, re.S | re.M)
    if not m:
        sys.exit(f"no {FN} in objdump of {ko}")
    base = int(m.group(1), 16)
    insns = []
    for line in m.group(2).splitlines():
        p = re.match(r"\s*([0-9a-f]+):\s+(\S+)\s*(.*)", line)
        if not p:
            continue
        off = int(p.group(1), 16) - base
        t = re.match(r"([0-9a-f]+) <", p.group(3))
        insns.append((off, p.group(2), int(t.group(1), 16) - base if t else None))
    return insns


def kcore_off(vaddr):
    """The offset in /proc/kcore of kernel address vaddr (its PT_LOAD segments)."""
    with open("/proc/kcore", "rb") as f:
        eh = f.read(64)
        phoff, = struct.unpack_from("<Q", eh, 32)
        phentsize, phnum = struct.unpack_from("<HH", eh, 54)
        f.seek(phoff)
        for _ in range(phnum):
            ptype, _flags, off, va, _pa, filesz = struct.unpack("<IIQQQQ", f.read(phentsize)[:40])
            if ptype == 1 and va <= vaddr < va + filesz:
                return off + vaddr - va
    sys.exit(f"{vaddr:#x} is in no segment of /proc/kcore")


def func_span():
    """kinstr_tc_skew's live address (/proc/kallsyms) and size (nm -S of the .ko)."""
    with open("/proc/kallsyms") as f:
        addr = next(int(l.split()[0], 16) for l in f if l.split()[2] == FN)
    nm = sh("nm -S tests/vm/modules/kinstr_test_cache.ko").stdout
    size = next(int(l.split()[1], 16) for l in nm.splitlines() if l.endswith(" " + FN))
    return addr, size


def text():
    with open("/proc/kcore", "rb") as f:
        f.seek(KOFF)
        return f.read(SIZE)


def main():
    global KOFF, SIZE
    addr, SIZE = func_span()
    KOFF = kcore_off(addr)
    ins = objdump_blocks()
    jcc = next(i for i in ins if i[1].startswith("j") and i[1] != "jmp")
    hot = jcc[2]
    fall = ins[ins.index(jcc) + 1][0]
    back = next(i for i in ins if i[0] >= hot and i[1] == "jmp")
    entry = next(i[0] for i in ins if i[1] not in ("call", "nopl", "nop", "endbr64"))
    print(f"objdump: entry +{entry:#x}, jcc +{jcc[0]:#x} ({jcc[1]}) to +{hot:#x}, falls to +{fall:#x}, "
          f"+{hot:#x}'s block jmps to +{back[2]:#x}")
    base = skew()
    before = text()
    # measured while the workload runs, laid out, printed (--json: the first line) and installed
    # while the workload runs again
    during = sh(f"build/kinstr optimize --json -c '{WORK}' --while 'sh -c \"{WORK}; cat {LAST}; "
                f"dd if=/proc/kcore of=/tmp/opt_during.bin bs=4096 iflag=skip_bytes,count_bytes skip={KOFF} "
                f"count={SIZE} 2>/dev/null\"' {FN}")
    doc = json.loads(during.stdout.splitlines()[0])["functions"][0]
    lay = [(b["offset"], b["count"], b["inverted"], b["jmp_dropped"]) for b in doc["layout"]]
    want = [(entry, N, True, False), (hot, 7 * N // 8, False, True), (fall, N, False, False)]
    print("layout", "as expected" if lay == want and back[2] == fall else f"WRONG {lay} want {want}")
    print(f"predicted taken {doc['taken_before']} -> {doc['taken_after']} per {doc['calls']} calls "
          f"(want {7 * N // 4} -> {N // 8} per {N})")
    line = next((l for l in during.stdout.splitlines() if l.startswith("cmd=")), "")
    got = dict(kv.split("=", 1) for kv in line.split())
    print(f"optimize status {during.returncode}; sum {got.get('sum')} with the copy in, {base['sum']} without:",
          "same" if got.get("sum") == base["sum"] else "DIFFERENT")
    with open("/tmp/opt_during.bin", "rb") as f:
        spliced = f.read() != before
    after = text()
    print("text", "restored" if after == before and spliced and len(before) == SIZE
          else f"NOT RESTORED (spliced while in: {spliced})")
    # a second, separate measurement of the same workload on the original
    saved = sh(f"build/kinstr cover --edges --json -c '{WORK}' {FN}").stdout
    with open("/tmp/opt_edges.json", "w") as f:
        f.write(saved)
    cov = json.loads(saved)["functions"][0]
    edges = cov["edges"]
    calls = sum(e["count"] for e in edges if e["kind"] == "entry")
    order = [b["offset"] for b in doc["layout"]]
    nxt = {order[i]: order[i + 1] if i + 1 < len(order) else None for i in range(len(order))}
    taken = 0
    for e in edges:
        if e["kind"] == "taken":	# a branch inside the function: taken still unless the layout made it fall
            src = e["from"]
            if src == entry and e["to"] == hot and nxt[src] == hot:
                continue	# inverted: the hot way falls through now
            if src == hot and e["to"] == fall and nxt[src] == fall:
                continue	# the jmp dropped
            taken += e["count"]
        elif e["kind"] == "fall" and e["from"] is not None and nxt.get(e["from"]) != e["to"]:
            taken += e["count"]	# the fall-through now a branch (the inverted jcc's, or an added jmp)
    print(f"measured (second run) taken {taken} per {calls} calls: {taken / calls:.4f} per call; predicted "
          f"{doc['per_call_after']:.4f}:", "equal" if abs(taken / calls - doc["per_call_after"]) < 1e-9 else "DIFFER")

    # the saved run read back (--from-cover): the same layout as measured in place
    again = json.loads(sh(f"build/kinstr optimize --from-cover /tmp/opt_edges.json --dry-run --json {FN}").stdout)
    lay2 = [(b["offset"], b["count"], b["inverted"], b["jmp_dropped"]) for b in again["functions"][0]["layout"]]
    print("--from-cover layout", "the same" if lay2 == lay else f"DIFFERENT {lay2}")


main()
