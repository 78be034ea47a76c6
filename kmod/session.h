/* SPDX-License-Identifier: GPL-2.0 */
/* session.c: sessions (one per open file) and their ioctls. */
#ifndef KINSTR_KMOD_SESSION_H
#define KINSTR_KMOD_SESSION_H

#include "base.h"

/* session.c: sessions (one per open file) and their ioctls; patch/ does the patching. */
struct kinstr_session;
struct kinstr_session *kinstr_session_new(void);
void kinstr_session_free(struct kinstr_session *s);
long kinstr_session_ioctl(struct kinstr_session *s, unsigned int cmd, void __user *uarg);
int kinstr_probes_init(void);
void kinstr_probes_exit(void);
size_t kinstr_probes_hit_roots(unsigned long *roots);

struct vm_area_struct;
struct file;
struct poll_table_struct;
int kinstr_session_mmap(struct kinstr_session *s, struct vm_area_struct *vma);
__poll_t kinstr_session_poll(struct kinstr_session *s, struct file *file, struct poll_table_struct *pt);

#endif
