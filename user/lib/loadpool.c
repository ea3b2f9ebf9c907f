/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "btf.h"
#include "loadpool.h"
#include "log.h"
#include "run.h"
#include "util.h"

#define POOL_MAX_WORKERS 4
#define POOL_LOG_SIZE (4u << 20) /* bytes of verifier log for a refused program (-v) */

/* One program a worker loads: what libbpf would have passed to bpf_prog_load(). */
struct job {
	struct bpf_program *prog;
	enum bpf_prog_type type;
	struct bpf_insn *insns; /* a copy: libbpf's become the stand-in's */
	size_t n;
	size_t seq; /* its place in libbpf's order of loading */
	struct bpf_prog_load_opts opts;
	int fd; /* the loaded program, or a negative errno */
	__u64 ns; /* the load's wall time (the verifier's, mostly) */
};

static struct {
	pthread_mutex_t lock;
	struct job **jobs; /* longest first once il_load_join() starts */
	size_t njobs, cap, next; /* next: the first job no thread has taken */
	int want;     /* threads to verify on, this one included; 0 until pool_on(), -1 off */
	int nworkers; /* threads started, to join */
	int running;  /* of them, those still taking jobs (under lock) */
	pthread_t workers[POOL_MAX_WORKERS];
} pool = { .lock = PTHREAD_MUTEX_INITIALIZER };

static bool pool_on(void)
{
	long cpus;

	if (pool.want)
		return pool.want > 0;
	pool.want = -1;
	if (il_verbose >= 2) /* libbpf's load, which logs what it does */
		return false;
	cpus = getenv("IOLAYER_SERIAL_LOAD") ? 1 : sysconf(_SC_NPROCESSORS_ONLN);
	if (cpus < 2 && !getenv("IOLAYER_LOAD_STATS"))
		return false;
	if (cpus < 1)
		cpus = 1;
	pool.want = cpus < POOL_MAX_WORKERS ? cpus : POOL_MAX_WORKERS;
	return true;
}

/* Every iolayer object is GPL (SEC("license")): libbpf passes the object's string, which
 * libbpf 1.1 has no getter for. */
static int load(struct job *j)
{
	__u64 t0 = il_now_ns();
	int fd = bpf_prog_load(j->type, bpf_program__name(j->prog), "GPL", j->insns, j->n, &j->opts);

	j->ns = il_now_ns() - t0;
	return fd < 0 ? -errno : fd;
}

/* IOLAYER_LOAD_STATS set (its value stats): program j's load time and the instructions the
 * verifier walked (bpf_prog_info.verified_insns, 5.16+; 0 before), one line on stderr, for
 * the bench and whoever cuts the start-up; its whole verifier log too when stats is its name. */
static void load_stats(const struct job *j, const char *stats)
{
	struct bpf_prog_info info = {};
	__u32 len = sizeof(info);

	if (j->fd < 0 || bpf_obj_get_info_by_fd(j->fd, &info, &len))
		info.verified_insns = 0;
	fprintf(stderr, "load: %-28s %8.2f ms %8u insns verified\n", bpf_program__name(j->prog),
		j->ns / 1e6, info.verified_insns);
	if (!strcmp(stats, bpf_program__name(j->prog))) {
		/* IOLAYER_LOAD_STATS=PROGRAM: its verifier log, every instruction walked */
		struct job again = *j;
		size_t size = 256u << 20;
		char *log = malloc(size);
		int fd;

		if (!log)
			return;
		log[0] = '\0';
		again.opts.log_buf = log;
		again.opts.log_size = size;
		again.opts.log_level = 2 | 4; /* every instruction walked, and the totals */
		fd = load(&again);
		if (fd >= 0)
			close(fd);
		fputs(log, stderr);
		free(log);
	}
}

/* Longer programs first (their instructions: the verifier's time grows with them), so that
 * the few long ones start early and end on different threads. */
static int longer_first(const void *a, const void *b)
{
	size_t na = (*(struct job *const *)a)->n, nb = (*(struct job *const *)b)->n;

	return na < nb ? 1 : na > nb ? -1 : 0;
}

/* libbpf's order, which names the first program refused as libbpf would. */
static int queued_first(const void *a, const void *b)
{
	size_t sa = (*(struct job *const *)a)->seq, sb = (*(struct job *const *)b)->seq;

	return sa < sb ? -1 : sa > sb;
}

/* Load the queued programs in their order until none is left; a started thread (arg not
 * NULL) then counts itself out of pool.running. */
static void *worker(void *arg)
{
	struct job *j;

	for (;;) {
		pthread_mutex_lock(&pool.lock);
		j = pool.next < pool.njobs ? pool.jobs[pool.next++] : NULL;
		if (!j && arg)
			pool.running--;
		pthread_mutex_unlock(&pool.lock);
		if (!j)
			return NULL;
		j->fd = load(j);
	}
}

/* Start threads that load beside this one until upto are running (pool.lock held), fewer
 * where fewer programs wait. They block every signal, which the tool's handlers then get in
 * its main thread, as without them. */
static void workers_up(int upto)
{
	sigset_t all, old;
	pthread_attr_t attr;

	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, 64 << 10); /* bpf(2) and a log buffer's pointer */
	while (pool.running < upto && pool.nworkers < POOL_MAX_WORKERS &&
	       (size_t)pool.running < pool.njobs - pool.next &&
	       !pthread_create(&pool.workers[pool.nworkers], &attr, worker, &pool)) {
		pool.nworkers++;
		pool.running++;
	}
	pthread_attr_destroy(&attr);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
}

int il_load_defer(struct bpf_program *prog, enum bpf_prog_type type, struct bpf_prog_load_opts *opts)
{
	struct bpf_insn stand_in[] = {
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .imm = 0 },
		{ .code = BPF_JMP | BPF_EXIT },
	};
	size_t n = bpf_program__insn_cnt(prog), cap;
	struct job *j, **grown;
	int err;

	if (!pool_on())
		return 0;
	/* room first: without it libbpf loads the program itself (under the lock: a thread may
	 * be taking a job from the array) */
	if (pool.njobs == pool.cap) {
		cap = pool.cap ? pool.cap * 2 : 32;
		pthread_mutex_lock(&pool.lock);
		grown = realloc(pool.jobs, cap * sizeof(*grown));
		if (grown) {
			pool.jobs = grown;
			pool.cap = cap;
		}
		pthread_mutex_unlock(&pool.lock);
		if (!grown)
			return 0;
	}
	j = calloc(1, sizeof(*j));
	if (!j || !(j->insns = malloc(n * sizeof(*j->insns)))) {
		free(j);
		return 0;
	}
	memcpy(j->insns, bpf_program__insns(prog), n * sizeof(*j->insns));
	j->n = n;
	j->seq = pool.njobs;
	j->prog = prog;
	j->type = type;
	j->opts = *opts;
	j->opts.log_buf = NULL;
	j->opts.log_size = 0;
	j->opts.log_level = 0;
	j->fd = -EINPROGRESS;
	/* the stand-in: of the program's type, but a tracing program's is a raw tracepoint
	 * program, which the kernel loads without looking up an attach target (a search of
	 * vmlinux BTF by name); one function and no source lines */
	if ((err = bpf_program__set_type(prog, type == BPF_PROG_TYPE_TRACING ?
							BPF_PROG_TYPE_RAW_TRACEPOINT : type)) ||
	    (err = bpf_program__set_insns(prog, stand_in, 2))) {
		free(j->insns);
		free(j);
		return err;
	}
	opts->expected_attach_type = 0;
	opts->attach_btf_id = 0;
	opts->attach_btf_obj_fd = 0;
	opts->attach_prog_fd = 0;
	opts->func_info = NULL;
	opts->func_info_cnt = 0;
	opts->line_info = NULL;
	opts->line_info_cnt = 0;
	/* One thread verifies from the first program queued on, while libbpf loads the others'
	 * stand-ins (~3 ms for iolayer's 34); it ends when it finds none queued, and
	 * il_load_join() starts the rest once all are. Not one thread per program: a thread
	 * woken per program waited up to a scheduler period each on a busy machine. */
	pthread_mutex_lock(&pool.lock);
	pool.jobs[pool.njobs++] = j;
	if (pool.njobs == 1 && pool.want > 1)
		workers_up(1);
	pthread_mutex_unlock(&pool.lock);
	return 0;
}

/* Name a program the kernel refused, as libbpf does: from -v with the verifier's log, which
 * a second load with a log buffer gets. */
static void report(struct job *j)
{
	char *log = il_verbose >= 1 ? malloc(POOL_LOG_SIZE) : NULL;
	int fd;

	il_info("prog '%s': BPF program load failed: %s", bpf_program__name(j->prog),
		il_errno_name(j->fd));
	if (!log)
		return;
	log[0] = '\0';
	j->opts.log_buf = log;
	j->opts.log_size = POOL_LOG_SIZE;
	j->opts.log_level = 1;
	fd = load(j);
	if (fd >= 0)
		close(fd);
	if (log[0])
		il_info("prog '%s': -- BEGIN PROG LOAD LOG --\n%s-- END PROG LOAD LOG --",
			bpf_program__name(j->prog), log);
	free(log);
}

int il_load_join(int loaded)
{
	unsigned long long t0 = il_now_ns(), sum = 0;
	const char *stats = getenv("IOLAYER_LOAD_STATS");
	int first = 0, at, i;
	size_t k;

	pthread_mutex_lock(&pool.lock);
	/* libbpf's load failed: what is queued need not be verified */
	if (loaded)
		pool.next = pool.njobs;
	/* what no thread has taken, longer first */
	if (pool.njobs > pool.next)
		qsort(pool.jobs + pool.next, pool.njobs - pool.next, sizeof(*pool.jobs), longer_first);
	workers_up(pool.want - 1);
	pthread_mutex_unlock(&pool.lock);
	worker(NULL);
	for (i = 0; i < pool.nworkers; i++)
		pthread_join(pool.workers[i], NULL);
	if (pool.njobs)
		qsort(pool.jobs, pool.njobs, sizeof(*pool.jobs), queued_first);
	for (k = 0; stats && k < pool.njobs; k++)
		sum += pool.jobs[k]->ns;
	if (stats && pool.njobs)
		fprintf(stderr, "load: %zu programs on %d threads: %.2f ms after libbpf's, %.2f ms of "
			"loads\n", pool.njobs, pool.want, (il_now_ns() - t0) / 1e6, sum / 1e6);
	for (k = 0; k < pool.njobs; k++) {
		struct job *j = pool.jobs[k];

		if (stats)
			load_stats(j, stats);
		if (j->fd >= 0) {
			at = bpf_program__fd(j->prog);
			if (!loaded && !first && (at < 0 || dup3(j->fd, at, O_CLOEXEC) < 0))
				first = at < 0 ? at : -errno;
			close(j->fd);
		} else if (!loaded && !first) {
			first = j->fd;
			report(j);
		}
		free(j->insns);
		free(j);
	}
	free(pool.jobs);
	pool.jobs = NULL;
	pool.njobs = pool.cap = pool.next = 0;
	pool.nworkers = pool.running = 0;
	return first;
}

/* ---- maps made ahead, on every CPU -------------------------------------------------- */

#define MAPS_AHEAD_MIN (64u << 10) /* bytes a map preallocates at least to be made ahead */

/* One map made ahead of libbpf's load: its attributes as libbpf would pass them. */
struct mjob {
	struct bpf_map *map;
	size_t bytes; /* what its creation allocates, roughly */
	int fd;       /* made, or a negative errno */
};

static struct {
	pthread_mutex_t lock;
	struct mjob *jobs; /* largest first */
	size_t n, next;
} mpool = { .lock = PTHREAD_MUTEX_INITIALIZER };

/* Roughly the bytes map's creation allocates and fills (0: little, or nothing before use):
 * a preallocated hash's or array's entries, a stack map's buckets, a ring buffer. A hash's
 * entry carries its struct htab_elem (kernel/bpf/hashtab.c: list node, hash, LRU node; ~48
 * bytes) besides key and value, and each is linked into a free list at creation: a 4096-entry
 * LRU of 40-byte pairs took 0.4 ms to make here. */
static size_t map_bytes(const struct bpf_map *map)
{
	size_t n = bpf_map__max_entries(map), kv = bpf_map__key_size(map) + bpf_map__value_size(map);

	switch (bpf_map__type(map)) {
	case BPF_MAP_TYPE_HASH:
	case BPF_MAP_TYPE_PERCPU_HASH:
		if (bpf_map__map_flags(map) & BPF_F_NO_PREALLOC)
			return n * 16; /* its buckets, each a list head and a lock */
		/* fall through */
	case BPF_MAP_TYPE_LRU_HASH:
	case BPF_MAP_TYPE_LRU_PERCPU_HASH:
		return n * (kv + 48);
	case BPF_MAP_TYPE_ARRAY:
	case BPF_MAP_TYPE_PERCPU_ARRAY:
	case BPF_MAP_TYPE_STACK_TRACE:
		return n * kv;
	case BPF_MAP_TYPE_RINGBUF:
		return n;
	default:
		return 0;
	}
}

static int bigger_first(const void *a, const void *b)
{
	size_t x = ((const struct mjob *)a)->bytes, y = ((const struct mjob *)b)->bytes;

	return x < y ? 1 : x > y ? -1 : 0;
}

static void *map_worker(void *arg)
{
	struct mjob *j;

	(void)arg;
	for (;;) {
		pthread_mutex_lock(&mpool.lock);
		j = mpool.next < mpool.n ? &mpool.jobs[mpool.next++] : NULL;
		pthread_mutex_unlock(&mpool.lock);
		if (!j)
			return NULL;
		LIBBPF_OPTS(bpf_map_create_opts, o, .map_flags = bpf_map__map_flags(j->map),
			    .numa_node = bpf_map__numa_node(j->map),
			    .map_extra = bpf_map__map_extra(j->map));
		j->fd = bpf_map_create(bpf_map__type(j->map), bpf_map__name(j->map),
				       bpf_map__key_size(j->map), bpf_map__value_size(j->map),
				       bpf_map__max_entries(j->map), &o);
		if (j->fd < 0)
			j->fd = -errno;
	}
}

int il_maps_ahead(struct bpf_object *obj)
{
	pthread_t workers[POOL_MAX_WORKERS];
	struct bpf_map *map;
	sigset_t all, old;
	int nw = 0;

	il_btf_ids_fill(obj);
	if (!pool_on())
		return 0;
	bpf_object__for_each_map(map, obj) {
		/* not one libbpf already has, nor one whose name the kernel cuts: libbpf takes
		 * a reused map's name from the kernel, and later look-ups by name would miss */
		size_t bytes = bpf_map__is_internal(map) || bpf_map__fd(map) >= 0 ? 0 : map_bytes(map);
		struct mjob *grown;

		if (bytes >= MAPS_AHEAD_MIN && strlen(bpf_map__name(map)) >= BPF_OBJ_NAME_LEN) {
			/* for whoever names the next map (fs_uring_flight was one, ~4 ms) */
			il_debug("map %s: a name longer than the kernel keeps (%d): made by libbpf, "
				 "not ahead", bpf_map__name(map), BPF_OBJ_NAME_LEN - 1);
			continue;
		}
		if (bytes < MAPS_AHEAD_MIN)
			continue;
		if (!(grown = realloc(mpool.jobs, (mpool.n + 1) * sizeof(*grown))))
			break; /* libbpf makes the rest */
		mpool.jobs = grown;
		mpool.jobs[mpool.n++] = (struct mjob){ .map = map, .bytes = bytes, .fd = -1 };
	}
	if (mpool.n > 1)
		qsort(mpool.jobs, mpool.n, sizeof(*mpool.jobs), bigger_first);
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	while (nw < pool.want - 1 && (size_t)nw + 1 < mpool.n &&
	       !pthread_create(&workers[nw], NULL, map_worker, NULL))
		nw++;
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	map_worker(NULL);
	while (nw > 0)
		pthread_join(workers[--nw], NULL);
	for (size_t i = 0; i < mpool.n; i++) {
		struct mjob *j = &mpool.jobs[i];

		/* one refused here is made by libbpf, which says why if it is refused again */
		if (j->fd >= 0) {
			if (bpf_map__reuse_fd(j->map, j->fd))
				il_debug("map %s: made ahead, not taken: libbpf makes it",
					 bpf_map__name(j->map));
			close(j->fd);
		}
	}
	free(mpool.jobs);
	mpool.jobs = NULL;
	mpool.n = mpool.next = 0;
	return 0;
}

/* libbpf's prog_prepare_load_fn for SEC("tp_btf/NAME"): made a tracing program (btf.c),
 * then deferred. */
static int tp_btf_prepare(struct bpf_program *prog, struct bpf_prog_load_opts *opts, long cookie)
{
	int err = il_btf_tp_prepare(prog, opts, cookie);

	return err ? err : il_load_defer(prog, BPF_PROG_TYPE_TRACING, opts);
}

/* libbpf's prog_prepare_load_fn for SEC("tp/CATEGORY/NAME") and SEC("tp"): deferred. */
static int tp_prepare(struct bpf_program *prog, struct bpf_prog_load_opts *opts, long cookie)
{
	(void)cookie;
	return il_load_defer(prog, BPF_PROG_TYPE_TRACEPOINT, opts);
}

/* Its attach: to the tracepoint its section names, as libbpf's own does; SEC("tp") is
 * attached by the tool (*link NULL). */
static int tp_attach(const struct bpf_program *prog, long cookie, struct bpf_link **link)
{
	const char *sec = bpf_program__section_name(prog), *name;
	char cat[64];

	(void)cookie;
	*link = NULL;
	if (strncmp(sec, "tp/", 3))
		return 0;
	sec += 3;
	name = strchr(sec, '/');
	if (!name || (size_t)(name - sec) >= sizeof(cat))
		return -EINVAL;
	snprintf(cat, sizeof(cat), "%.*s", (int)(name - sec), sec);
	*link = bpf_program__attach_tracepoint(prog, cat, name + 1);
	return libbpf_get_error(*link);
}

void il_load_handlers(void)
{
	static const struct {
		const char *sec;
		enum bpf_prog_type type; /* at open */
		libbpf_prog_prepare_load_fn_t prepare;
		libbpf_prog_attach_fn_t attach;
	} h[] = {
		/* a raw tracepoint until loaded: libbpf reads all of vmlinux's BTF at load for
		 * any tracing program in the object (its attach target), 18-20 ms here */
		{ "tp_btf/", BPF_PROG_TYPE_RAW_TRACEPOINT, tp_btf_prepare, il_btf_tp_attach },
		{ "tp+", BPF_PROG_TYPE_TRACEPOINT, tp_prepare, tp_attach },
	};
	static bool done;

	if (done)
		return;
	done = true;
	for (size_t i = 0; i < sizeof(h) / sizeof(h[0]); i++) {
		LIBBPF_OPTS(libbpf_prog_handler_opts, opts, .prog_prepare_load_fn = h[i].prepare,
			    .prog_attach_fn = h[i].attach);

		if (libbpf_register_prog_handler(h[i].sec, h[i].type, 0, &opts) < 0)
			il_debug("cannot register a loader for SEC(\"%s\"): libbpf's own loads them",
				 h[i].sec);
	}
}
