/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Who a cgroup path stands for: a container (Docker, containerd's CRI plugin, CRI-O, podman),
 * a Kubernetes pod, a systemd unit, from the path alone, as the runtimes and systemd name the
 * directories they make, with the cgroupfs driver and the systemd driver, on cgroup v1 (the
 * same path in every controller's hierarchy) and v2:
 *
 *   /docker/<64 hex>                                            docker:<id>
 *   /system.slice/docker-<64 hex>.scope                         docker:<id>
 *   /kubepods/burstable/pod<uid>/<64 hex>                       pod:<uid>/<id> (runtime unknown)
 *   /kubepods.slice/kubepods-burstable.slice/
 *     kubepods-burstable-pod<uid with _>.slice/cri-containerd-<64 hex>.scope
 *                                                               pod:<uid>/<id> (containerd)
 *   .../crio-<64 hex>.scope, /kubepods/.../pod<uid>/crio-<64 hex>   CRI-O
 *   /machine.slice/libpod-<64 hex>.scope, /libpod_parent/libpod-<64 hex>, libpod-<64 hex>.scope
 *                                                               podman:<id>
 *   /system.slice/redis.service                                 redis.service
 *   /user.slice/user-1000.slice/user@1000.service/app.slice/x.service
 *                                                               user@1000:x.service
 *
 * The innermost container of the path wins (a cgroup made inside a container is still that
 * container's); a pod's uid is kept with dashes (the systemd driver's underscores turned
 * back); a unit is the innermost component with a systemd unit suffix that is not a
 * container's scope. Pure: no file is read. Prefix il_cgident_.
 */
#ifndef IOLAYER_CGIDENT_H
#define IOLAYER_CGIDENT_H

#include <stdbool.h>
#include <stddef.h>
#include <json-c/json.h>

#define IL_CGIDENT_ID_LEN 64     /* hex digits of a container id */
#define IL_CGIDENT_UID_LEN 36    /* a pod uid with its dashes (a static pod's: 32 hex) */
#define IL_CGIDENT_UNIT_LEN 256  /* a unit's name (a path component: 255 bytes at most) */
#define IL_CGIDENT_SHORT_ID 12   /* hex digits of a container id in the short form, as
				  * `docker ps` and `crictl ps` show it */
#define IL_CGIDENT_SHORT_UID 8   /* characters of a pod uid in the short form */

/* The runtime that made a container's cgroup; IL_CG_RT_NONE: not a container. */
enum il_cg_runtime {
	IL_CG_RT_NONE, IL_CG_RT_DOCKER, IL_CG_RT_CONTAINERD, IL_CG_RT_CRIO, IL_CG_RT_PODMAN,
	IL_CG_RT_UNKNOWN, /* a container of a Kubernetes pod, cgroupfs driver: <pod>/<64 hex> */
};

/* What a cgroup path says; every string "" when the path does not say it. */
struct il_cgident {
	enum il_cg_runtime runtime;
	char container_id[IL_CGIDENT_ID_LEN + 1];   /* lower-case hex */
	char pod_uid[IL_CGIDENT_UID_LEN + 1];       /* with dashes */
	char unit[IL_CGIDENT_UNIT_LEN];             /* the innermost systemd unit */
	int user;                                   /* the uid of user@UID.service the unit is
						     * under, -1 when none */
};

/* Decode path (a cgroup path relative to its hierarchy's root, "/" the root; anything else,
 * "-" or "cgroup:ID", decodes to nothing) into *id. Returns whether it names anything: a
 * container, a pod or a unit. */
bool il_cgident_parse(const char *path, struct il_cgident *id);

/* The runtime's name: "docker", "containerd", "crio", "podman", "" (none, or unknown). */
const char *il_cgident_runtime_name(enum il_cg_runtime rt);

/* The short form of *id for a column: "docker:3f2a9c1b0d4e" (12 hex digits), "pod:3f1c2d4e/
 * 9a8b7c6d5e4f" (a pod's container: 8 characters of the uid), "pod:3f1c2d4e" (the pod's own
 * cgroup), "redis.service", "user@1000:x.service"; else path itself. Into buf, returns buf. */
const char *il_cgident_short(const struct il_cgident *id, const char *path, char *buf, size_t len);

/* The short form of a cgroup path (il_cgident_parse, then il_cgident_short). */
const char *il_cgident_short_of(const char *path, char *buf, size_t len);

/* Add to JSON object o the fields *id has: "runtime", "container_id", "pod_uid", "unit",
 * "user" (a number); none when it names nothing. */
void il_cgident_json_add(struct json_object *o, const struct il_cgident *id);

/* Whether the last component of path names the container whose id starts with prefix (hex,
 * lower or upper case, at least one digit): the directory the runtime made for it, not one
 * below it. */
bool il_cgident_dir_is_container(const char *path, const char *prefix);

#endif
