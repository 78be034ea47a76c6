// SPDX-License-Identifier: GPL-2.0
/*
 * The functions libkinstr takes from the module's symbol records (KINSTR_IOC_SYMBOLS) are exactly
 * those it takes from /proc/kallsyms (KINSTR_KALLSYMS=proc): the same addresses, names, modules
 * and sizes, and the same reservations. Prints counts and the first differences; exit 1 on any.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <kinstr/kernel.h>
#include <kinstr/kinstr.h>

static struct kinstr_kernel *open_view(struct kinstr_dev *dev, const char *kallsyms)
{
	struct kinstr_kernel *k;

	if (kallsyms)
		setenv("KINSTR_KALLSYMS", kallsyms, 1);
	else
		unsetenv("KINSTR_KALLSYMS");
	k = kinstr_kernel__open_live(dev);
	if (!k)
		perror("kinstr_kernel__open_live");
	return k;
}

int main(void)
{
	struct kinstr_dev *dev = kinstr_dev__open(NULL);
	struct kinstr_kernel *a, *b;
	size_t i, na, nb, nmod = 0, bad = 0;
	size_t len, cnt;
	char *core;

	if (!dev) {
		perror("open /dev/kinstr");
		return 1;
	}
	core = kinstr_dev__symbols(dev, NULL, &len, &cnt);
	if (!core) {
		perror("KINSTR_IOC_SYMBOLS");
		return 1;
	}
	printf("core records %zu (%zu bytes)\n", cnt, len);
	free(core);
	{	/* bad requests: each refused with its errno */
		int fd = open("/dev/kinstr", O_RDWR);
		struct kinstr_symbols sy;
		const char *why[4] = { "flags", "unterminated name", "cap", "no such module" };
		int want[4] = { EINVAL, EINVAL, E2BIG, ENOENT };

		for (i = 0; i < 4; i++) {
			memset(&sy, 0, sizeof(sy));
			sy.size = sizeof(sy);
			if (i == 0)
				sy.flags = 1;
			if (i == 1)
				memset(sy.module, 'x', sizeof(sy.module));
			if (i == 2)
				sy.cap = KINSTR_SYMBOLS_MAX + 1;
			if (i == 3)
				strcpy(sy.module, "kinstr_no_such_module");
			errno = 0;
			if (fd < 0 || ioctl(fd, KINSTR_IOC_SYMBOLS, &sy) == 0 || errno != want[i]) {
				printf("bad request (%s): %s, expected %s\n", why[i], strerror(errno), strerror(want[i]));
				bad++;
			}
		}
		if (fd >= 0)
			close(fd);
		printf("bad requests refused: %s\n", bad ? "no" : "yes");
	}
	a = open_view(dev, NULL);
	b = open_view(dev, "proc");
	if (!a || !b)
		return 1;
	na = kinstr_kernel__func_cnt(a);
	nb = kinstr_kernel__func_cnt(b);
	for (i = 0; i < na && i < nb; i++) {
		const struct kinstr_func *x = kinstr_kernel__func(a, i), *y = kinstr_kernel__func(b, i);

		nmod += x->module != NULL;
		if (x->addr != y->addr || x->size != y->size || x->endbr != y->endbr || strcmp(x->name, y->name) ||
		    !x->module != !y->module || (x->module && strcmp(x->module, y->module))) {
			if (bad++ < 20)
				printf("differ at %zu: %s [%s] 0x%llx+%u, from /proc/kallsyms %s [%s] 0x%llx+%u\n", i,
				       x->name, x->module ? x->module : "", x->addr, x->size, y->name,
				       y->module ? y->module : "", y->addr, y->size);
		}
	}
	if (na != nb)
		bad++;
	if (kinstr_kernel__reserved_cnt(a) != kinstr_kernel__reserved_cnt(b))
		bad++;
	for (i = 0; i < kinstr_kernel__reserved_cnt(a) && i < kinstr_kernel__reserved_cnt(b); i++) {
		const struct kinstr_reserved *x = kinstr_kernel__reserved_at(a, i), *y = kinstr_kernel__reserved_at(b, i);

		if ((x->addr != y->addr || x->len != y->len || x->reason != y->reason) && bad++ < 20)
			printf("reservation %zu differs: 0x%llx+%u %s, from /proc/kallsyms 0x%llx+%u %s\n", i, x->addr,
			       x->len, kinstr_site_reason__id(x->reason), y->addr, y->len, kinstr_site_reason__id(y->reason));
	}
	printf("functions %zu (%zu in modules), from /proc/kallsyms %zu; reservations %zu, from /proc/kallsyms %zu\n",
	       na, nmod, nb, kinstr_kernel__reserved_cnt(a), kinstr_kernel__reserved_cnt(b));
	printf("differences %zu\n", bad);
	kinstr_kernel__close(a);
	kinstr_kernel__close(b);
	kinstr_dev__close(dev);
	return bad ? 1 : 0;
}
