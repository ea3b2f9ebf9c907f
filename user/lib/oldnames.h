/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Transitional (issue 23): the old names of what moved to cgroup.h and disk.h, for the callers
 * this change could not touch (measure.c, serve.c, the tools' main()), which reach it through
 * util.h. Delete this file and its #include in util.h once they call the new names and
 * include cgroup.h / disk.h themselves. Nothing else may use these names.
 */
#ifndef IOLAYER_OLDNAMES_H
#define IOLAYER_OLDNAMES_H

#include "cgroup.h"
#include "disk.h"

#define il_blk_cgroup_path il_cgroup_path           /* measure.c */
#define il_blk_throttle_rule il_cgroup_throttle_rule /* measure.c */
#define il_whole_disk il_disk_whole                 /* serve.c */
#define il_blk_cgroup_id il_cgroup_id               /* biosnoop.c main() */
#define il_blk_bio_based il_disk_bio_based          /* biolatency.c main() */
#define il_blk_any_bio_based il_disk_any_bio_based  /* biolatency.c main() */

#endif
