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
    ta, tb = t["kinstr_test_ind_a"], t["kinstr_test_ind_b"]
    print("site %.2f of %s, %d calls tallied" % (s["share_of_parent"], root["function"], s["site_calls"]))
    ca = ta["site_calls"] / s["site_calls"]
    print("calls a %.2f b %.2f, module a %.2f" % (ca, tb["site_calls"] / s["site_calls"], a / (a + b)))
    print("calls %s the module's split" % ("match" if abs(ca - a / (a + b)) <= 0.02 else "DIFFER from"))
    # both busy-wait 100 us, but an emulator stretches single calls: the time split is near the calls', not at it
    print("time a %.2f b %.2f, by %s %s" % (ta["share_of_parent"], tb["share_of_parent"], ta["share_by"],
                                            tb["share_by"]))
    # the timers' paths put the site's time in its targets, but for the thunk and the probes between
    print("site's time in its targets %s" % ("over 0.9" if 1 - s["self"] > 0.9 else "%.2f" % (1 - s["self"])))
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
                print("%s under %s at %s: %.2f of its time, %.2f of the site's (by %s; %d of its %d calls)" %
                      (want, root["function"], s["site"], k["share_of_root"], k["share_of_parent"], k["share_by"],
                       k["site_calls"], s["site_calls"]))
                # the workload's reads: the site's main target, and a good part of vfs_read's time
                top = max(kids(s, "target"), key=lambda t: t["share_of_parent"])
                if top is k and k["share_of_root"] >= 0.2 and k["site_calls"] >= 0.8 * s["site_calls"]:
                    print("read_iter found")
                sys.exit(0)
    print("targets:", [(k["function"], k["site_calls"]) for s in kids(root, "indirect") for k in kids(s, "target")])
    sys.exit("%s is not among %s's indirect targets" % (want, root["function"]))
