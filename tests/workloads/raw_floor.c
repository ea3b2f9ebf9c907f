/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The benchmark's floors for raw tracepoints (tools/bench): two empty programs, floor_sys_enter
 * and floor_sys_exit (BPF_PROG_TYPE_RAW_TRACEPOINT, "r0 = 0; exit"), on
 * raw_syscalls:sys_enter and sys_exit, the hooks of fsslower's tracepoint method. With -c
 * each reads the clock once first (bpf_ktime_get_ns(), what timing a call takes at the least
 * on each side), named floor_clk_enter and floor_clk_exit. bpftrace 0.17 has no raw
 * tracepoints. With -s, empty programs on the scheduler's sched_switch, sched_waking and
 * sched_wakeup instead (floor_switch, floor_waking, floor_wakeup): the floor of the time
 * split's hooks, which run there as raw (BTF) tracepoint programs too. Prints "ready" once all
 * are attached, then waits for SIGINT or SIGTERM; exit 1 with one line when the kernel refuses
 * them, 2 on a bad option.
 *
 *   raw_floor [-c | -s]
 */
#include <errno.h>
#include <stdbool.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>

static void on_signal(int sig)
{
	(void)sig;
}

/* Load a raw tracepoint program called name and attach it to tracepoint tp: empty, or with
 * clock a call of bpf_ktime_get_ns() before it returns 0. The link fd, or -1 after printing
 * why. */
static int attach_floor(const char *name, const char *tp, bool clock)
{
	const struct bpf_insn insns[] = {
		{ .code = BPF_JMP | BPF_CALL, .imm = BPF_FUNC_ktime_get_ns },
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .imm = 0 },
		{ .code = BPF_JMP | BPF_EXIT },
	};
	int prog, link;

	prog = bpf_prog_load(BPF_PROG_TYPE_RAW_TRACEPOINT, name, "GPL", insns + !clock, 3 - !clock,
			     NULL);
	if (prog < 0) {
		fprintf(stderr, "raw_floor: cannot load %s: %s\n", name, strerror(errno));
		return -1;
	}
	link = bpf_raw_tracepoint_open(tp, prog);
	if (link < 0)
		fprintf(stderr, "raw_floor: cannot attach %s to %s: %s\n", name, tp, strerror(errno));
	return link;
}

int main(int argc, char **argv)
{
	struct sigaction sa = { .sa_handler = on_signal };
	bool clock = false, sched = false;
	int c;

	while ((c = getopt(argc, argv, "cs")) != -1) {
		if (c != 'c' && c != 's') {
			fprintf(stderr, "usage: raw_floor [-c | -s]\n");
			return 2;
		}
		clock |= c == 'c';
		sched |= c == 's';
	}
	if (clock && sched) {
		fprintf(stderr, "raw_floor: -c and -s are two different floors: give one\n");
		return 2;
	}
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	if (sched) {
		if (attach_floor("floor_switch", "sched_switch", false) < 0 ||
		    attach_floor("floor_waking", "sched_waking", false) < 0 ||
		    attach_floor("floor_wakeup", "sched_wakeup", false) < 0)
			return 1;
	} else if (attach_floor(clock ? "floor_clk_enter" : "floor_sys_enter", "sys_enter", clock) < 0 ||
	    attach_floor(clock ? "floor_clk_exit" : "floor_sys_exit", "sys_exit", clock) < 0)
		return 1;
	printf("ready\n");
	fflush(stdout);
	pause();
	return 0;
}
