/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
#include <arpa/inet.h>
#include <dlfcn.h>
#include <errno.h>
#include <malloc.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/utsname.h>
#include <microhttpd.h>
#include "cause.h"
#include "disk.h"
#include "drops.h"
#include "escape.h"
#include "hist.h"
#include "layers.h"
#include "layers/fs.h"
#include "layers/who.h"
#include "log.h"
#include "measure.h"
#include "prom.h"
#include "run.h"
#include "serve.h"
#include "util.h"
#include "verdict.h"
#include "whoview.h"

#ifndef IL_VERSION
#define IL_VERSION "unknown"
#endif

/* ---- libmicrohttpd, opened when --serve starts ---------------------------------------- */

/* Not linked but opened by il_serve(): libmicrohttpd and the TLS libraries it brings (gnutls,
 * p11-kit, nettle, gmp...) cost ~4.5 ms of every start of every tool, and only --serve needs
 * them. <microhttpd.h> still gives the types, the constants and these prototypes. */
#define IL_MHD_SONAME "libmicrohttpd.so.12"
#define IL_MHD_FUNCS(X) X(start_daemon) X(stop_daemon) X(create_response_from_buffer) \
	X(queue_response) X(destroy_response) X(add_response_header) \
	X(lookup_connection_value) X(get_connection_info)

static struct {
#define IL_MHD_FIELD(f) __typeof__(MHD_##f) *f;
	IL_MHD_FUNCS(IL_MHD_FIELD)
#undef IL_MHD_FIELD
	bool loaded;
} mhd;

int il_serve_lib(void)
{
	const char *err = NULL;
	void *h;

	if (mhd.loaded)
		return 0;
	h = dlopen(IL_MHD_SONAME, RTLD_NOW | RTLD_LOCAL);
	if (!h)
		err = dlerror();
#define IL_MHD_SYM(f) \
	if (!err && !(mhd.f = (__typeof__(mhd.f))dlsym(h, "MHD_" #f))) \
		err = dlerror() ?: "MHD_" #f " not found";
	IL_MHD_FUNCS(IL_MHD_SYM)
#undef IL_MHD_SYM
	if (err) {
		il_err("--serve needs libmicrohttpd (Debian package libmicrohttpd12): %s", err);
		return -1;
	}
	mhd.loaded = true;
	return 0;
}

/* ---- the address ----------------------------------------------------------------------- */

/* Whether s is all decimal digits (and not empty). */
static bool digits(const char *s)
{
	return *s && strspn(s, "0123456789") == strlen(s);
}

const char *il_serve_addr_parse(const char *arg, struct il_serve_addr *a)
{
	static char msg[160];
	const char *colon = strrchr(arg, ':'), *port = NULL;
	struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)&a->ss;
	struct sockaddr_in *s4 = (struct sockaddr_in *)&a->ss;
	unsigned long pn = IL_SERVE_DEFAULT_PORT;
	char host[64], ip[INET6_ADDRSTRLEN];
	size_t hl;

	memset(a, 0, sizeof(*a));
	if (digits(arg)) {                               /* PORT */
		port = arg;
		hl = 0;
	} else if (arg[0] == '[') {                      /* [IPV6] or [IPV6]:PORT */
		const char *close = strchr(arg, ']');

		if (!close || (close[1] && close[1] != ':'))
			return "an IPv6 address goes in brackets: [::1]:PORT";
		if (close[1] == ':')
			port = close + 2;
		arg++;
		hl = close - arg;
	} else if (colon && colon == strchr(arg, ':')) { /* ADDR:PORT, :PORT (one colon) */
		port = colon + 1;
		hl = colon - arg;
	} else {                                         /* ADDR alone, or a bare IPv6 address */
		hl = strlen(arg);
	}
	if (port && (!digits(port) || strlen(port) > 5 || !(pn = strtoul(port, NULL, 10)) || pn > 65535)) {
		snprintf(msg, sizeof(msg), "the port must be a number from 1 to 65535, got '%.40s'", port);
		return msg;
	}
	if (hl >= sizeof(host))
		return "the address is too long";
	memcpy(host, arg, hl);
	host[hl] = '\0';
	if (!hl || !strcmp(host, "localhost"))
		snprintf(host, sizeof(host), "%s", IL_SERVE_DEFAULT_ADDR);
	/* numeric addresses only: no name service, no "127.1" shorthand */
	if (inet_pton(AF_INET, host, &s4->sin_addr) == 1) {
		s4->sin_family = AF_INET;
		s4->sin_port = htons(pn);
		a->len = sizeof(*s4);
		snprintf(a->text, sizeof(a->text), "%s:%lu", host, pn);
	} else if (inet_pton(AF_INET6, host, &s6->sin6_addr) == 1) {
		s6->sin6_family = AF_INET6;
		s6->sin6_port = htons(pn);
		a->len = sizeof(*s6);
		inet_ntop(AF_INET6, &s6->sin6_addr, ip, sizeof(ip));
		snprintf(a->text, sizeof(a->text), "[%s]:%lu", ip, pn);
	} else {
		snprintf(msg, sizeof(msg), "'%.60s' is not an IPv4 or IPv6 address (or localhost)", host);
		return msg;
	}
	return NULL;
}

/* ---- the server's state ------------------------------------------------------------------ */

#define RING (IL_SERVE_WINDOW_S / IL_SERVE_STEP_S + 1)

struct server {
	const struct il_serve_src *src;
	char kernel[65];
	char methods[4][96];                /* block, fs, writeback, iowait */
	/* The verdict's bases, oldest first (the main thread adds one every step, /verdict reads
	 * the oldest); the lock is held for them and for every read of the object (il_snap_read():
	 * the library's caches are read and filled by both threads). */
	pthread_mutex_t lock;
	struct il_snap ring[RING];
	int head, n;
	/* Used by the HTTP thread only: label values given out so far, the lost counters as
	 * last served (kept from going down), the top processes and files. */
	__u32 disks[IL_SERVE_MAX_DISKS];
	char disk_names[IL_SERVE_MAX_DISKS][32];
	int ndisks;
	bool disk_other;
	struct wb_stat_key wbk[IL_SERVE_MAX_WB_ROWS];
	int nwbk;
	bool wb_other;
	__u64 lost[IL_DROP__MAX];
	struct il_prom_top top;
	/* The verdict over the ring's window, judged by the main thread at each step (a scrape
	 * judges nothing): its layer, victim, culprit and the culprit's share of the victim's
	 * time; under lock. */
	struct {
		bool set;
		char layer[32], victim[IL_CAUSE_NAME], victim_pid[16], kind[16], culprit[256];
		double share;
	} verdict;
	/* The connections as the admission policy sees them (see "connections" below): changed
	 * by the HTTP thread's callbacks, swept by the main thread for deadlines. */
	pthread_mutex_t conn_lock;
	struct conn *conns;
};

static const char *method_of(const struct il_plan *p)
{
	int m = p ? il_plan_method(p) : -1;

	return m < 0 ? "none" : il_method_name(m);
}

static void server_init(struct server *sv, const struct il_serve_src *src)
{
	struct utsname u;
	size_t o = 0;

	memset(sv, 0, sizeof(*sv));
	sv->src = src;
	pthread_mutex_init(&sv->lock, NULL);
	pthread_mutex_init(&sv->conn_lock, NULL);
	snprintf(sv->kernel, sizeof(sv->kernel), "%s", uname(&u) ? "unknown" : u.release);
	snprintf(sv->methods[0], sizeof(sv->methods[0]), "%s", method_of(src->block));
	for (int i = 0; i < src->nfs && o < sizeof(sv->methods[1]); i++)
		o += snprintf(sv->methods[1] + o, sizeof(sv->methods[1]) - o, "%s%s:%s", i ? "," : "",
			      il_fs_table[src->fs_types[i]].name, method_of(&src->fs[i]));
	if (!src->nfs)
		snprintf(sv->methods[1], sizeof(sv->methods[1]), "none");
	snprintf(sv->methods[2], sizeof(sv->methods[2]), "%s", method_of(src->wb));
	snprintf(sv->methods[3], sizeof(sv->methods[3]), "%s", method_of(src->iw));
	il_prom_top_init(&sv->top, src->top);
	/* the first base: nothing counted yet, now; the processes' CPU times */
	if (il_snap_read(src->m, il_now_ns(), IL_SNAP_CPU, &sv->ring[0]))
		sv->ring[0].t_ns = il_now_ns();
	sv->n = 1;
}

/* A snapshot of now into s (what flags ask for), under the lock. Files' names are checked
 * against the filesystem (renamed, deleted) only with check, IL_SERVE_NAME_CHECKS files at a
 * time, which the main thread's step asks for and a scrape never does: what an HTTP client
 * asks for opens nothing by path. 0, or -ENOMEM. */
static int snap_now(struct server *sv, unsigned flags, bool check, struct il_snap *s)
{
	int err;

	pthread_mutex_lock(&sv->lock);
	il_who_names_check(check ? IL_SERVE_NAME_CHECKS : 0);
	err = il_snap_read(sv->src->m, il_now_ns(), flags, s);
	pthread_mutex_unlock(&sv->lock);
	return err;
}

/* Judge the window from the ring's oldest base to s (the main thread, under the lock) into
 * sv->verdict, for /metrics' iolayer_verdict_share. */
static void verdict_step(struct server *sv, const struct il_snap *s)
{
	struct il_judgement *j = malloc(sizeof(*j));
	struct il_window w;

	if (!j || !sv->n || il_measure_judge(sv->src->m, s, &sv->ring[sv->head], &w, j)) {
		free(j);
		return;
	}
	memset(&sv->verdict, 0, sizeof(sv->verdict));
	sv->verdict.set = true;
	snprintf(sv->verdict.layer, sizeof(sv->verdict.layer), "%s", il_where_name(j->v.d.where));
	if (j->cause.found && j->cause.nblames && !j->cause.idle) {
		const struct il_blame *b = &j->cause.blames[0];

		snprintf(sv->verdict.victim, sizeof(sv->verdict.victim), "%s", j->cause.victim.comm);
		snprintf(sv->verdict.victim_pid, sizeof(sv->verdict.victim_pid), "%u", j->cause.victim.pid);
		snprintf(sv->verdict.kind, sizeof(sv->verdict.kind), "%s", il_ck_name(b->kind));
		snprintf(sv->verdict.culprit, sizeof(sv->verdict.culprit), "%s",
			 b->kind == IL_CK_THROTTLE ? b->cgroup : b->kind == IL_CK_DEVICE ? b->disk : b->comm);
		sv->verdict.share = b->share;
	}
	il_window_free(&w);
	free(j);
}

/* Forget the ring's oldest base. */
static void ring_drop(struct server *sv)
{
	il_snap_free(&sv->ring[sv->head]);
	sv->head = (sv->head + 1) % RING;
	sv->n--;
}

/* Add a base to the ring, which drops its oldest when full, and those older than the window
 * and a step (steps that came late under load: a trial's /verdict windows of 63 to 90 s); the
 * verdict up to it first. */
static void ring_push(struct server *sv, struct il_snap *s)
{
	const unsigned long long keep = (IL_SERVE_WINDOW_S + IL_SERVE_STEP_S) * 1000000000ULL;

	il_snap_trim(s);
	pthread_mutex_lock(&sv->lock);
	while (sv->n > 1 && s->t_ns - sv->ring[sv->head].t_ns > keep)
		ring_drop(sv);
	verdict_step(sv, s);
	if (sv->n == RING)
		ring_drop(sv);
	sv->ring[(sv->head + sv->n) % RING] = *s;
	sv->n++;
	pthread_mutex_unlock(&sv->lock);
}

/* ---- /metrics ------------------------------------------------------------------------------ */

static const char *const wb_func_names[] = { "ext4_writepages", "do_writepages", "generic" };

/* Index of x among the n label values given out so far (added when there is room), or cap
 * ("other"). */
static int label_index(void *vals, int *n, int cap, const void *x, size_t size)
{
	for (int i = 0; i < *n; i++)
		if (!memcmp((char *)vals + i * size, x, size))
			return i;
	if (*n == cap)
		return cap;
	memcpy((char *)vals + *n * size, x, size);
	return (*n)++;
}

static void disk_add(struct blk_disk_stats *to, const struct blk_disk_stats *x)
{
	to->count += x->count;
	to->queued += x->queued;
	to->bytes += x->bytes;
	to->queue_ns += x->queue_ns;
	to->device_ns += x->device_ns;
	for (int s = 0; s < IL_HIST_SLOTS; s++) {
		to->queue_slots[s] += x->queue_slots[s];
		to->device_slots[s] += x->device_slots[s];
	}
}

static void metrics_block(struct server *sv, struct il_prom *p, const struct il_snap *s)
{
	struct blk_disk_stats agg[IL_SERVE_MAX_DISKS + 1];
	static const struct { const char *name; enum il_prom_type type; const char *unit, *help; } fam[] = {
		{ "iolayer_block_queue_duration_seconds", IL_PROM_HISTOGRAM, "seconds",
		  "Block requests' time in the OS queue, insert to issue, per disk." },
		{ "iolayer_block_device_duration_seconds", IL_PROM_HISTOGRAM, "seconds",
		  "Block requests' time at the device, issue to complete, per disk." },
		{ "iolayer_block_requests", IL_PROM_COUNTER, NULL, "Block requests completed, per disk." },
		{ "iolayer_block_bytes", IL_PROM_COUNTER, "bytes", "Bytes of completed block requests, per disk." },
	};
	int nagg;

	memset(agg, 0, sizeof(agg));
	for (int i = 0; i < s->ndisk; i++) {
		int k = label_index(sv->disks, &sv->ndisks, IL_SERVE_MAX_DISKS, &s->disk[i].dev,
				    sizeof(__u32));

		if (k < IL_SERVE_MAX_DISKS && !sv->disk_names[k][0])
			il_disk_name(s->disk[i].dev, sv->disk_names[k], sizeof(sv->disk_names[k]));
		sv->disk_other |= k == IL_SERVE_MAX_DISKS;
		disk_add(&agg[k], &s->disk[i].st);
	}
	nagg = sv->ndisks;
	for (size_t f = 0; f < IL_ARRAY_SIZE(fam); f++) {
		il_prom_family(p, fam[f].name, fam[f].type, fam[f].unit, fam[f].help);
		for (int k = 0; k <= IL_SERVE_MAX_DISKS; k++) {
			const struct blk_disk_stats *d = &agg[k];
			const char *lab[] = { "disk", k < nagg ? sv->disk_names[k] : "other", NULL };

			/* "other" stays once it has appeared, so its series does not come and go */
			if (k >= nagg && (k < IL_SERVE_MAX_DISKS || !sv->disk_other))
				continue;
			if (f == 0)
				il_prom_hist(p, lab, d->queue_slots, d->queue_ns);
			else if (f == 1)
				il_prom_hist(p, lab, d->device_slots, d->device_ns);
			else
				il_prom_value(p, lab, f == 2 ? d->count : d->bytes);
		}
	}
}

static void metrics_wb(struct server *sv, struct il_prom *p, const struct il_snap *s)
{
	struct wb_stat agg[IL_SERVE_MAX_WB_ROWS + 1] = { 0 };
	char ret[16];

	for (int i = 0; i < s->nwb; i++) {
		int k = label_index(sv->wbk, &sv->nwbk, IL_SERVE_MAX_WB_ROWS, &s->wb[i].k,
				    sizeof(struct wb_stat_key));

		sv->wb_other |= k == IL_SERVE_MAX_WB_ROWS;
		agg[k].count += s->wb[i].v.count;
		agg[k].total_ns += s->wb[i].v.total_ns;
	}
	il_prom_family(p, "iolayer_writeback_duration_seconds", IL_PROM_SUMMARY, "seconds",
		       "Writeback calls (ext4_writepages) by return value and sync_mode; "
		       "the layer keeps no distribution, only count and sum.");
	for (int k = 0; k < sv->nwbk; k++) {
		const struct wb_stat_key *key = &sv->wbk[k];
		const char *lab[] = {
			"func", key->func < IL_ARRAY_SIZE(wb_func_names) ? wb_func_names[key->func] : "other",
			"ret", key->ret_known ? (snprintf(ret, sizeof(ret), "%d", key->ret), ret) : "unknown",
			"sync_mode", key->sync_mode == 0 ? "WB_SYNC_NONE" : key->sync_mode == 1 ? "WB_SYNC_ALL" : "unknown",
			NULL };

		il_prom_summary(p, lab, agg[k].count, agg[k].total_ns);
	}
	if (sv->wb_other)
		il_prom_summary(p, (const char *[]){ "func", "other", "ret", "other", "sync_mode", "other", NULL },
				agg[IL_SERVE_MAX_WB_ROWS].count, agg[IL_SERVE_MAX_WB_ROWS].total_ns);
}

/* The body of /metrics, malloc'ed (*len bytes), or NULL. */
static char *metrics(struct server *sv, bool om, size_t *len)
{
	const struct il_serve_src *src = sv->src;
	char *buf = NULL, pid[16];
	struct il_prom p;
	struct il_snap s;
	FILE *f;
	int bad;

	if (snap_now(sv, IL_SNAP_MAPS | IL_SNAP_WHO, false, &s))
		return NULL;
	f = open_memstream(&buf, len);
	if (!f) {
		il_snap_free(&s);
		return NULL;
	}
	il_prom_init(&p, f, om);
	snprintf(pid, sizeof(pid), "%u", src->m->pid);
	il_prom_family(&p, "iolayer", IL_PROM_INFO, NULL,
		       "iolayer's version, the kernel, the process traced (0: all) and each layer's attach method.");
	il_prom_value(&p, (const char *[]){ "version", IL_VERSION, "kernel", sv->kernel, "pid", pid,
					    "block", sv->methods[0], "fs", sv->methods[1],
					    "writeback", sv->methods[2], "iowait", sv->methods[3], NULL }, 1);
	if (src->m->fs) {
		il_prom_family(&p, "iolayer_fs_op_duration_seconds", IL_PROM_HISTOGRAM, "seconds",
			       "File operations at the syscall/VFS layer, entry to return, by operation "
			       "(every traced filesystem together).");
		for (int i = 0; i < FS_OP__MAX; i++)
			il_prom_hist(&p, (const char *[]){ "op", il_fs_op_names[i], NULL }, s.fs[i].slots,
				     s.fs[i].total_ns);
	}
	if (src->m->wb)
		metrics_wb(sv, &p, &s);
	if (src->m->iw) {
		il_prom_family(&p, "iolayer_iowait_duration_seconds", IL_PROM_SUMMARY, "seconds",
			       "Sleeps in I/O wait (io_schedule); the layer keeps no distribution, "
			       "only count and sum.");
		il_prom_summary(&p, NULL, s.iw.count, s.iw.total_ns);
	}
	if (src->m->blk)
		metrics_block(sv, &p, &s);
	il_prom_who(&p, &sv->top, &s.view, il_now_ns());
	pthread_mutex_lock(&sv->lock);
	if (sv->verdict.set) {
		il_prom_family(&p, "iolayer_verdict_share", IL_PROM_GAUGE, NULL,
			       "The verdict over the last minute, as /verdict gave it at the last 5 s step: "
			       "the culprit's share of the victim's time in its calls (0: no layer stands out), one series "
			       "labelled with the layer, the victim (comm, pid), the culprit's kind and "
			       "name (a command, a disk, a cgroup).");
		il_prom_gauge(&p, (const char *[]){ "layer", sv->verdict.layer, "victim", sv->verdict.victim,
						    "victim_pid", sv->verdict.victim_pid,
						    "culprit_kind", sv->verdict.kind,
						    "culprit", sv->verdict.culprit, NULL },
			      sv->verdict.share);
	}
	pthread_mutex_unlock(&sv->lock);
	il_prom_family(&p, "iolayer_lost_events", IL_PROM_COUNTER, NULL,
		       "What the kernel side could not count, by kind.");
	for (int i = 0; i < IL_DROP__MAX; i++) {
		if (s.lost[i] > sv->lost[i])
			sv->lost[i] = s.lost[i];
		il_prom_value(&p, (const char *[]){ "kind", il_drop_name(i), NULL }, sv->lost[i]);
	}
	bad = il_prom_finish(&p);
	il_snap_free(&s);
	if (fclose(f) || bad) {
		free(buf);
		return NULL;
	}
	return buf;
}

/* ---- /verdict ---------------------------------------------------------------------------- */

/* The body of /verdict, malloc'ed, or NULL: the window since the oldest base, judged. */
static char *verdict(struct server *sv, size_t *len)
{
	struct json_object *o;
	struct il_judgement *j = malloc(sizeof(*j));
	struct il_window w;
	struct il_snap now;
	char *body = NULL;
	int err;

	if (!j || snap_now(sv, IL_SNAP_VERDICT, false, &now)) {
		free(j);
		return NULL;
	}
	pthread_mutex_lock(&sv->lock);
	err = il_measure_judge(sv->src->m, &now, &sv->ring[sv->head], &w, j);
	pthread_mutex_unlock(&sv->lock);
	il_snap_free(&now);
	if (err) {
		free(j);
		return NULL;
	}
	o = il_judgement_json(&w, j);
	free(j);
	il_window_free(&w);
	if (asprintf(&body, "%s\n", json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN)) < 0)
		body = NULL;
	json_object_put(o);
	if (body)
		*len = strlen(body);
	return body;
}

/* ---- connections ------------------------------------------------------------------------ */

/* libmicrohttpd's own limits refuse a new connection when the slots are full, and its
 * timeout restarts at every byte, so slow clients (a header byte a second) could hold every
 * slot for ever. Its limits are set loose instead and these rules apply at accept (the
 * accept policy callback) and every 100 ms (serve_sweep()): a connection waiting for a
 * request (from its accept, or from its last answer) gets IL_SERVE_HEADER_S to send the
 * request line and headers; one that is being answered, IL_SERVE_ANSWER_S to take it. A new
 * connection over IL_SERVE_PER_IP from its address, or over IL_SERVE_CONNECTIONS in all, takes
 * the place of the oldest connection that is waiting for a request (from that address, or
 * from any), and is refused only when every one is being answered. A connection is ended with
 * shutdown(2) of its socket, which libmicrohttpd sees as the client's close; the socket is
 * closed by libmicrohttpd after its CLOSED notification, which takes conn_lock, so a sweep
 * never shuts down a socket number that was reused. */
struct conn {
	struct conn *next;
	int fd;
	struct sockaddr_storage addr;     /* the client's, port zeroed */
	unsigned long long since_ns;      /* il_now_ns() at accept, request or last answer */
	bool answering;                   /* the headers are in: being answered */
	bool ended;                       /* shut down by the policy, closing */
};

/* The client's address without its port, for comparison. */
static void addr_key(const struct sockaddr *sa, struct sockaddr_storage *k)
{
	memset(k, 0, sizeof(*k));
	if (sa->sa_family == AF_INET6) {
		const struct sockaddr_in6 *s6 = (const void *)sa;
		struct sockaddr_in6 *k6 = (void *)k;

		k6->sin6_family = AF_INET6;
		k6->sin6_addr = s6->sin6_addr;
	} else if (sa->sa_family == AF_INET) {
		const struct sockaddr_in *s4 = (const void *)sa;
		struct sockaddr_in *k4 = (void *)k;

		k4->sin_family = AF_INET;
		k4->sin_addr = s4->sin_addr;
	}
}

/* End connection x (under conn_lock): libmicrohttpd then reads the end and closes it. */
static void conn_end(struct conn *x)
{
	x->ended = true;
	shutdown(x->fd, SHUT_RDWR);
}

/* The oldest connection waiting for a request, from address k (NULL: any), or NULL; *n is
 * set to how many live (not ended) connections there are from k (or in all). */
static struct conn *conn_oldest_waiting(struct server *sv, const struct sockaddr_storage *k, int *n)
{
	struct conn *old = NULL;

	*n = 0;
	for (struct conn *x = sv->conns; x; x = x->next) {
		if (x->ended || (k && memcmp(&x->addr, k, sizeof(*k))))
			continue;
		(*n)++;
		if (!x->answering && (!old || x->since_ns < old->since_ns))
			old = x;
	}
	return old;
}

/* libmicrohttpd's accept policy: room is made for the new connection, or it is refused. */
static enum MHD_Result on_accept(void *cls, const struct sockaddr *sa, socklen_t len)
{
	struct server *sv = cls;
	struct sockaddr_storage k;
	enum MHD_Result ok = MHD_YES;
	struct conn *old;
	int n;

	addr_key(sa, &k);
	pthread_mutex_lock(&sv->conn_lock);
	old = conn_oldest_waiting(sv, &k, &n);
	if (n >= IL_SERVE_PER_IP) {
		if (old)
			conn_end(old);
		else
			ok = MHD_NO;
	}
	old = conn_oldest_waiting(sv, NULL, &n);
	if (ok == MHD_YES && n >= IL_SERVE_CONNECTIONS) {
		if (old)
			conn_end(old);
		else
			ok = MHD_NO;
	}
	pthread_mutex_unlock(&sv->conn_lock);
	if (ok == MHD_NO && il_verbose >= 1)
		fprintf(stderr, "%s: http: refused a connection: every slot is being answered\n", il_tool);
	return ok;
}

/* libmicrohttpd's connection notifications: the list kept in step. */
static void on_connection(void *cls, struct MHD_Connection *c, void **ctx,
			  enum MHD_ConnectionNotificationCode what)
{
	static bool named;
	struct server *sv = cls;
	struct conn *x = *ctx;

	if (what == MHD_CONNECTION_NOTIFY_STARTED) {
		const union MHD_ConnectionInfo *fd = mhd.get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
		const union MHD_ConnectionInfo *ad = mhd.get_connection_info(c, MHD_CONNECTION_INFO_CLIENT_ADDRESS);

		if (!named) /* the HTTP thread by its name in ps -L, top -H, strace */
			named = !pthread_setname_np(pthread_self(), "iolayer-http");
		if (!fd || !ad || !(x = calloc(1, sizeof(*x))))
			return; /* not tracked: libmicrohttpd's own timeout still applies */
		x->fd = fd->connect_fd;
		addr_key(ad->client_addr, &x->addr);
		x->since_ns = il_now_ns();
		pthread_mutex_lock(&sv->conn_lock);
		x->next = sv->conns;
		sv->conns = x;
		pthread_mutex_unlock(&sv->conn_lock);
		*ctx = x;
		return;
	}
	if (!x)
		return;
	pthread_mutex_lock(&sv->conn_lock);
	for (struct conn **pp = &sv->conns; *pp; pp = &(*pp)->next)
		if (*pp == x) {
			*pp = x->next;
			break;
		}
	pthread_mutex_unlock(&sv->conn_lock);
	free(x);
	*ctx = NULL;
}

/* The connection's entry, or NULL. */
static struct conn *conn_of(struct MHD_Connection *c)
{
	const union MHD_ConnectionInfo *i = mhd.get_connection_info(c, MHD_CONNECTION_INFO_SOCKET_CONTEXT);

	return i ? i->socket_context : NULL;
}

/* Mark c as answering (its headers are in) or waiting for its next request, from now. */
static void conn_mark(struct server *sv, struct MHD_Connection *c, bool answering)
{
	struct conn *x = conn_of(c);

	if (!x)
		return;
	pthread_mutex_lock(&sv->conn_lock);
	x->answering = answering;
	x->since_ns = il_now_ns();
	pthread_mutex_unlock(&sv->conn_lock);
}

/* libmicrohttpd's end of a request (answered, or given up): wait for the next one. */
static void on_completed(void *cls, struct MHD_Connection *c, void **req,
			 enum MHD_RequestTerminationCode toe)
{
	conn_mark(cls, c, false);
}

/* End the connections past their deadline (main thread, every 100 ms). */
static void serve_sweep(struct server *sv)
{
	unsigned long long now = il_now_ns();

	pthread_mutex_lock(&sv->conn_lock);
	for (struct conn *x = sv->conns; x; x = x->next) {
		unsigned long long limit = (x->answering ? IL_SERVE_ANSWER_S : IL_SERVE_HEADER_S) * 1000000000ULL;

		if (!x->ended && now - x->since_ns >= limit)
			conn_end(x);
	}
	pthread_mutex_unlock(&sv->conn_lock);
}

/* ---- HTTP ------------------------------------------------------------------------------- */

static enum MHD_Result reply(struct MHD_Connection *c, unsigned status, const char *type,
			     char *body, size_t len, bool owned)
{
	struct MHD_Response *r;
	enum MHD_Result ret;

	if (!body) { /* could not render: out of memory */
		static char msg[] = "internal error\n";

		status = MHD_HTTP_INTERNAL_SERVER_ERROR;
		type = "text/plain; charset=utf-8";
		body = msg;
		len = sizeof(msg) - 1;
		owned = false;
	}
	r = mhd.create_response_from_buffer(len, body, owned ? MHD_RESPMEM_MUST_FREE : MHD_RESPMEM_PERSISTENT);
	if (!r) {
		if (owned)
			free(body);
		return MHD_NO;
	}
	mhd.add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, type);
	mhd.add_response_header(r, MHD_HTTP_HEADER_CACHE_CONTROL, "no-store");
	if (status == MHD_HTTP_METHOD_NOT_ALLOWED)
		mhd.add_response_header(r, MHD_HTTP_HEADER_ALLOW, "GET, HEAD");
	ret = mhd.queue_response(c, status, r);
	mhd.destroy_response(r);
	return ret;
}

static enum MHD_Result text(struct MHD_Connection *c, unsigned status, const char *msg)
{
	return reply(c, status, "text/plain; charset=utf-8", (char *)msg, strlen(msg), false);
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *c, const char *url,
				  const char *method, const char *version, const char *upload,
				  size_t *upload_size, void **req)
{
	static int seen;
	struct server *sv = cls;
	const char *cl, *accept;
	size_t len = 0;
	char *body;
	const union MHD_ConnectionInfo *hs;
	bool om;

	if (!*req) { /* the request line and headers are in */
		conn_mark(sv, c, true);
		hs = mhd.get_connection_info(c, MHD_CONNECTION_INFO_REQUEST_HEADER_SIZE);
		/* libmicrohttpd's own 414/431 come past IL_SERVE_POOL_BYTES: these below */
		if (hs && hs->header_size > IL_SERVE_REQUEST_BYTES)
			return strlen(method) + strlen(url) + strlen(version) + 4 > IL_SERVE_REQUEST_BYTES ?
			       text(c, MHD_HTTP_URI_TOO_LONG, "request line too long\n") :
			       text(c, MHD_HTTP_REQUEST_HEADER_FIELDS_TOO_LARGE, "request headers too large\n");
	}
	if (strcmp(method, MHD_HTTP_METHOD_GET) && strcmp(method, MHD_HTTP_METHOD_HEAD))
		return text(c, MHD_HTTP_METHOD_NOT_ALLOWED, "only GET and HEAD\n");
	cl = mhd.lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_LENGTH);
	if ((cl && strcmp(cl, "0")) ||
	    mhd.lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_TRANSFER_ENCODING))
		return text(c, MHD_HTTP_BAD_REQUEST, "a GET takes no body\n");
	if (!*req) { /* headers only so far: answer on the next call */
		*req = &seen;
		return MHD_YES;
	}
	if (*upload_size)
		return text(c, MHD_HTTP_BAD_REQUEST, "a GET takes no body\n");
	if (!strcmp(url, "/metrics")) {
		accept = mhd.lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_ACCEPT);
		om = il_prom_wants_openmetrics(accept);
		body = metrics(sv, om, &len);
		return reply(c, MHD_HTTP_OK, om ? IL_PROM_CT_OPENMETRICS : IL_PROM_CT_TEXT, body, len, true);
	}
	if (!strcmp(url, "/verdict")) {
		body = verdict(sv, &len);
		return reply(c, MHD_HTTP_OK, "application/json", body, len, true);
	}
	if (!strcmp(url, "/"))
		return text(c, MHD_HTTP_OK, "iolayer: /metrics (Prometheus, OpenMetrics), /verdict (JSON)\n");
	return text(c, MHD_HTTP_NOT_FOUND, "not found: try /metrics or /verdict\n");
}

/* libmicrohttpd's own messages (a client that broke the protocol, a full server): -v. */
static void on_log(void *cls, const char *fmt, va_list ap)
{
	if (il_verbose < 1)
		return;
	fprintf(stderr, "%s: http: ", il_tool);
	vfprintf(stderr, fmt, ap);
}

int il_serve(const struct il_serve_addr *a, const struct il_serve_src *src, unsigned duration_s)
{
	const unsigned long long step = IL_SERVE_STEP_S * 1000000000ULL;
	unsigned long long start, next, end = 0;
	struct MHD_Daemon *d;
	sigset_t block, old;
	struct server *sv;
	bool target_gone = false;
	int err;

	if (il_serve_lib())
		return -1;
	sv = calloc(1, sizeof(*sv));
	if (!sv) {
		il_err("cannot serve: out of memory");
		return -1;
	}
	server_init(sv, src);
	/* a scrape's arrays (maps read whole, views) are large and short-lived: mapped and
	 * unmapped each time, not left in the heaps of two threads to fragment them (a fixed
	 * threshold: glibc's would otherwise rise to the largest freed) */
	mallopt(M_MMAP_THRESHOLD, 128 * 1024);
	/* the HTTP thread inherits this mask: signals go to the main thread, which ends the loop */
	sigemptyset(&block);
	sigaddset(&block, SIGINT);
	sigaddset(&block, SIGTERM);
	sigaddset(&block, SIGHUP);
	pthread_sigmask(SIG_BLOCK, &block, &old);
	d = mhd.start_daemon(MHD_USE_AUTO_INTERNAL_THREAD | MHD_USE_ERROR_LOG |
			     (a->ss.ss_family == AF_INET6 ? MHD_USE_IPv6 : 0),
			     0, on_accept, sv, on_request, sv,
			     MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&a->ss,
			     /* room for the connections ended by the policy while they close */
			     MHD_OPTION_CONNECTION_LIMIT, (unsigned)(2 * IL_SERVE_CONNECTIONS),
			     MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)IL_SERVE_TIMEOUT_S,
			     MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)IL_SERVE_POOL_BYTES,
			     MHD_OPTION_NOTIFY_CONNECTION, on_connection, sv,
			     MHD_OPTION_NOTIFY_COMPLETED, on_completed, sv,
			     MHD_OPTION_STRICT_FOR_CLIENT, (int)1,
			     MHD_OPTION_EXTERNAL_LOGGER, on_log, NULL,
			     MHD_OPTION_END);
	err = errno;
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (!d) {
		il_err("cannot listen on %s: %s", a->text, err ? strerror(err) : "libmicrohttpd refused");
		free(sv);
		return -1;
	}
	fprintf(stderr, "Serving http://%s/metrics and /verdict%s... Hit Ctrl-C to end.\n", a->text,
		src->m->pid ? " for that process" : "");
	start = il_now_ns();
	next = start + step;
	if (duration_s)
		end = start + duration_s * 1000000000ULL;
	while (!il_exiting) {
		unsigned long long now;

		usleep(100000);
		serve_sweep(sv);
		now = il_now_ns();
		if (end && now >= end)
			break;
		/* the counts of a process that exited stay served until a last scrape took them */
		if (!target_gone && (target_gone = il_target_gone()))
			fprintf(stderr, "%s: serving its last counts until stopped\n", il_tool);
		if (now >= next) {
			struct il_snap s;

			if (!snap_now(sv, IL_SNAP_VERDICT, true, &s))
				ring_push(sv, &s);
			next += step;
			malloc_trim(0); /* give back what the heaps hold free */
		}
	}
	mhd.stop_daemon(d);
	for (int i = 0; i < sv->n; i++)
		il_snap_free(&sv->ring[(sv->head + i) % RING]);
	il_prom_top_free(&sv->top);
	pthread_mutex_destroy(&sv->lock);
	pthread_mutex_destroy(&sv->conn_lock);
	free(sv);
	return 0;
}
