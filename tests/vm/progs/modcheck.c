// SPDX-License-Identifier: GPL-2.0
/*
 * modcheck FUNC...: for every reservation user space found inside each function (module text
 * included), print the rules libkinstr and the module (KINSTR_IOC_CHECK) each name, as
 * "FUNC+0xOFF len N user=RULES module=RULES"; exit 1 on a disagreement or when none was found.
 */
#include <stdio.h>
#include <string.h>

#include <kinstr/kernel.h>

static void ids(char *out, size_t n, unsigned int mask)
{
	unsigned int b;
	size_t len = 0;

	*out = 0;
	for (b = 0; b < KINSTR_R_NR; b++)
		if (mask & (1u << b))
			len += snprintf(out + len, len < n ? n - len : 0, "%s%s", len ? "," : "",
					kinstr_site_reason__id(b));
	if (!len)
		snprintf(out, n, "none");
}

int main(int argc, char **argv)
{
	struct kinstr_dev *dev = kinstr_dev__open(NULL);
	struct kinstr_kernel *k = dev ? kinstr_kernel__open_live(dev) : NULL;
	size_t i, found = 0, bad = 0;
	int a;

	if (argc < 2 || !k) {
		fprintf(stderr, "usage: modcheck FUNC... (with /dev/kinstr)\n");
		return 1;
	}
	for (a = 1; a < argc; a++) {
		const struct kinstr_func *f = kinstr_kernel__find_func(k, argv[a]);

		for (i = 0; f && i < kinstr_kernel__reserved_cnt(k); i++) {
			const struct kinstr_reserved *e = kinstr_kernel__reserved_at(k, i);
			struct kinstr_check_range r = { .addr = e->addr, .len = e->len > 16 ? 1 : e->len };
			unsigned int mine, want = 1u << e->reason;
			char u[128], m[128];

			if (e->addr < f->addr || e->addr >= f->addr + f->size)
				continue;
			if (kinstr_dev__check(dev, &r, 1))
				return 1;
			mine = kinstr_kernel__reserved(k, r.addr, r.len);
			ids(u, sizeof(u), mine);
			ids(m, sizeof(m), r.reasons);
			printf("%s+0x%llx len %u user=%s module=%s\n", f->name, e->addr - f->addr, r.len, u, m);
			found++;
			bad += !(r.reasons & want);
		}
	}
	kinstr_kernel__close(k);
	kinstr_dev__close(dev);
	printf("%zu reservations, %zu the module does not see\n", found, bad);
	return found && !bad ? 0 : 1;
}
