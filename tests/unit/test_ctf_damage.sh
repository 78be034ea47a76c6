#!/usr/bin/env bash
# A damaged trace is an error, never a changed number: every field of the CTF packet header and
# context (magic, uuid, stream_id, timestamp_begin/_end, content_size, packet_size,
# packet_seq_num, events_discarded, cpu_id; and the CRC-32 in the packet's last 4 bytes) of every packet of a trace lib/trace/ctf.c
# writes (tests/unit/ctf_corpus.c's base: 3 CPUs, 4 packets each), zeroed, with a bit flipped
# (lowest, middle, highest), and shifted (a byte inserted before it, its first byte deleted);
# then whole-file damage: 64 zero bytes at offset 100 (the case that once read as 102 calls and a
# 134 ms maximum), an emptied, a truncated and a doubled stream file, a packet dropped or repeated,
# padding and event bytes changed. Each case must make 'kinstr report' exit 1 with an error that
# names the stream file (and, for a packet, its offset); a few also through --json, --trace-dat
# and --html. babeltrace2 is the referee: it reads every case too, and each case it rejects must
# be one kinstr rejects (kinstr must reject more: the packet CRC sees what a CTF reader cannot).
# The same differential runs over the older trace layout with no packet_crc32
# (tests/data/report/trace, recorded in the guest): there every case babeltrace2 rejects must be
# rejected, and the count of the ones only the CRC could catch is printed.
# The intact traces read the same in both readers (events per class).
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 1
out=build/tests/ctf_damage
mkdir -p "$out"
if ! command -v babeltrace2 >/dev/null; then
	echo "FAIL ctf_damage_referee: no babeltrace2 (scripts/setup installs it)"
	exit 1
fi
if ! ${CC:-cc} -O1 -g -Wall -Iinclude -I. -D_GNU_SOURCE -o "$out/ctf_corpus" tests/unit/ctf_corpus.c \
	build/libkinstr.a -lz >"$out/build.log" 2>&1; then
	echo "FAIL ctf_damage_build: $(head -n1 "$out/build.log")"
	exit 1
fi
rm -rf "$out/corpus"
"$out/ctf_corpus" "$out/corpus" 0 0x6b696e737472 >/dev/null || { echo "FAIL ctf_damage_build: ctf_corpus failed"; exit 1; }
exec python3 - "$out" build/kinstr "$out/corpus/base" tests/data/report/trace <<'EOF'
import json, os, re, shutil, subprocess, sys
from concurrent.futures import ThreadPoolExecutor

out, kinstr, base, old = sys.argv[1:5]
fails = 0

def res(ok, name, why):
    global fails
    fails += not ok
    print(f"{'PASS' if ok else 'FAIL'} {name}: {why}", flush=True)

def run(cmd):
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, errors="replace", timeout=60)
    except subprocess.TimeoutExpired:
        return 124, "", "timed out"
    return p.returncode, p.stdout, p.stderr

def bt2(d):
    return run(["babeltrace2", d])

def report(d, *flags):
    return run([kinstr, "report", *flags, d])

def per_class(d):
    rc, o, e = bt2(d)
    counts = {}
    for line in o.splitlines():
        m = re.search(r"\) \S+ ([^:]+): ", line)
        if m:
            counts[m.group(1)] = counts.get(m.group(1), 0) + 1
    return rc, counts

def streams(d):
    return sorted((f for f in os.listdir(d) if f.startswith("stream_")), key=lambda f: int(f[7:]))

def packets(path, hdr):
    b = open(path, "rb").read()
    off, pk, start = 0, [], hdr + 52
    while off + start <= len(b):
        size = int.from_bytes(b[off + hdr + 24:off + hdr + 32], "little") // 8
        if size < start:
            break
        pk.append(off)
        off += size
    return pk

HEADER = [("magic", 0, 4), ("uuid", 4, 16), ("stream_id", 20, 4)]
CONTEXT = [("timestamp_begin", 0, 8), ("timestamp_end", 8, 8), ("content_size", 16, 8), ("packet_size", 24, 8),
           ("packet_seq_num", 32, 8), ("events_discarded", 40, 8), ("cpu_id", 48, 4)]

def cases(d, crc):
    """(name, fn(dir)) for every damage; fn edits the copy in place and returns False when the
    edit changed nothing (that case is not damage, and is left out)."""
    hdr = 24
    start = hdr + 52
    fields = HEADER + [(n, o + hdr, l) for n, o, l in CONTEXT]
    cs = []
    def edit(f, fn):
        def run(dd):
            p = os.path.join(dd, f)
            b = bytearray(open(p, "rb").read())
            n = fn(b)
            if n is None or bytes(n) == bytes(b) and fn.__name__ != "same":
                return False
            open(p, "wb").write(n)
            return True
        return run
    for f in streams(d):
        for i, at in enumerate(packets(os.path.join(d, f), hdr)):
            size = int.from_bytes(open(os.path.join(d, f), "rb").read()[at + hdr + 24:at + hdr + 32], "little") // 8
            for name, o, n in fields + ([("packet_crc32", size - 4, 4)] if crc else []):
                o += at
                def zero(b, o=o, n=n):
                    c = bytearray(b); c[o:o + n] = bytes(n); return c
                def flip(bit):
                    def fl(b, o=o, n=n):
                        c = bytearray(b); c[o + bit // 8] ^= 1 << (bit % 8); return c
                    return fl
                def ins(b, o=o):
                    return b[:o] + b"\0" + b[o:]
                def dele(b, o=o):
                    return b[:o] + b[o + 1:]
                for kind, fn in (("zeroed", zero), ("flip_low", flip(0)), ("flip_mid", flip(n * 4 + 3)),
                                 ("flip_high", flip(n * 8 - 1)), ("shift_in", ins), ("shift_out", dele)):
                    cs.append((f"{f}:{i}:{name}:{kind}", edit(f, fn)))
        pk = packets(os.path.join(d, f), hdr)
        def pktsize(b, at):
            return int.from_bytes(b[at + hdr + 24:at + hdr + 32], "little") // 8
        def content(b, at):
            return int.from_bytes(b[at + hdr + 16:at + hdr + 24], "little") // 8
        if len(pk) > 1:
            cs.append((f"{f}:drop_packet", edit(f, lambda b, a=pk[1]: b[:a] + b[a + pktsize(b, a):])))
            cs.append((f"{f}:repeat_packet", edit(f, lambda b, a=pk[1]: b[:a] + b[a:a + pktsize(b, a)] + b[a:])))
        last = pk[-1]
        cs.append((f"{f}:event_byte", edit(f, lambda b, a=last: b[:a + start + 5] + bytes([b[a + start + 5] ^ 0x10]) + b[a + start + 6:])))
        cs.append((f"{f}:last_event_byte", edit(f, lambda b, a=last: (lambda e: b[:e - 1] + bytes([b[e - 1] ^ 1]) + b[e:])(a + content(b, a)))))
        cs.append((f"{f}:padding_byte", edit(f, lambda b, a=last: None if content(b, a) + (4 if crc else 0) == pktsize(b, a)
                                               else b[:a + content(b, a)] + b"\x01" + b[a + content(b, a) + 1:])))
        cs.append((f"{f}:truncated", edit(f, lambda b: b[:len(b) // 2 + 3])))
        cs.append((f"{f}:emptied", edit(f, lambda b: b"")))
        cs.append((f"{f}:doubled", edit(f, lambda b: b + b)))
        cs.append((f"{f}:zeros64_at_100", edit(f, lambda b: b[:100] + bytes(64) + b[164:])))
    return cs

def run_case(src, tag, case):
    name, fn = case
    dd = os.path.join(out, tag, re.sub(r"[^A-Za-z0-9_]", "_", name))
    shutil.rmtree(dd, ignore_errors=True)
    shutil.copytree(src, dd)
    if not fn(dd):
        shutil.rmtree(dd)
        return name, None, None, None
    b = bt2(dd)[0]
    k = report(dd)
    return name, dd, b, k

def differential(src, tag, crc):
    shutil.rmtree(os.path.join(out, tag), ignore_errors=True)
    os.makedirs(os.path.join(out, tag))
    cs = cases(src, crc)
    with ThreadPoolExecutor(max_workers=2) as ex:
        results = list(ex.map(lambda c: run_case(src, tag, c), cs))
    results = [r for r in results if r[1]]
    bt_rej = [r for r in results if r[2] != 0]
    missed = [r for r in results if r[3][0] == 0]
    missed_bt = [r for r in bt_rej if r[3][0] == 0]
    bad_exit = [r for r in results if r[3][0] not in (0, 1)]
    unnamed = [r for r in results if r[3][0] == 1 and r[0].split(":")[0] not in r[3][2]
               and "metadata" not in r[3][2]]
    return results, bt_rej, missed, missed_bt, bad_exit, unnamed

# the intact traces: both readers, the same events per class
for tag, d in (("base", base), ("old_layout", old)):
    rc, counts = per_class(d)
    krc, ko, ke = report(d, "--json")
    kc = {}
    if krc == 0:
        j = json.loads(ko)
        kc = {p["probe"]: p["events"] for p in j.get("probes", []) if p["events"]}
    res(rc == 0 and krc == 0 and kc == counts and sum(counts.values()) > 0, f"ctf_damage_intact_{tag}",
        f"babeltrace2 {sum(counts.values())} events in {len(counts)} classes, kinstr {sum(kc.values())} in {len(kc)}"
        + ("" if kc == counts else f"; differ: {sorted(set(kc.items()) ^ set(counts.items()))[:4]} {ke.strip()[:200]}"))

results, bt_rej, missed, missed_bt, bad_exit, unnamed = differential(base, "crc", True)
res(len(results) > 400 and not missed and not bad_exit, "ctf_damage_every_case_rejected",
    f"{len(results)} damaged copies of a 3-CPU trace: kinstr rejected {len(results) - len(missed)}, "
    f"babeltrace2 {len(bt_rej)}" + (f"; read as whole: {[r[0] for r in missed][:8]}" if missed else "")
    + (f"; exit status not 1: {[(r[0], r[3][0]) for r in bad_exit][:4]}" if bad_exit else ""))
res(not missed_bt and bt_rej, "ctf_damage_rejects_what_babeltrace2_rejects",
    f"{len(bt_rej)} cases babeltrace2 rejects, kinstr read {len(missed_bt)} of them"
    + (f": {[r[0] for r in missed_bt][:8]}" if missed_bt else ""))
res(not unnamed, "ctf_damage_errors_name_the_file",
    f"{len(results) - len(missed) - len(unnamed)} of {len(results) - len(missed)} errors name the damaged stream file"
    + (f"; not: {[(r[0], r[3][2].strip()[:120]) for r in unnamed][:3]}" if unnamed else ""))
offs = [r for r in results if r[3][0] == 1 and ":zeros64_at_100" in r[0]]
ok = offs and all(re.search(r"stream_\d+: .*offset \d+", r[3][2]) for r in offs)
res(bool(ok), "ctf_damage_zeros_at_100",
    "; ".join(f"{r[0]}: {r[3][2].strip()[:150]}" for r in offs[:3]))

# the other outputs read through the same checks: the first damaged copies of each kind
picked = [r for r in results if r[0].endswith((":zeros64_at_100", ":emptied", ":0:events_discarded:flip_high",
                                                ":last_event_byte"))]
bad = []
for r in picked:
    for flags in (["--json"], ["--trace-dat", r[1] + ".dat"], ["--html", r[1] + ".html"]):
        rc, o, e = report(r[1], *flags)
        if rc != 1 or (flags[0] == "--json" and o.strip()):
            bad.append((r[0], flags[0], rc))
res(picked and not bad, "ctf_damage_every_output",
    f"{len(picked)} cases x report --json, --trace-dat, --html: " + (f"not refused: {bad[:4]}" if bad else "each exits 1"))

results, bt_rej, missed, missed_bt, bad_exit, unnamed = differential(old, "old_layout", False)
res(bt_rej and not missed_bt and not bad_exit, "ctf_damage_old_layout_vs_babeltrace2",
    f"{len(results)} damaged copies of a trace with no packet_crc32: babeltrace2 rejected {len(bt_rej)}, kinstr "
    f"{len(results) - len(missed)} (all of babeltrace2's" + ("" if not missed_bt else
    f" but {[r[0] for r in missed_bt][:6]}") + f"); {len(missed)} read by both, a CRC's work")
sys.exit(1 if fails else 0)
EOF
