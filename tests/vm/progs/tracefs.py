"""tracefs for the kprobe references (sweep.py, checks/cover_vs_kprobes.py): writes, and the one
side effect of enabling events that the runs compared with them must share."""
import contextlib
import os

TR = "/sys/kernel/tracing"

# an event that never fires after boot: enabled only for what enabling any event does (below)
QUIET_EVENT = TR + "/events/initcall/initcall_finish/enable"


def write_tr(path, text, append=False):
    # os.open: Python's "a" mode seeks to the end, which tracefs files refuse
    fd = os.open(path, os.O_WRONLY | (os.O_APPEND if append else os.O_TRUNC))
    try:
        os.write(fd, text.encode())
    finally:
        os.close(fd)


@contextlib.contextmanager
def quiet_event():
    """Enabling any trace event starts ftrace's comm recording, which registers on sched_switch,
    sched_wakeup and sched_wakeup_new: the kprobe runs turn those tracepoints' jump labels on (a
    block behind trace_sched_wakeup_new() runs under kprobes only: wake_up_new_task+0x25a, 0 against
    20). A run compared with them gets the same by enabling an event that never fires, around it."""
    on = os.path.exists(QUIET_EVENT)
    if on:
        write_tr(QUIET_EVENT, "1")
    try:
        yield
    finally:
        if on:
            write_tr(QUIET_EVENT, "0")
