/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * Is this machine ready for kinstr (kinstr doctor)? Each check reads what the kernel and the
 * system say (sysfs, procfs, the module's file, /dev/kinstr), in the order a failure blocks the
 * next: the module installed for the running kernel, loadable (signature, Secure Boot), the
 * kernel not locked down, the module loaded, its ABI the library's, BTF, tracefs, kprobes and
 * ftrace, the timers' clock, the kernel a tested one. A failed check says what to do.
 */
#ifndef KINSTR_DOCTOR_H
#define KINSTR_DOCTOR_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

enum kinstr_doctor_status {
	KINSTR_DOCTOR_OK,
	KINSTR_DOCTOR_WARN,	/* commands work, with the caveat said */
	KINSTR_DOCTOR_FAIL,	/* some command cannot work until it is fixed */
	KINSTR_DOCTOR_SKIP,	/* not checked: an earlier failure decides it */
};

#define KINSTR_DOCTOR_TEXT 512
struct kinstr_doctor_check {
	const char *name;		/* "module", "signature", ... (stable: tests and --json match them) */
	enum kinstr_doctor_status status;
	char detail[KINSTR_DOCTOR_TEXT];	/* what was found */
	char fix[KINSTR_DOCTOR_TEXT];		/* what to do (WARN and FAIL), else "" */
};

/* At most this many checks are made. */
#define KINSTR_DOCTOR_MAX 16

/*
 * Make every check into checks[0..n), n at most KINSTR_DOCTOR_MAX; returns n, or -EINVAL when max
 * is too small for them. Never fails on what it finds: that is in each check's status.
 */
int kinstr_doctor__run(struct kinstr_doctor_check *checks, size_t max);

/* "ok", "warn", "FAIL", "skip". */
const char *kinstr_doctor__status_str(enum kinstr_doctor_status s);

/* The kernel series the suite tests (tests/kernels' full and smoke lines), NULL-terminated. */
extern const char *const kinstr_doctor__tested_series[];

#ifdef __cplusplus
}
#endif

#endif
