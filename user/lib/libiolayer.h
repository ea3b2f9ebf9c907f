/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * libiolayer: the shared user-space library of the iolayer tools (user/lib/, built into
 * build/libiolayer.a). Include this one header for all of it:
 *   tool.h      the tool scaffold: shared options, checks, load and output status
 *   layers.h    the table of layers and their lifecycle hooks; layers/LAYER.h each layer's
 *               settings, plans, readers, names
 *   layerset.h  a tool's layers: plans on the heap, choose, hooks, attach, detach
 *   plan.h      attach plans: methods, choosing, attaching    (probes.h, kretprobe.h)
 *   btf.h       the kernel's BTF      tracefs.h   tracefs      bpfobj.h   handles by name
 *   run.h       event loop, signals   drops.h     lost events  log.h      messages
 *   hist.h      log2 histograms       verdict.h   which layer is slow
 *   stacks.h    stacks and their names (ksyms.h: kernel symbols)
 *   mounts.h    the mount table       escape.h    hostile bytes in text, CSV, JSON
 *   blkview.h   the block layer's phase breakdown, as text and JSON
 *   path.h      a file's path from the names an event carries
 *   children.h  what a -p process's children (not traced) read and wrote meanwhile
 *   cgroup.h    cgroups: the io controller's hierarchy, ids, paths, throttle rules
 *   disk.h      disks: names, partitions, whole disks, bio-based or not
 *   util.h      errno names, numbers, dev numbers, preconditions, JSON printing
 */
#ifndef IOLAYER_LIBIOLAYER_H
#define IOLAYER_LIBIOLAYER_H

#include "blkview.h"
#include "bpfobj.h"
#include "cause.h"
#include "btf.h"
#include "cgfilter.h"
#include "cgident.h"
#include "cgroup.h"
#include "children.h"
#include "disk.h"
#include "drops.h"
#include "escape.h"
#include "hist.h"
#include "ksyms.h"
#include "kretprobe.h"
#include "layers.h"
#include "layerset.h"
#include "layers/block.h"
#include "layers/fs.h"
#include "layers/iowait.h"
#include "layers/who.h"
#include "layers/writeback.h"
#include "layers/split.h"
#include "log.h"
#include "measure.h"
#include "mounts.h"
#include "path.h"
#include "plan.h"
#include "probes.h"
#include "run.h"
#include "stacks.h"
#include "table.h"
#include "tool.h"
#include "tracefs.h"
#include "util.h"
#include "verdict.h"
#include "whoview.h"

#endif
