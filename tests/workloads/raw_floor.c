/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The benchmark's floor for raw tracepoints (tools/bench): two empty programs, floor_sys_enter
 * and floor_sys_exit (BPF_PROG_TYPE_RAW_TRACEPOINT, "r0 = 0; exit"), on
 * raw_syscalls:sys_enter and sys_exit, the hooks of fsslower's tracepoint method. bpftrace
 * 0.17 has no raw tracepoints. Prints "ready" once both are attached, then waits for SIGINT or
 * SIGTERM; exit 1 with one line when the kernel refuses them.
 *
 *   raw_floor
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>

static void on_signal(int sig)
{
	(void)sig;
}

/* Load an empty raw tracepoint program called name and attach it to tracepoint tp: the link
 * fd, or -1 after printing why. */
static int attach_empty(const char *name, const char *tp)
{
	const struct bpf_insn insns[] = {
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .imm = 0 },
		{ .code = BPF_JMP | BPF_EXIT },
	};
	int prog, link;

	prog = bpf_prog_load(BPF_PROG_TYPE_RAW_TRACEPOINT, name, "GPL", insns, 2, NULL);
	if (prog < 0) {
		fprintf(stderr, "raw_floor: cannot load %s: %s\n", name, strerror(errno));
		return -1;
	}
	link = bpf_raw_tracepoint_open(tp, prog);
	if (link < 0)
		fprintf(stderr, "raw_floor: cannot attach %s to %s: %s\n", name, tp, strerror(errno));
	return link;
}

int main(void)
{
	struct sigaction sa = { .sa_handler = on_signal };

	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	if (attach_empty("floor_sys_enter", "sys_enter") < 0 ||
	    attach_empty("floor_sys_exit", "sys_exit") < 0)
		return 1;
	printf("ready\n");
	fflush(stdout);
	pause();
	return 0;
}
