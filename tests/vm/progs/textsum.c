// SPDX-License-Identifier: GPL-2.0
/* Print a checksum of the live text of the functions matching GLOB (module loaded). */
#include <stdio.h>
#include <stdint.h>

#include <kinstr/kernel.h>

int main(int argc, char **argv)
{
	struct kinstr_dev *dev = kinstr_dev__open(NULL);
	struct kinstr_kernel *k = dev ? kinstr_kernel__open_live(dev) : NULL;
	uint64_t h = 0xcbf29ce484222325ULL;
	size_t i, n = 0, bytes = 0;

	if (argc != 2 || !k) {
		fprintf(stderr, "usage: textsum GLOB (with /dev/kinstr)\n");
		return 1;
	}
	for (i = 0; i < kinstr_kernel__func_cnt(k); i++) {
		const struct kinstr_func *f = kinstr_kernel__func(k, i);
		const unsigned char *t;
		unsigned int j;

		if (!kinstr__glob_match(argv[1], f->name))
			continue;
		t = kinstr_kernel__text(k, f->addr, f->size);
		for (j = 0; t && j < f->size; j++)
			h = (h ^ t[j]) * 0x100000001b3ULL;	/* FNV-1a */
		n++;
		bytes += f->size;
	}
	printf("%zu functions, %zu bytes, text fnv1a %016llx\n", n, bytes, (unsigned long long)h);
	kinstr_kernel__close(k);
	kinstr_dev__close(dev);
	return n ? 0 : 1;
}
