#!/usr/bin/env python3
"""A metrics endpoint under idle, slow and many clients (issue 30: one idle connection made the next
scrape take 2 s, 40 made a 5 s scrape time out): with IDLE connections open that send nothing, one
client sending its request a byte a second, and MANY more connections sending half a request, every
one of N scrapes must answer 200 within BUDGET seconds. Prints the worst scrape time and exits 1 if
any scrape failed or was slow.
  metrics_clients.py HOST PORT [--idle 40] [--many 150] [--scrapes 20] [--budget 0.1]
"""
import argparse
import socket
import threading
import time
import urllib.request

ap = argparse.ArgumentParser()
ap.add_argument("host")
ap.add_argument("port", type=int)
ap.add_argument("--idle", type=int, default=40)
ap.add_argument("--many", type=int, default=150)
ap.add_argument("--scrapes", type=int, default=20)
ap.add_argument("--budget", type=float, default=0.1)
ap.add_argument("--limit", type=float, default=1.0)
a = ap.parse_args()
url = f"http://{a.host}:{a.port}/metrics"


def scrape():
    t = time.monotonic()
    with urllib.request.urlopen(url, timeout=10) as r:
        body = r.read()
        ok = r.status == 200 and b"kinstr_probe_hits_total" in body
    return ok, time.monotonic() - t


scrape()  # the endpoint is up
held = []
for _ in range(a.idle):  # connected, silent
    held.append(socket.create_connection((a.host, a.port)))
for _ in range(a.many):  # a request begun and never ended
    s = socket.create_connection((a.host, a.port))
    s.sendall(b"GET /metrics HTTP/1.1\r\nHost: x\r\n")
    held.append(s)
stop = threading.Event()


def slow():  # one byte a second
    s = socket.create_connection((a.host, a.port))
    for b in b"GET /metrics HTTP/1.1\r\nHost: slow\r\n\r\n":
        if stop.is_set():
            break
        try:
            s.send(bytes([b]))
        except OSError:
            break
        time.sleep(1)
    s.close()


th = threading.Thread(target=slow)
th.start()
time.sleep(0.5)
times, failed = [], 0
for _ in range(a.scrapes):
    try:
        ok, dt = scrape()
    except OSError:
        ok, dt = False, 10.0
    times.append(dt)
    failed += not ok
    time.sleep(0.05)
stop.set()
th.join()
for s in held:
    s.close()
times.sort()
median, worst = times[len(times) // 2], times[-1]
bad = failed or median > a.budget or worst > a.limit
print(f"scrapes {a.scrapes} beside {a.idle} idle, {a.many} half-sent and 1 slow connections: "
      f"{a.scrapes - failed} answered, median within {a.budget * 1000:.0f} ms {median <= a.budget}, "
      f"all within {a.limit * 1000:.0f} ms {worst <= a.limit} (median {median * 1000:.1f} ms, worst {worst * 1000:.1f} ms)")
print("metrics_clients: " + ("ok" if not bad else "FAIL"))
raise SystemExit(1 if bad else 0)
