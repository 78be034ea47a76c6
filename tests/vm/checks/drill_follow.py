#!/usr/bin/python3
"""Check what 'kinstr drill --json' found through indirect and tail calls, against references.

  drill_follow.py indirect FILE IND_A IND_B   the test module's dispatch: its indirect call site, and
                                              the targets' shares of its calls beside the module's own
                                              counts of each target's calls
  drill_follow.py tail FILE TAIL_NS TOTAL_NS  the test module's tail call: its share of the caller's
                                              time beside the module's own windows (the callee's time
                                              over the caller's, local_clock() both)
  drill_follow.py readiter FILE FUNC          vfs_read's indirect call site and FUNC among its targets
"""
import json
import sys


def kids(n, kind):
    return [k for k in n["callees"] if k.get("kind") == kind]


mode, path = sys.argv[1], sys.argv[2]
root = json.load(open(path))["root"]
if mode == "indirect":
    a, b = int(sys.argv[3]), int(sys.argv[4])
    site = kids(root, "indirect")
    if not site:
        sys.exit("no indirect call site under %s" % root["function"])
    s = max(site, key=lambda k: k["share_of_parent"])
    t = {k["function"]: k for k in kids(s, "target")}
    print("site %.2f of %s, %d calls tallied" % (s["share_of_parent"], root["function"], s["site_calls"]))
    print("targets a %.2f b %.2f" % (t["kinstr_test_ind_a"]["share_of_parent"],
                                     t["kinstr_test_ind_b"]["share_of_parent"]))
    print("module a %.2f" % (a / (a + b)))
    ok = abs(t["kinstr_test_ind_a"]["share_of_parent"] - a / (a + b)) <= 0.03
    print("targets %s the module's split" % ("match" if ok else "DIFFER from"))
elif mode == "tail":
    ref = int(sys.argv[3]) / int(sys.argv[4])
    t = kids(root, "tail")
    if not t:
        sys.exit("no tail call under %s" % root["function"])
    print("tail call to %s: share %.2f, module %.2f" % (t[0]["function"], t[0]["share_of_parent"], ref))
    print("tail share %s" % ("within 0.05" if abs(t[0]["share_of_parent"] - ref) <= 0.05 else "OFF"))
elif mode == "readiter":
    want = sys.argv[3]
    for s in kids(root, "indirect"):
        for k in kids(s, "target"):
            if k["function"] == want:
                print("%s under %s at %s: %.2f of its time, %.2f of the site's %d calls" %
                      (want, root["function"], s["site"], k["share_of_root"], k["share_of_parent"], s["site_calls"]))
                if k["share_of_root"] >= 0.2 and k["share_of_parent"] >= 0.9:
                    print("read_iter found")
                sys.exit(0)
    sys.exit("%s is not among %s's indirect targets" % (want, root["function"]))
