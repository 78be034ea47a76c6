/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Portability shim for the ring buffer (ring/ring.h, ring/ring.c): one source, built in the kernel module
 * and in host tests.
 *
 *   kr_local_t   a counter touched only by writers of one buffer, i.e. by one CPU and whatever interrupts it
 *                (task, softirq, irq, NMI). Kernel: local_t (no lock prefix needed, interrupt-safe). Host: the
 *                test treats a thread plus its signal handlers as a "CPU"; other threads read some of these
 *                counters (kr_lost), so host ops are __atomic builtins, which TSan understands. Every
 *                read-modify-write is a compiler barrier in both builds (kernel local ops are asm volatile
 *                with a "memory" clobber; host ones are seq_cst), so plain stores before it are not moved
 *                after it where an interrupt/signal handler on the same CPU could observe the difference.
 *   kr_shared_t  a word the writer CPU and the reader (any CPU) both update: atomic_long_t / seq_cst __atomic.
 *                kr_shared_cmpxchg is fully ordered (atomic_long_cmpxchg), kr_shared_set_release orders the
 *                stores before it, kr_shared_read is a plain (relaxed) read.
 */
#ifndef KINSTR_RING_PORT_H
#define KINSTR_RING_PORT_H

#ifdef __KERNEL__

#include <linux/types.h>
#include <linux/compiler.h>
#include <linux/errno.h>
#include <linux/atomic.h>
#include <linux/cache.h>
#include <asm/local.h>

typedef local_t kr_local_t;
#define kr_local_read(l)		local_read(l)
#define kr_local_set(l, v)		local_set(l, v)
#define kr_local_inc(l)			local_inc(l)
#define kr_local_dec(l)			local_dec(l)
#define kr_local_add(l, v)		local_add(v, l)
#define kr_local_inc_return(l)		local_inc_return(l)
#define kr_local_add_return(l, v)	((unsigned long)local_add_return(v, l))
/* Returns the value found; the swap happened iff it equals old. */
#define kr_local_cmpxchg(l, o, n)	((unsigned long)local_cmpxchg(l, o, n))

typedef atomic_long_t kr_shared_t;
#define kr_shared_read(s)		((unsigned long)atomic_long_read(s))
#define kr_shared_set(s, v)		atomic_long_set(s, v)
#define kr_shared_set_release(s, v)	atomic_long_set_release(s, v)
#define kr_shared_cmpxchg(s, o, n)	((unsigned long)atomic_long_cmpxchg(s, o, n))

#define KR_CACHELINE			____cacheline_aligned

#else /* host */

#include <stddef.h>
#include <stdint.h>
#include <errno.h>
#include <linux/types.h>

#ifndef likely
#define likely(x)	__builtin_expect(!!(x), 1)
#define unlikely(x)	__builtin_expect(!!(x), 0)
#endif

typedef struct { long v; } kr_local_t;

static inline long kr_local_read(const kr_local_t *l) { return __atomic_load_n(&l->v, __ATOMIC_RELAXED); }
static inline void kr_local_set(kr_local_t *l, long v) { __atomic_store_n(&l->v, v, __ATOMIC_RELAXED); }
static inline void kr_local_inc(kr_local_t *l) { __atomic_add_fetch(&l->v, 1, __ATOMIC_SEQ_CST); }
static inline void kr_local_dec(kr_local_t *l) { __atomic_sub_fetch(&l->v, 1, __ATOMIC_SEQ_CST); }
static inline void kr_local_add(kr_local_t *l, long v) { __atomic_add_fetch(&l->v, v, __ATOMIC_SEQ_CST); }
static inline long kr_local_inc_return(kr_local_t *l) { return __atomic_add_fetch(&l->v, 1, __ATOMIC_SEQ_CST); }
static inline unsigned long kr_local_add_return(kr_local_t *l, long v)
{
	return (unsigned long)__atomic_add_fetch(&l->v, v, __ATOMIC_SEQ_CST);
}
static inline unsigned long kr_local_cmpxchg(kr_local_t *l, long o, long n)
{
	__atomic_compare_exchange_n(&l->v, &o, n, 0, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
	return (unsigned long)o;	/* on failure o holds the value found */
}

typedef struct { long v; } kr_shared_t;

static inline unsigned long kr_shared_read(const kr_shared_t *s)
{
	return (unsigned long)__atomic_load_n(&s->v, __ATOMIC_RELAXED);
}
static inline void kr_shared_set(kr_shared_t *s, unsigned long v) { __atomic_store_n(&s->v, (long)v, __ATOMIC_RELAXED); }
static inline void kr_shared_set_release(kr_shared_t *s, unsigned long v)
{
	__atomic_store_n(&s->v, (long)v, __ATOMIC_RELEASE);
}
static inline unsigned long kr_shared_cmpxchg(kr_shared_t *s, unsigned long o, unsigned long n)
{
	long exp = (long)o;

	__atomic_compare_exchange_n(&s->v, &exp, (long)n, 0, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
	return (unsigned long)exp;
}

#define KR_CACHELINE	__attribute__((aligned(64)))

#endif /* __KERNEL__ */

/* The commit-count encoding (ring.h) packs a record count above bit 40 of an unsigned long. */
_Static_assert(sizeof(long) == 8, "the ring needs 64-bit longs (x86-64)");

#endif
