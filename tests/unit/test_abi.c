// SPDX-License-Identifier: GPL-2.0
/* The ioctl ABI's layout is a promise: sizes and offsets of published versions never change. */
#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <kinstr/kinstr.h>
#include "check.h"

static void t_version_struct_layout(void)
{
	CHECK(sizeof(struct kinstr_version) == KINSTR_VERSION_SIZE_VER0, "size %zu",
	      sizeof(struct kinstr_version));
	CHECK(offsetof(struct kinstr_version, size) == 0, "size field first");
	CHECK(offsetof(struct kinstr_version, features) == 8, "features at %zu",
	      offsetof(struct kinstr_version, features));
	CHECK(offsetof(struct kinstr_version, kernel_release) == 48, "kernel_release at %zu",
	      offsetof(struct kinstr_version, kernel_release));
}

static void t_debug_info_struct_layout(void)
{
	CHECK(sizeof(struct kinstr_debug_info) == KINSTR_DEBUG_INFO_SIZE_VER1, "size %zu",
	      sizeof(struct kinstr_debug_info));
	CHECK(offsetof(struct kinstr_debug_info, kallsyms_lookup_name) == 8, "offset %zu",
	      offsetof(struct kinstr_debug_info, kallsyms_lookup_name));
	/* version 0 ends where 0.6's return thunks begin: an old reader still gets what it knew */
	CHECK(offsetof(struct kinstr_debug_info, return_thunk) == KINSTR_DEBUG_INFO_SIZE_VER0, "offset %zu",
	      offsetof(struct kinstr_debug_info, return_thunk));
}

static void t_other_struct_layouts(void)
{
	CHECK(sizeof(struct kinstr_read) == KINSTR_READ_SIZE_VER0, "read %zu", sizeof(struct kinstr_read));
	CHECK(sizeof(struct kinstr_check) == KINSTR_CHECK_SIZE_VER0, "check %zu", sizeof(struct kinstr_check));
	CHECK(sizeof(struct kinstr_check_range) == 16, "range %zu", sizeof(struct kinstr_check_range));
	CHECK(sizeof(struct kinstr_layout) == KINSTR_LAYOUT_SIZE_VER0, "layout %zu",
	      sizeof(struct kinstr_layout));
	CHECK(sizeof(struct kinstr_module_info) == KINSTR_MODULE_INFO_SIZE_VER0, "module info %zu",
	      sizeof(struct kinstr_module_info));
	CHECK(sizeof(struct kinstr_scope) == KINSTR_SCOPE_SIZE_VER0, "scope %zu", sizeof(struct kinstr_scope));
	CHECK(sizeof(struct kinstr_tally_create) == KINSTR_TALLY_CREATE_SIZE_VER0, "tally_create %zu",
	      sizeof(struct kinstr_tally_create));
	CHECK(sizeof(struct kinstr_tally_read) == KINSTR_TALLY_READ_SIZE_VER0, "tally_read %zu",
	      sizeof(struct kinstr_tally_read));
	CHECK(sizeof(struct kinstr_span_create) == KINSTR_SPAN_CREATE_SIZE_VER0, "span_create %zu",
	      sizeof(struct kinstr_span_create));
	CHECK(sizeof(struct kinstr_span_read) == KINSTR_SPAN_READ_SIZE_VER0, "span_read %zu",
	      sizeof(struct kinstr_span_read));
	CHECK(sizeof(struct kinstr_timer_by) == KINSTR_TIMER_BY_SIZE_VER0, "timer_by %zu", sizeof(struct kinstr_timer_by));
	CHECK(sizeof(struct kinstr_timer_by_row) == 64, "timer_by_row %zu", sizeof(struct kinstr_timer_by_row));
	CHECK(sizeof(struct kinstr_tally_ent) == 32 && sizeof(struct kinstr_tally_ent) % 8 == 0, "tally_ent %zu",
	      sizeof(struct kinstr_tally_ent));
	CHECK(offsetof(struct kinstr_scope, comm) == KINSTR_SCOPE_SIZE_VER0 - 16, "scope's comm at %zu",
	      offsetof(struct kinstr_scope, comm));
	/* ABI 0.17: the predicates at install's end, filtered at counts' end; a fixed program */
	CHECK(sizeof(struct kinstr_install) == KINSTR_INSTALL_SIZE_VER4, "install %zu", sizeof(struct kinstr_install));
	CHECK(offsetof(struct kinstr_install, preds) == KINSTR_INSTALL_SIZE_VER3, "install's preds at %zu",
	      offsetof(struct kinstr_install, preds));
	CHECK(sizeof(struct kinstr_counts) == KINSTR_COUNTS_SIZE_VER3, "counts %zu", sizeof(struct kinstr_counts));
	CHECK(offsetof(struct kinstr_counts, filtered) == KINSTR_COUNTS_SIZE_VER2, "counts' filtered at %zu",
	      offsetof(struct kinstr_counts, filtered));
	CHECK(sizeof(struct kinstr_pred_insn) == 16, "pred insn %zu", sizeof(struct kinstr_pred_insn));
	CHECK(sizeof(struct kinstr_pred) == 8 + 16 * KINSTR_PRED_MAX_INSNS, "pred %zu", sizeof(struct kinstr_pred));
	CHECK(sizeof(struct kinstr_trace_spec) == 72, "trace spec %zu", sizeof(struct kinstr_trace_spec));
	CHECK(KINSTR_FEAT_PRED == 1ULL << 20 && !strcmp(kinstr_feature__str(20), "pred"), "pred feature");
}

static void t_every_reason_has_a_name(void)
{
	unsigned int r;

	for (r = 0; r < KINSTR_R_NR; r++) {
		CHECK(strcmp(kinstr_site_reason__str(r), "unknown reason") != 0, "reason %u unnamed", r);
		CHECK(strcmp(kinstr_site_reason__id(r), "unknown") != 0, "reason %u has no id", r);
	}
	CHECK(!strcmp(kinstr_site_reason__str(KINSTR_R_NR), "unknown reason"), "out of range");
}

static void t_ioctl_numbers_carry_no_size(void)
{
	/* the size lives in the struct, so growing a struct never changes its ioctl number */
	CHECK(_IOC_SIZE(KINSTR_IOC_VERSION) == 0, "size bits %u", _IOC_SIZE(KINSTR_IOC_VERSION));
	CHECK(KINSTR_IOC_VERSION != KINSTR_IOC_DEBUG_INFO, "distinct numbers");
}

static void t_open_hints_name_the_fix(void)
{
	CHECK(strstr(kinstr_dev__open_hint(ENOENT), "insmod") != NULL, "%s",
	      kinstr_dev__open_hint(ENOENT));
	CHECK(strstr(kinstr_dev__open_hint(EACCES), "CAP_SYS_ADMIN") != NULL, "%s",
	      kinstr_dev__open_hint(EACCES));
	CHECK(strstr(kinstr_dev__open_hint(EPERM), "root") != NULL, "%s", kinstr_dev__open_hint(EPERM));
}

static void t_open_missing_device_sets_errno(void)
{
	struct kinstr_dev *dev;

	errno = 0;
	dev = kinstr_dev__open("/nonexistent/kinstr");
	CHECK(dev == NULL, "opened a missing path");
	CHECK(errno == ENOENT, "errno %d", errno);
}

/* Every KINSTR_FEAT_* the ABI header defines has its name (the suffix, lowercase) and no other bit has one. */
static void t_every_feature_has_its_name(void)
{
	FILE *f = fopen("include/uapi/linux/kinstr.h", "r");
	char line[512], name[64], want[64];
	unsigned int bit, n = 0, i;
	bool seen[64] = { false };

	CHECK(f, "cannot read include/uapi/linux/kinstr.h");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "#define KINSTR_FEAT_%63s (1ULL << %u)", name, &bit) != 2 || bit >= 64)
			continue;
		for (i = 0; name[i]; i++)
			want[i] = (char)(name[i] >= 'A' && name[i] <= 'Z' ? name[i] - 'A' + 'a' : name[i]);
		want[i] = 0;
		seen[bit] = true;
		n++;
		CHECK(kinstr_feature__str(bit) && !strcmp(kinstr_feature__str(bit), want), "bit %u: '%s', not '%s'", bit,
		      kinstr_feature__str(bit) ? kinstr_feature__str(bit) : "(none)", want);
	}
	fclose(f);
	CHECK(n >= 13, "only %u features read from the header", n);
	for (bit = 0; bit < 64; bit++)
		CHECK(seen[bit] || !kinstr_feature__str(bit), "bit %u has a name but no KINSTR_FEAT_", bit);
}

int main(void)
{
	RUN(t_version_struct_layout);
	RUN(t_debug_info_struct_layout);
	RUN(t_other_struct_layouts);
	RUN(t_every_reason_has_a_name);
	RUN(t_ioctl_numbers_carry_no_size);
	RUN(t_open_hints_name_the_fix);
	RUN(t_open_missing_device_sets_errno);
	RUN(t_every_feature_has_its_name);
	return check_done();
}
