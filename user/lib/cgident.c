/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* Containers, pods and systemd units from cgroup paths (cgident.h). */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cgident.h"
#include "escape.h"

/* A container's directory as its runtime names it: prefix + 64 hex digits + suffix. */
static const struct {
	const char *prefix, *suffix;
	enum il_cg_runtime rt;
} container_dirs[] = {
	{ "docker-", ".scope", IL_CG_RT_DOCKER },          /* systemd driver */
	{ "cri-containerd-", ".scope", IL_CG_RT_CONTAINERD },
	{ "crio-", ".scope", IL_CG_RT_CRIO },
	{ "crio-", "", IL_CG_RT_CRIO },                    /* CRI-O, cgroupfs driver */
	{ "libpod-", ".scope", IL_CG_RT_PODMAN },
	{ "libpod-", "", IL_CG_RT_PODMAN },                /* podman, cgroupfs driver */
	{ "", "", IL_CG_RT_UNKNOWN },                      /* /docker/<id>, /kubepods/.../<id> */
};

static const char *const unit_suffixes[] = { ".service", ".scope", ".socket", ".mount", ".swap" };

static bool all_hex(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!isxdigit((unsigned char)s[i]))
			return false;
	return true;
}

static bool ends_with(const char *s, size_t n, const char *suffix)
{
	size_t k = strlen(suffix);

	return n >= k && !memcmp(s + n - k, suffix, k);
}

/* Component c (n bytes) as a container's directory: its runtime, the id into id (65 bytes);
 * IL_CG_RT_NONE when it is not one. */
static enum il_cg_runtime container_of(const char *c, size_t n, char *id)
{
	for (size_t i = 0; i < sizeof(container_dirs) / sizeof(container_dirs[0]); i++) {
		size_t p = strlen(container_dirs[i].prefix), s = strlen(container_dirs[i].suffix);

		if (n != p + IL_CGIDENT_ID_LEN + s || memcmp(c, container_dirs[i].prefix, p) ||
		    !ends_with(c, n, container_dirs[i].suffix) || !all_hex(c + p, IL_CGIDENT_ID_LEN))
			continue;
		for (int k = 0; k < IL_CGIDENT_ID_LEN; k++)
			id[k] = tolower((unsigned char)c[p + k]);
		id[IL_CGIDENT_ID_LEN] = 0;
		return container_dirs[i].rt;
	}
	return IL_CG_RT_NONE;
}

/* Component c (n bytes) as a pod's directory: "pod<uid>" (cgroupfs driver) or
 * "kubepods[-QOS]-pod<uid with _>.slice" (systemd driver); its uid, with dashes, into uid
 * (37 bytes). */
static bool pod_of(const char *c, size_t n, char *uid)
{
	const char *u;
	size_t k;

	if (ends_with(c, n, ".slice"))
		n -= 6;
	if (n > 3 && !memcmp(c, "pod", 3))
		u = c + 3;
	else if (n > 12 && !memcmp(c, "kubepods-", 9) && (u = memmem(c + 8, n - 8, "-pod", 4)))
		u += 4;
	else
		return false;
	k = n - (u - c);
	if (k < 32 || k > IL_CGIDENT_UID_LEN)
		return false;
	for (size_t i = 0; i < k; i++) {
		char ch = u[i] == '_' ? '-' : (char)tolower((unsigned char)u[i]);

		if (!isxdigit((unsigned char)ch) && ch != '-')
			return false;
		uid[i] = ch;
	}
	uid[k] = 0;
	return true;
}

static bool is_unit(const char *c, size_t n)
{
	for (size_t i = 0; i < sizeof(unit_suffixes) / sizeof(unit_suffixes[0]); i++)
		if (n > strlen(unit_suffixes[i]) && ends_with(c, n, unit_suffixes[i]))
			return true;
	return false;
}

bool il_cgident_parse(const char *path, struct il_cgident *id)
{
	const char *c = path, *slice = NULL, *prev = "";
	size_t slice_n = 0, prev_n = 0;

	memset(id, 0, sizeof(*id));
	id->user = -1;
	if (!path || path[0] != '/')
		return false;
	while (*c) {
		size_t n;
		char cid[IL_CGIDENT_ID_LEN + 1], uid[IL_CGIDENT_UID_LEN + 1];
		enum il_cg_runtime rt;

		while (*c == '/')
			c++;
		n = strcspn(c, "/");
		if (!n)
			break;
		if ((rt = container_of(c, n, cid)) != IL_CG_RT_NONE) {
			/* a bare id is Docker's under /docker, else a pod's of an unknown runtime */
			if (rt == IL_CG_RT_UNKNOWN && prev_n == 6 && !memcmp(prev, "docker", 6))
				rt = IL_CG_RT_DOCKER;
			id->runtime = rt;
			memcpy(id->container_id, cid, sizeof(cid));
		} else if (!id->runtime && pod_of(c, n, uid)) {
			memcpy(id->pod_uid, uid, sizeof(uid));
		} else if (!id->runtime && !id->pod_uid[0]) {
			unsigned user;
			int end = 0;

			if (sscanf(c, "user@%u.service%n", &user, &end) == 1 && (size_t)end == n)
				id->user = (int)user;
			if (is_unit(c, n))
				snprintf(id->unit, sizeof(id->unit), "%.*s", (int)n, c);
			else if (ends_with(c, n, ".slice"))
				slice = c, slice_n = n;
		}
		prev = c;
		prev_n = n;
		c += n;
	}
	if (id->runtime || id->pod_uid[0]) {
		id->unit[0] = 0; /* a container's scope or a pod's slice: their ids say it */
		id->user = -1;
	} else if (!id->unit[0] && slice) {
		snprintf(id->unit, sizeof(id->unit), "%.*s", (int)slice_n, slice);
	}
	return id->runtime || id->pod_uid[0] || id->unit[0];
}

const char *il_cgident_runtime_name(enum il_cg_runtime rt)
{
	static const char *const names[] = {
		[IL_CG_RT_DOCKER] = "docker", [IL_CG_RT_CONTAINERD] = "containerd",
		[IL_CG_RT_CRIO] = "crio", [IL_CG_RT_PODMAN] = "podman",
	};

	return rt < sizeof(names) / sizeof(names[0]) && names[rt] ? names[rt] : "";
}

const char *il_cgident_short(const struct il_cgident *id, const char *path, char *buf, size_t len)
{
	char user[24] = "";

	if (id->pod_uid[0] && id->container_id[0])
		snprintf(buf, len, "pod:%.*s/%.*s", IL_CGIDENT_SHORT_UID, id->pod_uid,
			 IL_CGIDENT_SHORT_ID, id->container_id);
	else if (id->pod_uid[0])
		snprintf(buf, len, "pod:%.*s", IL_CGIDENT_SHORT_UID, id->pod_uid);
	else if (id->container_id[0])
		snprintf(buf, len, "%s:%.*s", id->runtime == IL_CG_RT_UNKNOWN ? "container" :
			 il_cgident_runtime_name(id->runtime), IL_CGIDENT_SHORT_ID, id->container_id);
	else if (id->unit[0]) {
		if (id->user >= 0 && strncmp(id->unit, "user@", 5))
			snprintf(user, sizeof(user), "user@%d:", id->user);
		snprintf(buf, len, "%s%s", user, id->unit);
	} else
		snprintf(buf, len, "%s", path ? path : "-");
	return buf;
}

const char *il_cgident_short_of(const char *path, char *buf, size_t len)
{
	struct il_cgident id;

	il_cgident_parse(path, &id);
	return il_cgident_short(&id, path, buf, len);
}

void il_cgident_json_add(struct json_object *o, const struct il_cgident *id)
{
	if (id->container_id[0]) {
		json_object_object_add(o, "container_id", json_object_new_string(id->container_id));
		if (id->runtime != IL_CG_RT_UNKNOWN)
			json_object_object_add(o, "runtime",
					       json_object_new_string(il_cgident_runtime_name(id->runtime)));
	}
	if (id->pod_uid[0])
		json_object_object_add(o, "pod_uid", json_object_new_string(id->pod_uid));
	if (id->unit[0])
		il_json_add_name(o, "unit", id->unit, sizeof(id->unit));
	if (id->user >= 0)
		json_object_object_add(o, "user", json_object_new_int(id->user));
}

bool il_cgident_dir_is_container(const char *path, const char *prefix)
{
	const char *last = strrchr(path, '/');
	char cid[IL_CGIDENT_ID_LEN + 1];
	size_t k = strlen(prefix);

	last = last ? last + 1 : path;
	if (!k || k > IL_CGIDENT_ID_LEN || !all_hex(prefix, k) ||
	    container_of(last, strlen(last), cid) == IL_CG_RT_NONE)
		return false;
	for (size_t i = 0; i < k; i++)
		if (tolower((unsigned char)prefix[i]) != cid[i])
			return false;
	return true;
}
