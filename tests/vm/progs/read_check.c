// SPDX-License-Identifier: GPL-2.0
/* KINSTR_IOC_READ's refusals, from user space in the guest (module loaded). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <kinstr/kinstr.h>

static int failed;

static void expect(int cond, const char *what)
{
	printf("%s %s\n", cond ? "ok" : "not ok", what);
	failed |= !cond;
}

static unsigned long long ksym(const char *name)
{
	unsigned long long a = 0, v;
	char t, n[256];
	FILE *f = fopen("/proc/kallsyms", "r");

	while (f && fscanf(f, "%llx %c %255s%*[^\n]", &v, &t, n) == 3)
		if (!strcmp(n, name)) {
			a = v;
			break;
		}
	if (f)
		fclose(f);
	return a;
}

int main(void)
{
	struct kinstr_dev *dev = kinstr_dev__open(NULL);
	unsigned long long jiffies = ksym("jiffies"), stext = ksym("_stext"), etext = ksym("_etext");
	struct kinstr_layout l;
	unsigned char buf[64], *all;

	if (!dev || !jiffies || !stext || !etext) {
		fprintf(stderr, "setup: dev %p jiffies %llx stext %llx\n", (void *)dev, jiffies, stext);
		return 1;
	}
	expect(kinstr_dev__read(dev, jiffies, buf, 8) == -ERANGE, "read of jiffies (data): ERANGE");
	expect(kinstr_dev__read(dev, stext, buf, 0) == -ERANGE, "zero-length read: ERANGE");
	expect(kinstr_dev__read(dev, etext - 4, buf, 8) == -ERANGE, "read across _etext: ERANGE");
	expect(kinstr_dev__read(dev, stext, buf, KINSTR_READ_MAX + 1) == -E2BIG, "oversized read: E2BIG");
	expect(kinstr_dev__read(dev, stext, (void *)8, 16) == -EFAULT, "bad user buffer: EFAULT");
	expect(kinstr_dev__read(dev, 0, buf, 8) == -ERANGE, "read of address 0: ERANGE");
	expect(kinstr_dev__read(dev, -16ULL, buf, 32) == -ERANGE, "wrapping range: ERANGE");
	expect(kinstr_dev__read(dev, stext, buf, 16) == 0, "read of _stext");
	all = malloc(etext - stext);
	expect(all && kinstr_dev__read(dev, stext, all, etext - stext) == 0,
	       "read of the whole text in one call");
	expect(kinstr_dev__layout(dev, &l) == 0 && l.text.start == stext && l.text.end == etext,
	       "layout names _stext.._etext");
	expect(l.ex_table.entry_size && kinstr_dev__read(dev, l.ex_table.addr, buf, 12) == 0,
	       "the exception table is readable");
	free(all);
	kinstr_dev__close(dev);
	return failed;
}
