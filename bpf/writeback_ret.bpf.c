// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* writeback-ret: return values of ext4_writepages, do_writepages or any int-returning
 * kernel function, call by call. Everything lives in the writeback layer's header. */
#include "lib/common.bpf.h"
#include "lib/writeback.bpf.h"

char LICENSE[] SEC("license") = "GPL";
