/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * iolayer --serve: the layers of a loaded, attached object as Prometheus metrics (GET
 * /metrics, user/lib/prom.h) and the current verdict (GET /verdict, JSON), over HTTP with
 * libmicrohttpd, until a signal (or -d) ends it.
 *
 * The HTTP side runs in libmicrohttpd's own thread, one epoll loop for every connection, so a
 * slow or stuck client costs a connection slot, never the tracing (which is in the kernel) nor
 * the other clients. What a client sends selects a page and a format, nothing else: requests
 * only read the layers' maps through their readers, nothing is written to the BPF side.
 * Limits: IL_SERVE_CONNECTIONS connections, IL_SERVE_PER_IP from one address (a new one takes
 * the place of the oldest that waits for a request), IL_SERVE_HEADER_S s to send a request's
 * headers, IL_SERVE_ANSWER_S s to take its answer, requests of at most IL_SERVE_REQUEST_BYTES
 * (request line and headers), IL_SERVE_TIMEOUT_S s without progress;
 * methods other than GET and HEAD get 405, a GET with a body 400, other paths 404.
 */
#ifndef IOLAYER_SERVE_H
#define IOLAYER_SERVE_H

#include <stdbool.h>
#include <sys/socket.h>
#include <bpf/libbpf.h>
#include "plan.h"

/* 19435: outside 9100-9999, the range Prometheus hands out to exporters, which is full (9435
 * is ebpf_exporter's, which may well run beside iolayer), and in no /etc/services. */
#define IL_SERVE_DEFAULT_PORT 19435
#define IL_SERVE_DEFAULT_ADDR "127.0.0.1"

#define IL_SERVE_CONNECTIONS 64
#define IL_SERVE_PER_IP 8
#define IL_SERVE_REQUEST_BYTES 16384
#define IL_SERVE_TIMEOUT_S 10
/* A connection's deadlines, from its accept or its last answer: to send a request's line and
 * headers, and then to take the answer (s). */
#define IL_SERVE_HEADER_S 5
#define IL_SERVE_ANSWER_S 30
/* libmicrohttpd's memory per connection: the request's IL_SERVE_REQUEST_BYTES and the room to
 * answer it (requests beyond this get libmicrohttpd's own 414/431). */
#define IL_SERVE_POOL_BYTES (4 * IL_SERVE_REQUEST_BYTES)

/* Label values a layer may take before the rest go to "other" (kept in the order first seen,
 * so a series never moves between its own label and "other"). */
#define IL_SERVE_MAX_DISKS 16
#define IL_SERVE_MAX_WB_ROWS 16
/* Processes and files with series of their own (--top): at most this many of each. */
#define IL_SERVE_MAX_TOP 100

/* The verdict's window: the last IL_SERVE_WINDOW_S seconds (since start at first), in steps
 * of IL_SERVE_STEP_S. */
#define IL_SERVE_WINDOW_S 60
#define IL_SERVE_STEP_S 5
/* Files whose names are checked for a rename or a deletion at each step (who.h:
 * il_who_names_check()): every one of 4,096 files within 80 s, the lock held briefly. */
#define IL_SERVE_NAME_CHECKS 256

struct il_serve_addr {
	struct sockaddr_storage ss;
	socklen_t len;
	char text[80];          /* "127.0.0.1:19435", "[::1]:19435" */
};

/* Parse --serve's argument: "PORT" (on IL_SERVE_DEFAULT_ADDR), "ADDR:PORT", "[IPV6]:PORT", or
 * an address alone ("0.0.0.0", "::1", "[::1]") for IL_SERVE_DEFAULT_PORT. Addresses are
 * numeric (inet_pton), or "localhost" for 127.0.0.1. NULL, or what is wrong. */
const char *il_serve_addr_parse(const char *arg, struct il_serve_addr *a);

struct il_measure_src;

/* What the serve loop reads: an attached object (what it measures, user/lib/measure.h) and its
 * chosen plans (their methods are served); a layer left out has a NULL plan (fs: nfs 0). */
struct il_serve_src {
	struct il_measure_src *m;
	const struct il_plan *block;
	const struct il_plan *fs;        /* nfs plans, of filesystems fs_types[] (enum fs_type) */
	const int *fs_types;
	int nfs;
	const struct il_plan *wb;        /* ext4_writepages */
	const struct il_plan *iw;
	int top;                         /* processes and files with series of their own, 1 to
					  * IL_SERVE_MAX_TOP (user/lib/prom.h: il_prom_who) */
};

/* Serve until il_exiting (signals: il_signals_init()) or duration_s (0: no limit). Prints the
 * "Serving ... Hit Ctrl-C to end." line on stderr when listening. 0, or -1 after one line
 * (the address cannot be bound). Attribution must be on in src->obj (il_who_enable()). */
/* Open libmicrohttpd (dlopen; not linked: it and its TLS libraries cost ~4.5 ms of every
 * start) and resolve its functions, once: 0, or -1 with one line said ("--serve needs
 * libmicrohttpd ..."). il_serve() calls it; a tool calls it first to refuse before loading. */
int il_serve_lib(void);

int il_serve(const struct il_serve_addr *a, const struct il_serve_src *src, unsigned duration_s);

#endif
