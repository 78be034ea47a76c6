#!/usr/bin/python3
"""The GILK case's workload (bench/run-gilk): N UDP packets over the loopback, one every GAP ms, packet i
of 64 + i bytes so that tcpdump's lines (length) name it; the receiver takes each with recvfrom() and
notes CLOCK_REALTIME when the call returns. Prints one line per packet: "i recv_ns"."""
import socket, sys, threading, time

n, gap = int(sys.argv[1]), float(sys.argv[2]) / 1000
port = int(sys.argv[3]) if len(sys.argv) > 3 else 9999
rx = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
rx.bind(("127.0.0.1", port))
got = {}

def receive():
    for _ in range(n):
        data, _ = rx.recvfrom(4096)
        got[len(data) - 64] = time.clock_gettime_ns(time.CLOCK_REALTIME)

t = threading.Thread(target=receive)
t.start()
tx = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
time.sleep(0.2)
for i in range(n):
    tx.sendto(b"x" * (64 + i), ("127.0.0.1", port))
    time.sleep(gap)
t.join(10)
for i in sorted(got):
    print(i, got[i])
