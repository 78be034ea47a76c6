#!/usr/bin/python3
"""The first 4 bytes of every function kinstr.ko resolves, as the running kernel has them.

The names come from the module's source: KINSTR_KFUNCS (kmod/kinstr.h), every lookup("NAME")
of kmod/, and compat.h's allocator names (both kernels' names: the one this kernel lacks is
reported as absent). Each function is reported as 'endbr' (endbr64), 'sealed' (the 4-byte NOP
the kernel seals an unused ENDBR to: a pointer call there raises #CP on IBT hardware, which is
why the module calls what it resolves directly), or 'plain'. Data symbols are left out.

Prints one line per class and 'ibt-layout ok' when the layout matches the kernel's build: on an
IBT kernel (CONFIG_X86_KERNEL_IBT) the exported-by-name functions start with an ENDBR, sealed
or not, and on a kernel without IBT none does. Exit 1 otherwise, or when a name is missing
that this kernel must have.
"""
import glob
import os
import re
import subprocess
import sys

here = os.path.dirname(os.path.abspath(__file__))
top = os.path.dirname(os.path.dirname(os.path.dirname(here)))
src = ""
for p in sorted(glob.glob(os.path.join(top, "kmod", "*.[ch]"))):
    if not p.endswith(".mod.c"):
        src += open(p).read()
names = set()
m = re.search(r"#define KINSTR_KFUNCS\(X\)(.*?)\n\n", src, re.S)
names |= set(re.findall(r"X\((\w+)\)", m.group(1))) if m else set()
names |= set(re.findall(r'lookup\("(\w+)"\)', src))
names |= set(re.findall(r'"(\w+)"', " ".join(re.findall(r"#define KINSTR_TEXT_\w+_NAME .*", src))))
if len(names) < 15:
    sys.exit(f"resolved_endbr: only {len(names)} names found in kmod/: the source moved?")

syms = {}
with open("/proc/kallsyms") as f:
    for line in f:
        a, t, n = line.split()[:3]
        if n in names and n not in syms:
            syms[n] = (int(a, 16), t)

release = os.uname().release
ibt = False
try:
    with open(f"/boot/config-{release}") as f:
        ibt = "CONFIG_X86_KERNEL_IBT=y\n" in f.read()
except OSError:
    pass

classes = {"endbr": [], "sealed": [], "plain": []}
absent = sorted(n for n in names if n not in syms)
for n, (a, t) in sorted(syms.items()):
    if t.lower() != "t":
        continue  # data: text_mutex, die_chain, kprobe_blacklist, x86_return_thunk, ...
    b = subprocess.run([os.path.join(top, "tests/vm/progs/kcore-read"), hex(a), "4"],
                       capture_output=True, text=True).stdout.strip()
    classes["endbr" if b == "f30f1efa" else "sealed" if b == "660f1f00" else "plain"].append(n)
for c, ns in classes.items():
    print(f"{c} {len(ns)}: {' '.join(ns)}")
print(f"absent {len(absent)}: {' '.join(absent)}")
# both kernels have these; only the allocator and the thunks differ
must = {"kallsyms_lookup_name", "text_poke", "insn_decode", "text_mutex", "kprobe_mutex"}
if must - set(syms):
    sys.exit(f"resolved_endbr: this kernel lacks {' '.join(sorted(must - set(syms)))}")
with_endbr = len(classes["endbr"]) + len(classes["sealed"])
if ibt and with_endbr == 0:
    sys.exit("resolved_endbr: an IBT kernel, yet no resolved function starts with an ENDBR")
if not ibt and with_endbr:
    sys.exit("resolved_endbr: no IBT in this kernel, yet functions start with an ENDBR")
print(f"ibt-layout ok ({'IBT' if ibt else 'no IBT'}, {with_endbr} of "
      f"{sum(len(v) for v in classes.values())} resolved functions start with an ENDBR)")
