// SPDX-License-Identifier: GPL-2.0
/*
 * Sessions: what one open /dev/kinstr holds (its areas of probes, its trace channel, its timers)
 * and the ioctls on it. Everything a file descriptor installed goes away when it closes; the
 * patching itself is patch/'s.
 */
#include <linux/mutex.h>
#include <linux/percpu.h>
#include <linux/security.h>
#include <linux/slab.h>
#include <linux/uaccess.h>
#include <linux/vmalloc.h>

#include <uapi/linux/kinstr.h>
#include "base.h"
#include "ksym.h"
#include "limits.h"
#include "check/check.h"
#include "actions/actions.h"
#include "session.h"
#include "abi.h"
#include "actions/hit.h"
#include "patch/patch.h"
#include "actions/pred.h"

struct kinstr_session {
	struct mutex lock;
	struct list_head areas;
	u32 next_id;
	struct kinstr_chan *chan;	/* KINSTR_IOC_TRACE_CREATE */
	struct kinstr_timers *timers;	/* KINSTR_IOC_TIMERS_CREATE */
	struct kinstr_scope_k *scope;	/* KINSTR_IOC_SCOPE: before the first ALLOC */
	struct kinstr_tally_k *tally;	/* KINSTR_IOC_TALLY_CREATE */
	struct kinstr_span_k *span;	/* KINSTR_IOC_SPAN_CREATE */
	u64 probes;			/* slots of its areas, against the limits */
};

static struct kinstr_area *find_area(struct kinstr_session *s, u32 id)
{
	struct kinstr_area *a;

	list_for_each_entry(a, &s->areas, node)
		if (a->id == id)
			return a;
	return NULL;
}

/* Off the session (and its share of the limits), then out of the text. */
static int session_remove(struct kinstr_session *s, struct kinstr_area *a)
{
	list_del(&a->node);
	kinstr_limit_release_fd(&s->probes, a->count);
	kinstr_area_remove(a);
	return 0;
}

static bool locked_down(void)
{
	return security_locked_down(LOCKDOWN_DBG_WRITE_KERNEL) ||
	       security_locked_down(LOCKDOWN_KPROBES);
}

/* The code cache's counter chunks' __percpu addresses, for user space to build copies with. */
static int put_chunks(struct kinstr_area *a, u64 uptr)
{
	u64 __user *u = u64_to_user_ptr(uptr);
	u32 i;

	for (i = 0; i < a->nchunks; i++)
		if (put_user((u64)(unsigned long)a->chunks[i], u + i))
			return -EFAULT;
	return 0;
}

static long ioctl_alloc(struct kinstr_session *s, void __user *uarg)
{
	struct kinstr_alloc al;
	struct kinstr_area *a;
	int err;

	err = kinstr_get_struct(&al, sizeof(al), uarg, KINSTR_ALLOC_SIZE_VER0);
	if (err)
		return err;
	if (!al.count || al.count > KINSTR_AREA_MAX_PROBES || al.__reserved || al.area || al.addr ||
	    al.__reserved2 || al.cache_addr || al.cache_size > KINSTR_CACHE_MAX_BYTES ||
	    al.cache_counters > KINSTR_CACHE_MAX_COUNTERS || (al.cache_counters && !al.cache_chunks))
		return -EINVAL;
	if (!kinstr_ksyms_can_patch())
		return -EOPNOTSUPP;
	if (locked_down())
		return -EPERM;
	err = kinstr_limit_charge(KINSTR_RES_PROBES, &s->probes, al.count);
	if (err)
		return err;
	a = kinstr_area_alloc(al.count, al.cache_size, al.cache_counters);
	if (!a) {
		kinstr_limit_release_fd(&s->probes, al.count);
		return -ENOMEM;
	}
	a->id = ++s->next_id;
	list_add_tail(&a->node, &s->areas);
	al.area = a->id;
	al.addr = (unsigned long)a->mem;
	al.cache_addr = (unsigned long)a->cache;
	err = put_chunks(a, al.cache_chunks);
	if (!err)
		err = kinstr_put_struct(uarg, &al, sizeof(al), KINSTR_ALLOC_SIZE_VER0);
	if (err) {
		session_remove(s, a);
		return err;
	}
	return 0;
}

/* The install's code cache image and map, copied in; cc's buffers are the caller's to free. */
static int get_cache(struct kinstr_area *a, u64 uptr, struct kinstr_cache_check *cc)
{
	struct kinstr_cache_image img;
	int err;

	err = kinstr_get_struct(&img, sizeof(img), u64_to_user_ptr(uptr), KINSTR_CACHE_IMAGE_SIZE_VER0);
	if (err)
		return err;
	if ((img.flags & ~KINSTR_CACHE_IMAGE_LAID) || img.__reserved || !img.len || img.len > a->cache_size || !img.nmap ||
	    img.nmap > img.len)
		return -EINVAL;
	cc->bytes = kvmalloc(img.len, GFP_KERNEL);
	cc->map = kvmalloc_array(img.nmap, sizeof(*cc->map), GFP_KERNEL);
	if (!cc->bytes || !cc->map)
		return -ENOMEM;
	if (copy_from_user((void *)cc->bytes, u64_to_user_ptr(img.bytes), img.len) ||
	    copy_from_user((void *)cc->map, u64_to_user_ptr(img.map), (size_t)img.nmap * sizeof(*cc->map)))
		return -EFAULT;
	cc->len = img.len;
	cc->nmap = img.nmap;
	cc->laid = img.flags & KINSTR_CACHE_IMAGE_LAID;
	cc->base = (unsigned long)a->cache;
	cc->ncounters = a->ncounters;
	cc->chunks = (const u64 *)a->chunks;
	return 0;
}

static long ioctl_install(struct kinstr_session *s, void __user *uarg)
{
	struct kinstr_install in;
	struct kinstr_cache_check cc = { 0 };
	struct kinstr_trace_spec *specs = NULL;
	struct kinstr_bpf_attach *bpf = NULL;
	struct kinstr_pred_k **preds = NULL, *pred_list = NULL;
	struct kinstr_probe *req;
	struct kinstr_area *a;
	long err;

	err = kinstr_get_struct(&in, sizeof(in), uarg, KINSTR_INSTALL_SIZE_VER0);
	if (err)
		return err;
	if ((in.flags & ~(KINSTR_INSTALL_F_WAIT | KINSTR_INSTALL_F_VERIFY_ONLY)) || in.refused_index || in.refusal || in.refusal_reasons || in.refusal_offset ||
	    in.refusal_addr)
		return -EINVAL;
	a = find_area(s, in.area);
	if (!a)
		return -ENOENT;
	if (a->state != AREA_NEW)
		return -EALREADY;
	if (in.count != a->count)
		return -EINVAL;
	if (locked_down()) {
		in.refusal = KINSTR_REFUSE_LOCKDOWN;
		err = -EPERM;
		goto out;
	}
	req = kvmalloc_array(in.count, sizeof(*req), GFP_KERNEL);
	if (!req)
		return -ENOMEM;
	if (in.specs) {
		specs = kvmalloc_array(in.count, sizeof(*specs), GFP_KERNEL);
		if (!specs) {
			kvfree(req);
			return -ENOMEM;
		}
	}
	if (in.bpf) {
		bpf = kvmalloc_array(in.count, sizeof(*bpf), GFP_KERNEL);
		if (!bpf) {
			kvfree(specs);
			kvfree(req);
			return -ENOMEM;
		}
	}
	if (copy_from_user(req, u64_to_user_ptr(in.probes), (size_t)in.count * sizeof(*req)) ||
	    (specs && copy_from_user(specs, u64_to_user_ptr(in.specs), (size_t)in.count * sizeof(*specs))) ||
	    (bpf && copy_from_user(bpf, u64_to_user_ptr(in.bpf), (size_t)in.count * sizeof(*bpf))))
		err = -EFAULT;
	else if (in.cache)
		err = get_cache(a, in.cache, &cc);
	if (!err && in.cache && s->timers) {	/* what the copies' timers may name */
		cc.ntimers = kinstr_timers_count(s->timers);
		cc.timers = s->timers;
		cc.timer_fn[0] = (unsigned long)kinstr_cache_timer_start;
		cc.timer_fn[1] = (unsigned long)kinstr_cache_timer_stop;
	}
	if (!err && specs) {
		preds = kvmalloc_array(in.count, sizeof(*preds), GFP_KERNEL);
		err = preds ? kinstr_preds_take(req, specs, in.count, in.preds, preds, &pred_list, &in.refused_index) :
			      -ENOMEM;
		if (err == -EINVAL)
			in.refusal = KINSTR_REFUSE_BAD_REQUEST;
		else
			in.refused_index = 0;
		if (!err) {
			/* a new area's probes are not live: an earlier refused install's copies can go */
			kinstr_preds_free(a->preds);
			a->preds = pred_list;
		}
	}
	if (!err)
		err = kinstr_area_install(a, req, &(struct kinstr_install_objs){ .specs = specs, .chan = s->chan,
					  .timers = s->timers, .scope = s->scope, .tally = s->tally, .span = s->span,
					  .bpf = bpf, .preds = preds },
					  in.cache ? &cc : NULL, &in);
	kvfree(preds);
	kvfree(bpf);
	kvfree(cc.bytes);
	kvfree(cc.map);
	kvfree(specs);
	kvfree(req);
	if (!err && (in.flags & KINSTR_INSTALL_F_WAIT) && !(in.flags & KINSTR_INSTALL_F_VERIFY_ONLY))
		kinstr_area_wait_live(a);
out:
	if (err && in.refusal) {
		long perr = kinstr_put_struct(uarg, &in, sizeof(in), KINSTR_INSTALL_SIZE_VER0);

		if (perr)
			return perr;
	}
	return err;
}

static long ioctl_remove(struct kinstr_session *s, void __user *uarg)
{
	struct kinstr_remove rm;
	struct kinstr_area *a;
	int err;

	err = kinstr_get_struct(&rm, sizeof(rm), uarg, KINSTR_REMOVE_SIZE_VER0);
	if (err)
		return err;
	a = find_area(s, rm.area);
	if (!a)
		return -ENOENT;
	return session_remove(s, a);
}

static long ioctl_counts(struct kinstr_session *s, void __user *uarg)
{
	struct kinstr_counts c;
	struct kinstr_area *a;
	u32 i;
	int cpu, err;

	err = kinstr_get_struct(&c, sizeof(c), uarg, KINSTR_COUNTS_SIZE_VER0);
	if (err)
		return err;
	a = find_area(s, c.area);
	if (!a)
		return -ENOENT;
	if (c.count > a->count || c.__reserved)
		return -EINVAL;
	for (i = 0; i < c.count; i++) {
		u64 sum = 0, missed = 0, filtered = 0;

		for_each_possible_cpu(cpu) {
			sum += per_cpu_ptr(a->probes[i].hits, cpu)[0];
			missed += per_cpu_ptr(a->probes[i].hits, cpu)[1];
			filtered += per_cpu_ptr(a->probes[i].hits, cpu)[2];
		}
		if (put_user(sum, (u64 __user *)u64_to_user_ptr(c.counts) + i))
			return -EFAULT;
		if (c.missed && put_user(missed, (u64 __user *)u64_to_user_ptr(c.missed) + i))
			return -EFAULT;
		if (c.filtered && put_user(filtered, (u64 __user *)u64_to_user_ptr(c.filtered) + i))
			return -EFAULT;
		if (c.flags && put_user(kinstr_probe_flags(&a->probes[i]),
					(u32 __user *)u64_to_user_ptr(c.flags) + i))
			return -EFAULT;
	}
	return 0;
}

static long ioctl_cache_counts(struct kinstr_session *s, void __user *uarg)
{
	struct kinstr_cache_counts cc;
	struct kinstr_area *a;
	u64 *out;
	long err;

	err = kinstr_get_struct(&cc, sizeof(cc), uarg, KINSTR_CACHE_COUNTS_SIZE_VER0);
	if (err)
		return err;
	a = find_area(s, cc.area);
	if (!a)
		return -ENOENT;
	if (!cc.count || cc.first >= a->ncounters || cc.count > a->ncounters - cc.first)
		return -EINVAL;
	out = kvmalloc_array(cc.count, sizeof(*out), GFP_KERNEL);
	if (!out)
		return -ENOMEM;
	kinstr_area_cache_counts(a, cc.first, cc.count, out);
	err = copy_to_user(u64_to_user_ptr(cc.counts), out, (size_t)cc.count * sizeof(*out)) ? -EFAULT : 0;
	kvfree(out);
	return err;
}

static long ioctl_disarm(struct kinstr_session *s, void __user *uarg)
{
	struct kinstr_disarm d;
	struct kinstr_area *a;
	u32 *idx;
	long err;

	err = kinstr_get_struct(&d, sizeof(d), uarg, KINSTR_DISARM_SIZE_VER0);
	if (err)
		return err;
	if (d.disarmed || !d.count || d.count > KINSTR_DISARM_MAX)
		return -EINVAL;
	a = find_area(s, d.area);
	if (!a)
		return -ENOENT;
	idx = kvmalloc_array(d.count, sizeof(*idx), GFP_KERNEL);
	if (!idx)
		return -ENOMEM;
	if (copy_from_user(idx, u64_to_user_ptr(d.indices), (size_t)d.count * sizeof(*idx)))
		err = -EFAULT;
	else
		err = kinstr_area_disarm(a, idx, d.count, &d.disarmed);
	kvfree(idx);
	if (!err)
		err = kinstr_put_struct(uarg, &d, sizeof(d), KINSTR_DISARM_SIZE_VER0);
	return err;
}

static long ioctl_sync(void __user *uarg)
{
	struct kinstr_sync sy;
	int err;

	err = kinstr_get_struct(&sy, sizeof(sy), uarg, KINSTR_SYNC_SIZE_VER0);
	if (err)
		return err;
	if (sy.flags)
		return -EINVAL;
	kinstr_patch_drain();	/* frees the areas: their scopes' last references go */
	kinstr_scope_drain();
	return 0;
}

long kinstr_session_ioctl(struct kinstr_session *s, unsigned int cmd, void __user *uarg)
{
	long err;

	mutex_lock(&s->lock);
	switch (cmd) {
	case KINSTR_IOC_ALLOC:
		err = ioctl_alloc(s, uarg);
		break;
	case KINSTR_IOC_INSTALL:
		err = ioctl_install(s, uarg);
		break;
	case KINSTR_IOC_REMOVE:
		err = ioctl_remove(s, uarg);
		break;
	case KINSTR_IOC_COUNTS:
		err = ioctl_counts(s, uarg);
		break;
	case KINSTR_IOC_SYNC:
		err = ioctl_sync(uarg);
		break;
	case KINSTR_IOC_CACHE_COUNTS:
		err = ioctl_cache_counts(s, uarg);
		break;
	case KINSTR_IOC_DISARM:
		err = ioctl_disarm(s, uarg);
		break;
	case KINSTR_IOC_TRACE_CREATE:
		err = kinstr_trace_create(&s->chan, uarg);
		break;
	case KINSTR_IOC_TRACE_GET:
	case KINSTR_IOC_TRACE_PUT:
		err = kinstr_trace_subbuf(s->chan, cmd, uarg);
		break;
	case KINSTR_IOC_TRACE_FLUSH:
		err = kinstr_trace_flush(s->chan, uarg);
		break;
	case KINSTR_IOC_TRACE_STATS:
		err = kinstr_trace_stats(s->chan, uarg);
		break;
	case KINSTR_IOC_TIMERS_CREATE:
		err = kinstr_timers_create(&s->timers, uarg);
		break;
	case KINSTR_IOC_TIMERS_READ:
		err = kinstr_timers_read(s->timers, uarg);
		break;
	case KINSTR_IOC_TIMER_PATHS:
		err = kinstr_timer_paths(s->timers, uarg);
		break;
	case KINSTR_IOC_TIMER_BY:
		err = kinstr_timer_by_read(s->timers, uarg);
		break;
	case KINSTR_IOC_TALLY_CREATE:
		err = kinstr_tally_create(&s->tally, uarg);
		break;
	case KINSTR_IOC_TALLY_READ:
		err = kinstr_tally_read(s->tally, uarg);
		break;
	case KINSTR_IOC_SPAN_CREATE:
		err = kinstr_span_create(&s->span, uarg);
		break;
	case KINSTR_IOC_SPAN_READ:
		err = kinstr_span_read(s->span, uarg);
		break;
	case KINSTR_IOC_SCOPE:
		/* the slots test the gate from their install on: no area may be older */
		err = s->next_id ? -EBUSY : kinstr_scope_create(&s->scope, uarg);
		break;
	default:
		err = -ENOTTY;
	}
	mutex_unlock(&s->lock);
	return err;
}

struct kinstr_session *kinstr_session_new(void)
{
	struct kinstr_session *s = kzalloc(sizeof(*s), GFP_KERNEL);

	if (!s)
		return NULL;
	mutex_init(&s->lock);
	INIT_LIST_HEAD(&s->areas);
	return s;
}

/* The file is closing (exit, kill -9, close): every probe it made goes. */
void kinstr_session_free(struct kinstr_session *s)
{
	struct kinstr_area *a, *tmp;

	mutex_lock(&s->lock);
	list_for_each_entry_safe(a, tmp, &s->areas, node)
		session_remove(s, a);
	mutex_unlock(&s->lock);
	/* the areas' references keep the buffers until the worker frees them after quiescence */
	kinstr_chan_put(s->chan);
	kinstr_timers_put(s->timers);
	kinstr_scope_put(s->scope);
	kinstr_tally_put(s->tally);
	kinstr_span_put(s->span);
	kfree(s);
}

/*
 * Called with mmap_lock held: no session lock here, since every ioctl holds s->lock while it
 * copies from or to user memory, which may fault and take mmap_lock (lockdep on the debug
 * kernel: s->lock vs mmap_lock, kinstr_trace_create's copy against this). The channel, once
 * published, stays until the session's release, which a mapping's file reference keeps off;
 * the acquire pairs with the release in kinstr_trace_create, as poll's does.
 */
int kinstr_session_mmap(struct kinstr_session *s, struct vm_area_struct *vma)
{
	return kinstr_trace_mmap(smp_load_acquire(&s->chan), vma);
}

__poll_t kinstr_session_poll(struct kinstr_session *s, struct file *file, struct poll_table_struct *pt)
{
	/* poll does not take the session lock: pairs with the release in kinstr_trace_create */
	return kinstr_trace_poll(smp_load_acquire(&s->chan), file, pt);
}

/* What probe context enters here, for the hit path's closure (hitpath.c). */
size_t kinstr_probes_hit_roots(unsigned long *r)
{
	size_t n = 0;

	r[n++] = (unsigned long)kinstr_trace_stub;
	r[n++] = (unsigned long)kinstr_bpf_stub;
	r[n++] = (unsigned long)kinstr_tally_stub;
	r[n++] = (unsigned long)kinstr_span_stub;
	n += kinstr_hit_roots(r + n);
	n += kinstr_scope_hit_roots(r + n);
	n += kinstr_tally_hit_roots(r + n);
	n += kinstr_span_hit_roots(r + n);
	return n + kinstr_patch_hit_roots(r + n);
}

int kinstr_probes_init(void)
{
	return kinstr_patch_init();
}

void kinstr_probes_exit(void)
{
	kinstr_patch_exit();
}
