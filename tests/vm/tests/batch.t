NAME kinstr batch keeps its own stdout after count -o and profile -o (its rc lines are not written into FILE)
SETUP insmod kmod/kinstr.ko
RUN printf 'count -d 1 --json -o /tmp/kb-c.json vfs_read\nprofile -d 1 --json -o /tmp/kb-p.json vfs_read\ntext-check\n' \
    | build/kinstr batch && grep -q '"probes"' /tmp/kb-c.json && grep -q '"functions"' /tmp/kb-p.json \
    && ! grep -l 'batch:' /tmp/kb-c.json /tmp/kb-p.json && echo json-clean
EXPECT ^batch: rc=0 count
EXPECT ^batch: rc=0 profile
EXPECT ^batch: rc=0 text-check
EXPECT ^json-clean
TIMEOUT 240
