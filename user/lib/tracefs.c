/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include "log.h"
#include "tracefs.h"

const char *il_tracefs(void)
{
	static const char *path;
	struct stat st;

	if (path)
		return path;
	if (!stat("/sys/kernel/tracing/events", &st)) {
		path = "/sys/kernel/tracing";
	} else if (!stat("/sys/kernel/debug/tracing/events", &st)) {
		path = "/sys/kernel/debug/tracing";
	} else if (!mount("nodev", "/sys/kernel/tracing", "tracefs", 0, NULL)) {
		il_debug("mounted tracefs at /sys/kernel/tracing");
		path = "/sys/kernel/tracing";
	}
	return path;
}

const char *il_tracefs_path(const char *name, char *buf, size_t len)
{
	const char *fs = il_tracefs();

	if (!fs)
		return NULL;
	snprintf(buf, len, "%s/%s", fs, name);
	return buf;
}

bool il_tracepoint_exists(const char *tp, char *why, size_t len)
{
	const char *colon = strchr(tp, ':');
	char path[512], rel[256];

	if (!il_tracefs()) {
		if (why && len)
			snprintf(why, len, "tracefs is not mounted and cannot be mounted");
		return false;
	}
	if (!colon || colon - tp > 120) {
		if (why && len)
			snprintf(why, len, "bad tracepoint name %s", tp);
		return false;
	}
	snprintf(rel, sizeof(rel), "events/%.*s/%s/id", (int)(colon - tp), tp, colon + 1);
	if (access(il_tracefs_path(rel, path, sizeof(path)), F_OK)) {
		if (why && len)
			snprintf(why, len, "tracepoint %s does not exist on this kernel", tp);
		return false;
	}
	return true;
}
