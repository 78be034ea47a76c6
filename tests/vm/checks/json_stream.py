#!/usr/bin/python3
"""Print each JSON object found in FILE (objects written back to back, as curl prints one answer
after another with no newline), one line each: Prometheus query answers as
"result N: LABEL=VALUE,... VALUE" per series, other objects as "object N: KEYS".

  json_stream.py FILE
"""
import json
import sys

text = open(sys.argv[1], errors="replace").read()
dec, i, n = json.JSONDecoder(), 0, 0
while True:
    i = text.find("{", i)
    if i < 0:
        break
    try:
        obj, end = dec.raw_decode(text, i)
    except ValueError:
        i += 1
        continue
    n += 1
    data = obj.get("data") if isinstance(obj, dict) else None
    if isinstance(data, dict) and "result" in data:
        if not data["result"]:
            print(f"result {n}: empty")
        for r in data["result"]:
            labels = ",".join(f"{k}={v}" for k, v in sorted(r["metric"].items()) if k not in ("instance", "job"))
            v = r["value"][1] if "value" in r else " ".join(x[1] for x in r.get("values", []))
            print(f"result {n}: {labels} {v}")
    else:
        print(f"object {n}: {','.join(sorted(obj)) if isinstance(obj, dict) else type(obj).__name__}")
    i = end
