// SPDX-License-Identifier: GPL-2.0
/* kinstr disasm FUNC: the live function, block by block, with each instruction's site class. */
#include <errno.h>
#include <unistd.h>
#include <stdio.h>
#include <string.h>

#include <kinstr/btf.h>
#include <kinstr/sites.h>
#include "cli.h"

static const struct cli_opt disasm_opts[] = {
	{ .common = CLI_OPT_JSON, .help = "one JSON object: the function, its blocks and every instruction" },
	{ .common = CLI_OPT_SNAPSHOT },
	{ 0 },
};

static const struct cli_usage disasm_usage = {
	.name = "disasm", .synopsis = "[--json] [--snapshot FILE] FUNC", .verb = "disassemble",
	.intro = "Disassemble the live text of FUNC (as the running kernel has rewritten it), block by\n"
		 "block. Each instruction shows its site class -- jump (a 5-byte jmp fits), trap (only an\n"
		 "int3 fits), refused -- and the rule that decided it. The prototype comes from the kernel's\n"
		 "BTF, each argument with the register it arrives in.\n\n",
	.opts = disasm_opts, .min_args = 1, .max_args = 1,
};

static void json_insn(const struct kinstr_cfg_insn *in, const struct kinstr_site *s, uint64_t start,
		      const char *text, const char *why)
{
	unsigned int r, first = 1;

	printf("{\"offset\":%llu,\"addr\":\"0x%llx\",\"len\":%u,\"bytes\":\"",
	       (unsigned long long)(in->x.addr - start), (unsigned long long)in->x.addr, in->x.len);
	for (r = 0; r < in->x.len; r++)
		printf("%02x", in->x.bytes[r]);
	printf("\",\"text\":");
	cli_json_str(text);
	printf(",\"class\":\"%s\",\"rule\":\"%s\",\"why\":", kinstr_site_class__str(s->cls),
	       kinstr_site_rule__id(s->rule));
	cli_json_str(why);
	if (s->cls == KINSTR_SITE_JUMP)
		printf(",\"displaced\":%u", s->displaced_len);
	printf(",\"live_in\":[");
	for (r = 0; r < KINSTR_X86_NR_REGS; r++) {
		if (!(in->live_in & KINSTR_X86_REG(r)))
			continue;
		printf("%s\"%s\"", first ? "" : ",", kinstr_x86__reg_name(r));
		first = 0;
	}
	printf("]}");
}

int cmd_disasm(int argc, char **argv)
{
	const struct cli_colors *col = cli_colors();
	const char *name;
	struct cli_common co;
	size_t counts[KINSTR_SITE_NR_CLASSES] = { 0 };
	const struct kinstr_func *f;
	const struct kinstr_cfg *cfg;
	struct kinstr_kernel *k;
	struct kinstr_dev *dev;
	struct kinstr_fn *fn;
	bool have_proto = false;
	struct kinstr_proto proto;
	char proto_text[1024];
	size_t b, i;
	int ret;

	cli_common__init(&co);
	ret = cli_opts__parse(&disasm_usage, argc, argv, &co, NULL, NULL);
	if (ret != CLI_GO_ON)
		return ret;
	name = argv[optind];
	k = cli_open_kernel(co.snapshot, &dev);
	if (!k)
		return CLI_FAIL;
	f = cli_find_func(k, NULL, name);
	if (!f) {
		cli_close_kernel(k, dev);
		return CLI_FAIL;
	}
	fn = kinstr_fn__analyze(k, f);
	if (!fn) {
		cli_err("cannot analyse %s: %s", name, strerror(errno));
		cli_close_kernel(k, dev);
		return CLI_FAIL;
	}
	cfg = kinstr_fn__cfg(fn);
	for (i = 0; i < kinstr_fn__site_cnt(fn); i++)
		counts[kinstr_fn__site(fn, i)->cls]++;
	/* the prototype, from the running kernel's BTF (a snapshot carries none) */
	/* (vmlinux BTF only: a module's function has its prototype in the module's BTF) */
	if (!co.snapshot && !f->module) {
		struct kinstr_btf *btf = kinstr_btf__open(NULL);

		have_proto = btf && kinstr_btf__proto(btf, f->name, &proto) == 0 &&
			     kinstr_proto__format(&proto, f->name, proto_text, sizeof(proto_text)) == 0;
		kinstr_btf__close(btf);
	}

	if (co.json) {
		printf("{\"function\":");
		cli_json_str(f->name);
		if (f->module) {
			printf(",\"module\":");
			cli_json_str(f->module);
		}
		printf(",\"addr\":\"0x%llx\",\"size\":%u,\"kernel\":", f->addr, f->size);
		cli_json_str(kinstr_kernel__release(k));
		if (have_proto) {
			printf(",\"prototype\":");
			cli_json_str(proto_text);
			printf(",\"args\":[");
			for (i = 0; i < proto.nargs; i++) {
				printf("%s{\"name\":", i ? "," : "");
				cli_json_str(proto.args[i].name);
				printf(",\"type\":");
				cli_json_str(proto.args[i].type);
				printf(",\"reg\":\"%s\"}", proto.args[i].on_stack ? "stack" :
				       kinstr_x86__reg_name(proto.args[i].reg[0]));
			}
			printf("]");
		}
		printf(",\"jump\":%zu,\"trap\":%zu,\"refused\":%zu,\"blocks\":[",
		       counts[KINSTR_SITE_JUMP], counts[KINSTR_SITE_TRAP], counts[KINSTR_SITE_REFUSED]);
	} else {
		printf("%s%s%s%s 0x%llx..0x%llx (%u bytes), %zu instructions in %zu blocks: "
		       "%zu jump, %zu trap, %zu refused\n", f->name, f->module ? " [" : "",
		       f->module ? f->module : "", f->module ? "]" : "", f->addr, f->addr + f->size, f->size,
		       kinstr_fn__site_cnt(fn), kinstr_cfg__block_cnt(cfg), counts[KINSTR_SITE_JUMP],
		       counts[KINSTR_SITE_TRAP], counts[KINSTR_SITE_REFUSED]);
		if (have_proto)
			printf("%s%s%s\n", col->dim, proto_text, col->reset);
	}
	for (b = 0; b < kinstr_cfg__block_cnt(cfg); b++) {
		const struct kinstr_cfg_block *bl = kinstr_cfg__block(cfg, b);

		if (co.json) {
			printf("%s{\"start\":%llu,\"end\":%llu,\"succ\":[", b ? "," : "",
			       (unsigned long long)(bl->start - f->addr), (unsigned long long)(bl->end - f->addr));
			for (i = 0; i < 2; i++)
				if (bl->succ[i] != KINSTR_CFG_NONE)
					printf("%s%u", i && bl->succ[0] != KINSTR_CFG_NONE ? "," : "", bl->succ[i]);
			printf("],\"insns\":[");
		} else {
			printf("%s-- block %zu [+0x%llx..+0x%llx)", col->dim, b,
			       (unsigned long long)(bl->start - f->addr), (unsigned long long)(bl->end - f->addr));
			for (i = 0; i < 2; i++)
				if (bl->succ[i] != KINSTR_CFG_NONE)
					printf("%s%u", i && bl->succ[0] != KINSTR_CFG_NONE ? " " : " -> ", bl->succ[i]);
			if (bl->exits & KINSTR_CFG_EXIT_RETURN)
				printf(" (returns)");
			if (bl->exits & KINSTR_CFG_EXIT_TAIL_CALL)
				printf(" (tail call)");
			printf("%s\n", col->reset);
		}
		for (i = bl->first; i < bl->first + bl->count; i++) {
			const struct kinstr_cfg_insn *in = kinstr_cfg__insn(cfg, i);
			const struct kinstr_site *s = kinstr_fn__site(fn, i);
			char text[128], why[256], hex[32] = "";
			const char *cc = s->cls == KINSTR_SITE_JUMP ? col->jump :
					 s->cls == KINSTR_SITE_TRAP ? col->trap : col->refused;
			unsigned int n;

			if (kinstr_x86__format(&in->x, text, sizeof(text)) < 0)
				snprintf(text, sizeof(text), "(bad)");
			kinstr_site__why(s, why, sizeof(why));
			if (s->rule == KINSTR_RULE_NONE)
				why[0] = 0;
			if (co.json) {
				printf("%s", i == bl->first ? "" : ",");
				json_insn(in, s, f->addr, text, why);
				continue;
			}
			for (n = 0; n < in->x.len && n < 8; n++)
				snprintf(hex + 3 * n, sizeof(hex) - 3 * n, "%02x ", in->x.bytes[n]);
			if (in->x.len > 8)
				hex[23] = '+';
			printf("  +0x%-5llx %-24s %-36s %s%-7s%s %s\n",
			       (unsigned long long)(in->x.addr - f->addr), hex, text, cc,
			       kinstr_site_class__str(s->cls), col->reset, why);
		}
		if (co.json)
			printf("]}");
	}
	if (co.json)
		printf("]}\n");
	kinstr_fn__free(fn);
	cli_close_kernel(k, dev);
	return CLI_OK;
}
