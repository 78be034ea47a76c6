# What an installed kinstr offers besides its commands: the bash completion (cli/completion/kinstr),
# run in the guest as bash runs it. Its figures (cold, warm, fresh shell) go to docs/benchmarks.md.
# (The manual pages are checked on the host: tests/unit/test_man.sh.)

NAME completion: a function prefix completes from the kernel's symbols (per-boot cache), a command and an option prefix from kinstr's own tables; a loaded module's functions once it is in
RUN bash tests/vm/checks/completion.sh MODULE
EXPECT ^cold count vfs_rea: [0-9]+ candidates, vfs_read yes, [0-9]+ ms$
EXPECT ^warm count vfs_rea: [0-9]+ candidates, vfs_read yes, [0-9]+ ms$
EXPECT ^fresh count vfs_rea: vfs_read yes, [0-9]+ ms$
EXPECT ^command co: count cover \([0-9]+ ms\)$
EXPECT ^option --ev: --every --every-block \([0-9]+ ms\)$
EXPECT ^return vfs_read%: vfs_read%return $
EXPECT ^help --man sp: span $
EXPECT ^cache [0-9]{5,} lines$
EXPECT ^not root count vfs_rea: vfs_read yes, [0-9]+ ms$
EXPECT ^module function [a-z_0-9.]+ after insmod: yes$
TIMEOUT 60
