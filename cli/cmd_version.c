// SPDX-License-Identifier: GPL-2.0
/* kinstr version: the CLI's, the module's and the running kernel's versions. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/utsname.h>

#include <kinstr/kinstr.h>
#include "cli.h"

static const struct cli_opt version_opts[] = {
	{ 0, "verbose", 'v', NULL, "also the addresses the module resolved (kallsyms_lookup_name, text)" },
	{ .common = CLI_OPT_JSON, .help = "one JSON object on stdout" },
	{ 0 },
};

static const struct cli_usage version_usage = {
	.name = "version", .synopsis = "[-v|--verbose] [--json]", .verb = "print",
	.intro = "Print the versions of the kinstr CLI, of the loaded kinstr.ko (and its ABI) and of\n"
		 "the kernel being instrumented. Exits 1 when the module cannot be reached.\n\n",
	.opts = version_opts, .min_args = 0, .max_args = 0,
};

static int version_opt(void *ctx, int key, const char *arg)
{
	*(bool *)ctx = true;	/* -v */
	return 0;
}

/* Where the kernel sends returns, as the module saw it patch them at boot. */
static const char *returns_str(const struct kinstr_debug_info *d)
{
	if (d->flags & KINSTR_DEBUG_RET_BARE)
		return "bare";		/* the CPU needs no return thunk: `ret; int3` */
	return d->flags & KINSTR_DEBUG_RET_ITS ? "its" : "thunk";
}

int cmd_version(int argc, char **argv)
{
	struct kinstr_debug_info d;
	struct kinstr_version v;
	struct kinstr_dev *dev;
	bool verbose = false, json = false, first;
	unsigned int i;
	struct cli_common co;
	int err;

	cli_common__init(&co);
	err = cli_opts__parse(&version_usage, argc, argv, &co, version_opt, &verbose);
	if (err != CLI_GO_ON)
		return err;
	json = co.json;

	dev = kinstr_dev__open(NULL);
	if (!dev) {
		err = errno;
		if (json) {
			printf("{\"cli\":");
			cli_json_str(kinstr__version());
			printf(",\"module\":null,\"error\":");
			cli_json_str(kinstr_dev__open_hint(err));
			printf("}\n");
		} else {
			printf("kinstr     %s\n", kinstr__version());
		}
		cli_err("cannot open %s: %s: %s", KINSTR_DEVICE, strerror(err), kinstr_dev__open_hint(err));
		return CLI_FAIL;
	}
	err = kinstr_dev__version(dev, &v);
	if (!err && verbose)
		err = kinstr_dev__debug_info(dev, &d);
	kinstr_dev__close(dev);
	if (err) {
		cli_err("%s does not answer the version ioctl: %s (module and CLI from different builds?)",
			KINSTR_DEVICE, strerror(-err));
		return CLI_FAIL;
	}

	if (json) {
		printf("{\"cli\":");
		cli_json_str(kinstr__version());
		printf(",\"module\":");
		cli_json_str(v.module_version);
		printf(",\"abi\":\"%u.%u\",\"kernel\":", v.abi_major, v.abi_minor);
		cli_json_str(v.kernel_release);
		printf(",\"features\":[");
		for (i = 0, first = true; i < 64; i++)
			if ((v.features >> i) & 1) {
				printf("%s", first ? "" : ",");
				cli_json_str(kinstr_feature__str(i) ? kinstr_feature__str(i) : "unknown");
				first = false;
			}
		printf("]");
		if (verbose)
			printf(",\"kallsyms_lookup_name\":\"0x%llx\",\"stext\":\"0x%llx\",\"etext\":\"0x%llx\","
			       "\"lockdown\":%s",
			       (unsigned long long)d.kallsyms_lookup_name, (unsigned long long)d.stext,
			       (unsigned long long)d.etext, d.flags & KINSTR_DEBUG_LOCKDOWN ? "true" : "false");
		if (verbose && d.size >= KINSTR_DEBUG_INFO_SIZE_VER1)
			printf(",\"returns\":\"%s\",\"return_thunk\":\"0x%llx\",\"ibt\":%s", returns_str(&d),
			       (unsigned long long)d.return_thunk, d.flags & KINSTR_DEBUG_IBT ? "true" : "false");
		printf("}\n");
	} else {
		printf("kinstr     %s\n", kinstr__version());
		printf("kinstr.ko  %s (abi %u.%u)\n", v.module_version, v.abi_major, v.abi_minor);
		printf("kernel     %s\n", v.kernel_release);
		printf("features  ");
		for (i = 0; i < 64; i++)
			if ((v.features >> i) & 1)
				printf(" %s", kinstr_feature__str(i) ? kinstr_feature__str(i) : "unknown");
		printf("\n");
		if (verbose) {
			printf("kallsyms_lookup_name  0x%llx\n", (unsigned long long)d.kallsyms_lookup_name);
			printf("kernel text           0x%llx-0x%llx (%llu KiB)\n",
			       (unsigned long long)d.stext, (unsigned long long)d.etext,
			       (unsigned long long)(d.etext - d.stext) >> 10);
			printf("lockdown              %s\n",
			       d.flags & KINSTR_DEBUG_LOCKDOWN ? "yes (patching will be refused)" : "no");
			if (d.size >= KINSTR_DEBUG_INFO_SIZE_VER1) {
				printf("returns               %s", returns_str(&d));
				if (d.return_thunk)
					printf(" (jmp 0x%llx)", (unsigned long long)d.return_thunk);
				printf("\nibt                   %s\n", d.flags & KINSTR_DEBUG_IBT ?
				       "yes (functions start with an ENDBR)" : "no");
			}
		}
	}
	if (v.abi_major != KINSTR_ABI_MAJOR) {
		cli_err("module ABI %u.%u is incompatible with this CLI's %d.%d: rebuild both",
			v.abi_major, v.abi_minor, KINSTR_ABI_MAJOR, KINSTR_ABI_MINOR);
		return CLI_FAIL;
	}
	return CLI_OK;
}
