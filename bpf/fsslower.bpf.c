// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* fsslower: slow read, write, open and fsync calls on ext4, xfs and btrfs, per thread.
 * All handlers live in the filesystem layer (lib/fs.bpf.h); user space picks which run. */
#define IL_NO_WHO /* no attribution: see lib/who.bpf.h */
#include "lib/common.bpf.h"
#include "lib/fs.bpf.h"

char LICENSE[] SEC("license") = "GPL";
