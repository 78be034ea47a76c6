// SPDX-License-Identifier: GPL-2.0
/*
 * Our decoder against binutils over the whole .text of the target kernel's vmlinux: a linear
 * sweep with kinstr_x86__decode() must start instructions exactly where `objdump -d` does, and
 * agree on every direct branch target and RIP-relative operand address that objdump prints.
 *
 * Then the CFG and liveness pass runs over all of .text, cut into pseudo-functions at int3
 * padding (the vmlinux has no symbols), and the result must be self-consistent.
 *
 * The vmlinux is extracted from /boot/vmlinuz-$(scripts/kernel-release) (the bzImage's payload,
 * decompressed with the matching command-line tool) and cached as build/vmlinux-RELEASE.
 */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <kinstr/cfg.h>
#include <kinstr/x86.h>
#include "check.h"

static char root[PATH_MAX];
static char release[128];
static char vmlinux[PATH_MAX + 160];
static const char *skip_why;

/* The repository root: build/tests/unit/<this program> is three levels below it. */
static void find_root(void)
{
	char exe[PATH_MAX], probe[PATH_MAX + 32];
	ssize_t n;
	int i;

	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n > 0) {
		exe[n] = 0;
		for (i = 0; i < 4; i++) {
			char *slash = strrchr(exe, '/');

			if (slash)
				*slash = 0;
		}
		snprintf(probe, sizeof(probe), "%s/scripts/kernel-release", exe);
		if (access(probe, X_OK) == 0) {
			snprintf(root, sizeof(root), "%s", exe);
			return;
		}
	}
	if (!getcwd(root, sizeof(root)))
		snprintf(root, sizeof(root), ".");
}

static int read_release(void)
{
	char cmd[PATH_MAX + 64];
	FILE *p;
	size_t n;

	snprintf(cmd, sizeof(cmd), "'%s/scripts/kernel-release' 2>/dev/null", root);
	p = popen(cmd, "r");
	if (!p)
		return -errno;
	if (!fgets(release, sizeof(release), p))
		release[0] = 0;
	if (pclose(p) != 0 || !release[0])
		return -ENOENT;
	n = strlen(release);
	while (n && (release[n - 1] == '\n' || release[n - 1] == ' '))
		release[--n] = 0;
	return 0;
}

static uint32_t le32(const unsigned char *p)
{
	return p[0] | p[1] << 8 | p[2] << 16 | (uint32_t)p[3] << 24;
}

/* The decompressor for a payload, by its magic; NULL if unknown. */
static const char *payload_tool(const unsigned char *p, size_t n)
{
	if (n >= 6 && !memcmp(p, "\xfd" "7zXZ\0", 6))
		return "xz -dc";
	if (n >= 4 && !memcmp(p, "\x28\xb5\x2f\xfd", 4))
		return "zstd -dcq";
	if (n >= 2 && !memcmp(p, "\x1f\x8b", 2))
		return "gzip -dc";
	if (n >= 3 && !memcmp(p, "BZh", 3))
		return "bzip2 -dc";
	if (n >= 4 && !memcmp(p, "\x02\x21\x4c\x18", 4))
		return "lz4 -dc";
	if (n >= 3 && !memcmp(p, "\x5d\x00\x00", 3))
		return "xz --format=lzma -dc";
	return NULL;
}

static int map_file(const char *path, unsigned char **data, size_t *size)
{
	struct stat st;
	void *m;
	int fd;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0 || st.st_size == 0) {
		close(fd);
		return -EINVAL;
	}
	m = mmap(NULL, st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (m == MAP_FAILED)
		return -errno;
	*data = m;
	*size = st.st_size;
	return 0;
}

/*
 * bzImage: setup_sects at 0x1f1, "HdrS" at 0x202, payload_offset/length at 0x248/0x24c; the
 * payload starts payload_offset bytes into the protected-mode part and ends with the
 * decompressed size as 4 little-endian bytes (Kbuild's size_append), which the tools reject.
 */
static int extract_vmlinux(const char *vmlinuz, const char *out)
{
	unsigned char *img;
	size_t size, off, len;
	unsigned int setup_sects;
	char tmp[PATH_MAX + 200], cmd[2 * PATH_MAX + 300];
	const char *tool;
	struct stat st;
	uint32_t want;
	FILE *p;
	int err;

	err = map_file(vmlinuz, &img, &size);
	if (err)
		return err;
	err = -EINVAL;
	if (size < 0x260 || memcmp(img + 0x202, "HdrS", 4))
		goto out;
	setup_sects = img[0x1f1] ? img[0x1f1] : 4;
	off = (size_t)(setup_sects + 1) * 512 + le32(img + 0x248);
	len = le32(img + 0x24c);
	if (len < 8 || off + len > size)
		goto out;
	want = le32(img + off + len - 4);
	tool = payload_tool(img + off, len);
	if (!tool) {
		fprintf(stderr, "unknown payload compression in %s\n", vmlinuz);
		goto out;
	}
	snprintf(tmp, sizeof(tmp), "%s.tmp%d", out, (int)getpid());
	snprintf(cmd, sizeof(cmd), "%s > '%s'", tool, tmp);
	p = popen(cmd, "w");
	if (!p) {
		err = -errno;
		goto out;
	}
	if (fwrite(img + off, 1, len - 4, p) != len - 4)
		err = -EIO;
	if (pclose(p) != 0 || err == -EIO || stat(tmp, &st) < 0 || (uint32_t)st.st_size != want) {
		fprintf(stderr, "'%s' of %s's payload failed\n", tool, vmlinuz);
		unlink(tmp);
		err = -EIO;
		goto out;
	}
	err = rename(tmp, out) < 0 ? -errno : 0;
out:
	munmap(img, size);
	return err;
}

/* build/vmlinux-RELEASE, extracted again when the vmlinuz is newer. */
static int get_vmlinux(void)
{
	char vmlinuz[256], dir[PATH_MAX + 16];
	struct stat zst, vst;

	snprintf(vmlinuz, sizeof(vmlinuz), "/boot/vmlinuz-%s", release);
	if (stat(vmlinuz, &zst) < 0) {
		skip_why = "no /boot/vmlinuz for the target kernel (run scripts/setup)";
		return -ENOENT;
	}
	snprintf(dir, sizeof(dir), "%s/build", root);
	mkdir(dir, 0755);
	snprintf(vmlinux, sizeof(vmlinux), "%s/vmlinux-%s", dir, release);
	if (stat(vmlinux, &vst) == 0 && vst.st_mtime >= zst.st_mtime)
		return 0;
	return extract_vmlinux(vmlinuz, vmlinux);
}

struct section {
	uint64_t addr, size;
	const unsigned char *data;
};

static int find_text(const unsigned char *elf, size_t size, struct section *text)
{
	const Elf64_Ehdr *eh = (const void *)elf;
	const Elf64_Shdr *sh, *strs;
	unsigned int i;

	if (size < sizeof(*eh) || memcmp(eh->e_ident, ELFMAG, SELFMAG) ||
	    eh->e_ident[EI_CLASS] != ELFCLASS64 || eh->e_machine != EM_X86_64)
		return -EINVAL;
	if (eh->e_shoff + (uint64_t)eh->e_shnum * sizeof(*sh) > size || eh->e_shstrndx >= eh->e_shnum)
		return -EINVAL;
	sh = (const void *)(elf + eh->e_shoff);
	strs = &sh[eh->e_shstrndx];
	for (i = 0; i < eh->e_shnum; i++) {
		if (sh[i].sh_name >= strs->sh_size || strs->sh_offset + strs->sh_size > size)
			return -EINVAL;
		if (strcmp((const char *)elf + strs->sh_offset + sh[i].sh_name, ".text"))
			continue;
		if (sh[i].sh_type != SHT_PROGBITS || sh[i].sh_offset + sh[i].sh_size > size)
			return -EINVAL;
		text->addr = sh[i].sh_addr;
		text->size = sh[i].sh_size;
		text->data = elf + sh[i].sh_offset;
		return 0;
	}
	return -ENOENT;
}

/* One objdump line: "ffffffff81000000:\tlea    0x1a03f51(%rip),%rsp        # 0xffff..." */
struct od_insn {
	uint64_t addr;
	int bad;		/* "(bad)" */
	int has_target;		/* direct branch: "jmp    0xffffffff81000000" */
	uint64_t target;
	int has_comment;	/* "# 0x..." after a RIP-relative operand */
	uint64_t comment;
};

static int parse_od_line(char *line, struct od_insn *o)
{
	char *end, *tab, *mn, *sp, *hash;

	o->addr = strtoull(line, &end, 16);
	if (end == line || end[0] != ':' || end[1] != '\t')
		return 0;
	tab = end + 2;
	o->bad = strncmp(tab, "(bad)", 5) == 0;
	o->has_target = o->has_comment = 0;
	mn = tab;
	sp = strpbrk(mn, " \n");
	if (sp && *sp == ' ' && (mn[0] == 'j' || !strncmp(mn, "call", 4) || !strncmp(mn, "loop", 4))) {
		char *arg = sp;

		while (*arg == ' ')
			arg++;
		if (!strncmp(arg, "0x", 2)) {
			o->target = strtoull(arg, NULL, 16);
			o->has_target = 1;
		}
	}
	hash = strstr(tab, "(%rip)");
	if (hash) {
		hash = strstr(hash, "# 0x");
		if (hash) {
			o->comment = strtoull(hash + 2, NULL, 16);
			o->has_comment = 1;
		}
	}
	return 1;
}

struct sweep_stats {
	unsigned long compared, mismatches, undecodable, od_bad;
	unsigned long targets, target_mismatches, rip, rip_mismatches;
	double seconds;
};

static void show(const struct section *t, uint64_t addr, const char *what)
{
	uint64_t o = addr - t->addr;
	unsigned int i;

	printf("     %s at %#llx:", what, (unsigned long long)addr);
	for (i = 0; i < 16 && o + i < t->size; i++)
		printf(" %02x", t->data[o + i]);
	printf("\n");
}

static int sweep(const struct section *t, struct sweep_stats *s)
{
	char cmd[PATH_MAX + 256], *line = NULL;
	struct kinstr_x86_insn in;
	struct od_insn od;
	uint64_t off = 0;
	size_t cap = 0;
	int have = 0, shown = 0;
	FILE *p;

	snprintf(cmd, sizeof(cmd), "objdump -d -z --no-show-raw-insn -j .text '%s'", vmlinux);
	p = popen(cmd, "r");
	if (!p)
		return -errno;

	/* merge two sorted streams of start addresses */
	while (getline(&line, &cap, p) > 0) {
		if (!parse_od_line(line, &od))
			continue;
		s->od_bad += od.bad;
		for (;;) {
			uint64_t ours = t->addr + off;
			int err = 0;

			if (!have) {
				if (off >= t->size)
					break;
				err = kinstr_x86__decode(t->data + off, t->size - off, ours, &in);
				have = 1;
			}
			if (ours > od.addr)
				break;
			if (ours == od.addr) {
				s->compared++;
				if (err == 0 && od.has_target && in.target) {
					s->targets++;
					if (in.target != od.target) {
						s->target_mismatches++;
						if (shown++ < 10)
							show(t, ours, "branch target differs");
					}
				}
				if (err == 0 && od.has_comment && (in.attr & KINSTR_X86_A_RIP_REL)) {
					s->rip++;
					if (in.rip_target != od.comment) {
						s->rip_mismatches++;
						if (shown++ < 10)
							show(t, ours, "RIP-relative target differs");
					}
				}
			} else {
				s->mismatches++;
				if (shown++ < 10)
					show(t, ours, "only we start an insn");
			}
			if (err) {
				s->undecodable++;
				off += 1;	/* resynchronise as objdump does after "(bad)" */
			} else {
				off += in.len;
			}
			have = 0;
			if (ours == od.addr)
				goto next_line;
		}
		/* objdump starts an instruction where we do not */
		s->mismatches++;
		if (shown++ < 10)
			show(t, od.addr, "only objdump starts an insn");
next_line:;
	}
	free(line);
	if (pclose(p) != 0)
		return -EIO;
	/* anything we decoded past objdump's last line */
	while (off < t->size) {
		if (kinstr_x86__decode(t->data + off, t->size - off, t->addr + off, &in) == 0)
			off += in.len;
		else
			off++;
		s->mismatches++;
	}
	return 0;
}

static int setup_text(struct section *text, unsigned char **elf, size_t *size)
{
	int err;

	if (read_release()) {
		skip_why = "scripts/kernel-release found no target kernel (run scripts/setup)";
		return -ENOENT;
	}
	err = get_vmlinux();
	if (err) {
		if (!skip_why)
			printf("     extracting vmlinux for %s: %s\n", release, strerror(-err));
		return err;
	}
	err = map_file(vmlinux, elf, size);
	if (err)
		return err;
	err = find_text(*elf, *size, text);
	if (err)
		munmap(*elf, *size);
	return err;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static void t_vmlinux_text_boundaries_match_objdump(void)
{
	struct sweep_stats s = { 0 };
	struct timespec t0, t1;
	struct section text;
	unsigned char *elf;
	size_t size;
	int err;

	if (system("objdump --version >/dev/null 2>&1") != 0)
		SKIP("objdump not installed (binutils; run scripts/setup)");
	err = setup_text(&text, &elf, &size);
	if (err && skip_why)
		SKIP(skip_why);
	CHECK(err == 0, "vmlinux .text: %s", strerror(-err));
	if (err)
		return;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	err = sweep(&text, &s);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	s.seconds = (t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9;
	CHECK(err == 0, "objdump failed: %s", strerror(-err));

	printf("     %s .text %#llx bytes: %lu instructions compared, %lu boundary mismatches, "
	       "%lu undecodable bytes (objdump: %lu \"(bad)\"); %lu branch targets, %lu differ; "
	       "%lu RIP-relative targets, %lu differ; %.1f s\n",
	       release, (unsigned long long)text.size, s.compared, s.mismatches, s.undecodable,
	       s.od_bad, s.targets, s.target_mismatches, s.rip, s.rip_mismatches, s.seconds);
	CHECK(s.compared > 100000, "only %lu instructions compared", s.compared);
	CHECK(s.mismatches == 0, "%lu boundary mismatches", s.mismatches);
	CHECK(s.undecodable == s.od_bad, "we could not decode %lu places, objdump %lu",
	      s.undecodable, s.od_bad);
	CHECK(s.target_mismatches == 0, "%lu branch targets differ", s.target_mismatches);
	CHECK(s.rip_mismatches == 0, "%lu RIP-relative targets differ", s.rip_mismatches);
	munmap(elf, size);
}

struct cfg_stats {
	unsigned long funcs, insns, blocks, returns, tail_calls, ind_jmp_funcs, bad, invalid;
	unsigned long flags_dead;
};

/* Structural invariants of one CFG; returns the number of violations (and reports a few). */
static unsigned int check_cfg(const struct kinstr_cfg *cfg, struct cfg_stats *s)
{
	size_t i, n = kinstr_cfg__insn_cnt(cfg), nb = kinstr_cfg__block_cnt(cfg);
	uint64_t next = kinstr_cfg__start(cfg);
	unsigned int bad = 0;
	uint32_t covered = 0;

	for (i = 0; i < nb; i++) {
		const struct kinstr_cfg_block *b = kinstr_cfg__block(cfg, i);

		bad += b->first != covered || b->count == 0;
		bad += b->start != kinstr_cfg__insn(cfg, b->first)->x.addr;
		bad += (b->succ[0] != KINSTR_CFG_NONE && b->succ[0] >= nb) ||
		       (b->succ[1] != KINSTR_CFG_NONE && b->succ[1] >= nb);
		covered += b->count;
	}
	bad += covered != n;
	for (i = 0; i < n; i++) {
		const struct kinstr_cfg_insn *in = kinstr_cfg__insn(cfg, i);
		uint32_t gprs_read = in->x.regs_read & KINSTR_X86_REGS_GPR;

		bad += in->x.addr != next;
		next += in->x.len;
		bad += in->block >= nb || !(in->live_in & KINSTR_X86_REG(KINSTR_X86_RSP));
		if (in->target_insn != KINSTR_CFG_NONE)
			bad += kinstr_cfg__insn(cfg, in->target_insn)->x.addr != in->x.target;
		if (!(in->flags & KINSTR_CFG_I_INVALID) && in->x.flow != KINSTR_X86_FLOW_INT3)
			bad += (in->live_in & gprs_read) != gprs_read;
		s->returns += !!(in->flags & KINSTR_CFG_I_RETURN);
		s->tail_calls += !!(in->flags & KINSTR_CFG_I_TAIL_CALL);
		s->flags_dead += !(in->flags & KINSTR_CFG_I_PADDING) &&
				 !(in->live_in & KINSTR_X86_REG(KINSTR_X86_FLAGS));
	}
	bad += next != kinstr_cfg__start(cfg) + kinstr_cfg__size(cfg);
	s->funcs++;
	s->insns += n;
	s->blocks += nb;
	s->ind_jmp_funcs += !!(kinstr_cfg__flags(cfg) & KINSTR_CFG_F_INDIRECT_JMP);
	s->bad += !!(kinstr_cfg__flags(cfg) & KINSTR_CFG_F_BAD_TARGET);
	s->invalid += !!(kinstr_cfg__flags(cfg) & KINSTR_CFG_F_INVALID);
	return bad;
}

/* The most frequent direct jmp target in .text: __x86_return_thunk on a RETHUNK kernel. */
static uint64_t guess_return_thunk(const struct section *t, unsigned long *sweep_insns)
{
	uint64_t best = 0, cur = 0, off = 0;
	unsigned long best_n = 0, cur_n = 0, n = 0, i;
	struct kinstr_x86_insn in;
	uint64_t *tg = NULL;
	size_t cnt = 0, cap = 0;

	while (off < t->size) {
		if (kinstr_x86__decode(t->data + off, t->size - off, t->addr + off, &in)) {
			off++;
			n++;
			continue;
		}
		off += in.len;
		n++;
		if (in.flow != KINSTR_X86_FLOW_JMP)
			continue;
		if (cnt == cap) {
			uint64_t *p = realloc(tg, (cap = cap ? 2 * cap : 65536) * sizeof(*tg));

			if (!p)
				break;
			tg = p;
		}
		tg[cnt++] = in.target;
	}
	*sweep_insns = n;
	qsort(tg, cnt, sizeof(*tg), cmp_u64);
	for (i = 0; i < cnt; i++) {
		if (i == 0 || tg[i] != cur) {
			cur = tg[i];
			cur_n = 0;
		}
		if (++cur_n > best_n) {
			best_n = cur_n;
			best = cur;
		}
	}
	free(tg);
	return best;
}

static void t_vmlinux_text_cfgs_are_consistent(void)
{
	struct kinstr_cfg_opts opts = { .sz = sizeof(opts) };
	struct cfg_stats s = { 0 };
	struct timespec t0, t1;
	struct section text;
	unsigned long sweep_insns = 0, violations = 0, failed = 0;
	uint64_t off = 0, start = 0;
	unsigned char *elf;
	size_t size;
	int prev_end = 0, err;

	err = setup_text(&text, &elf, &size);
	if (err && skip_why)
		SKIP(skip_why);
	CHECK(err == 0, "vmlinux .text: %s", strerror(-err));
	if (err)
		return;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	opts.return_thunk = guess_return_thunk(&text, &sweep_insns);
	/*
	 * Pseudo-functions: a new one at each 16-byte aligned instruction that is not padding and
	 * follows padding (int3, nop) or an instruction that does not fall through.
	 */
	while (off <= text.size) {
		struct kinstr_x86_insn in;
		int is_pad = 0, ends = 0;
		uint32_t len = 1;

		if (off < text.size &&
		    !kinstr_x86__decode(text.data + off, text.size - off, text.addr + off, &in)) {
			is_pad = in.flow == KINSTR_X86_FLOW_INT3 || (in.attr & KINSTR_X86_A_NOP);
			ends = is_pad || !kinstr_x86__falls_through(&in);
			len = in.len;
		}
		if (off == text.size || (prev_end && !is_pad && !(off & 15))) {
			if (off > start) {
				struct kinstr_cfg *cfg = kinstr_cfg__new(text.data + start, off - start,
									 text.addr + start, &opts);

				if (!cfg) {
					failed++;
				} else {
					unsigned int v = check_cfg(cfg, &s);

					if (v && violations < 5)
						printf("     cfg at %#llx: %u violations\n",
						       (unsigned long long)(text.addr + start), v);
					violations += v;
					kinstr_cfg__free(cfg);
				}
			}
			start = off;
		}
		if (off == text.size)
			break;
		prev_end = ends;
		off += len;
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);

	printf("     %lu pseudo-functions (split at aligned code after padding), %lu instructions, "
	       "%lu blocks; return thunk %#llx; "
	       "%lu returns, %lu tail calls; %lu with indirect jmp, %lu with a branch into an "
	       "instruction, %lu with undecodable bytes; flags dead at %lu instructions; %.1f s\n",
	       s.funcs, s.insns, s.blocks, (unsigned long long)opts.return_thunk, s.returns,
	       s.tail_calls, s.ind_jmp_funcs, s.bad, s.invalid, s.flags_dead,
	       (t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9);
	CHECK(failed == 0, "%lu CFGs could not be built", failed);
	CHECK(violations == 0, "%lu invariant violations", violations);
	CHECK(s.insns == sweep_insns, "CFGs hold %lu instructions, the sweep %lu", s.insns,
	      sweep_insns);
	/* Debian 6.1: ~48k jmp __x86_return_thunk and 11 bare ret */
	CHECK(s.returns > 1000, "only %lu returns found", s.returns);
	munmap(elf, size);
}

int main(void)
{
	find_root();
	RUN(t_vmlinux_text_boundaries_match_objdump);
	RUN(t_vmlinux_text_cfgs_are_consistent);
	return check_done();
}
