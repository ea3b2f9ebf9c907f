/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Verification of a tool's programs on all CPUs. libbpf 1.1 loads an object's programs one
 * after another, and the kernel's verifier takes most of a tool's start-up (iolayer: ~65 of
 * ~100 ms here). A program handed to il_load_defer() from libbpf's prog_prepare_load_fn is
 * queued with the instructions and attributes libbpf prepared, and libbpf loads a stand-in
 * ("r0 = 0; exit"; a raw tracepoint program for a tracing one) in its place. After libbpf's
 * load, il_load_join() loads the queued programs on one thread per CPU (this one and up to
 * three more), the longest first, and puts each in its stand-in's file descriptor (dup3), so
 * the skeleton and libbpf's attach use it unchanged. Nothing may use a deferred program's fd
 * between SKEL__load() and il_load_join(), and bpf_program__type() then gives the
 * stand-in's type.
 */
#ifndef IOLAYER_LOADPOOL_H
#define IOLAYER_LOADPOOL_H

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

/* From a prog_prepare_load_fn, after opts is final: queue prog (of type type) and turn it into
 * the stand-in libbpf loads. Does nothing (0) with fewer than 2 CPUs online, at
 * -vv (libbpf's own log of each load stays whole), or when IOLAYER_SERIAL_LOAD is set in the
 * environment, or without memory for it (libbpf then loads the program itself). 0, or the
 * negative errno of bpf_program__set_insns() (libbpf then fails the load). */
int il_load_defer(struct bpf_program *prog, enum bpf_prog_type type, struct bpf_prog_load_opts *opts);

/* Load every queued program and swap each into its stand-in's fd (none when loaded is not 0:
 * libbpf's load failed, and nothing queued is loaded). IOLAYER_LOAD_STATS set: each
 * program's load time and instructions verified on stderr (iolayer.8), and the queue is used
 * with one thread under IOLAYER_SERIAL_LOAD or on one CPU. 0, or the negative errno of
 * the first program the kernel refused, named (with the verifier's log from -v) as libbpf
 * names one. */
int il_load_join(int loaded);

/* Just before obj's load, once its maps are configured: make its larger maps (a
 * preallocated hash or array, a stack map, a ring buffer: 256 KiB or more, whose creation
 * zeroes and links every entry) on one thread per CPU, largest first, and hand them to libbpf
 * (bpf_map__reuse_fd), which then makes only the rest. libbpf made them one after another:
 * 40-55 ms of iolayer's start-up here (issue 25). Such a map has no BTF of its key and value
 * (bpftool shows its entries as bytes). Does nothing when il_load_defer() would not (one CPU,
 * -vv, IOLAYER_SERIAL_LOAD). A map it cannot make is left to libbpf. Fills obj's il_btf_ids
 * first (il_btf_ids_fill(), btf.h), in every case. Returns 0. */
int il_maps_ahead(struct bpf_object *obj);

/* Before any BPF object is opened (IL_SKEL_OPEN): libbpf section handlers for
 * SEC("tp_btf/...") (il_btf_tp_prepare, btf.c) and SEC("tp/...") / SEC("tp") (attached as
 * libbpf's own would), whose programs are deferred (il_load_defer). The object's load must
 * be followed by il_load_join() (il_tool_loaded). Once per process; later calls do nothing. */
void il_load_handlers(void);

#endif
