/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* Unit tests: containers, pods and units from cgroup paths (user/lib/cgident.c), on the path
 * shapes of Docker, containerd (CRI), CRI-O, podman and systemd, with the cgroupfs and systemd
 * drivers, as found on v1 (blkio, memory, ...) and v2 hierarchies. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>
#include "cgident.h"

#define ID "3f2a9c1b0d4e5f60718293a4b5c6d7e8f90a1b2c3d4e5f60718293a4b5c6d7e8"
#define ID2 "9a8b7c6d5e4f30211203f4e5d6c7b8a99a8b7c6d5e4f30211203f4e5d6c7b8a9"
#define UID "3f1c2d4e-5a6b-7c8d-9e0f-a1b2c3d4e5f6"
#define UID_ "3f1c2d4e_5a6b_7c8d_9e0f_a1b2c3d4e5f6"

struct want {
	const char *path;
	enum il_cg_runtime rt;
	const char *container_id, *pod_uid, *unit;
	int user;
	const char *short_form;
};

static const struct want wants[] = {
	/* Docker, cgroupfs driver (v1 and v2), and systemd driver */
	{ "/docker/" ID, IL_CG_RT_DOCKER, ID, "", "", -1, "docker:3f2a9c1b0d4e" },
	{ "/system.slice/docker-" ID ".scope", IL_CG_RT_DOCKER, ID, "", "", -1, "docker:3f2a9c1b0d4e" },
	/* a cgroup made inside the container (systemd in it, or cgroup v2's leaf rule) */
	{ "/system.slice/docker-" ID ".scope/init.scope", IL_CG_RT_DOCKER, ID, "", "", -1, "docker:3f2a9c1b0d4e" },
	{ "/docker/" ID "/sub", IL_CG_RT_DOCKER, ID, "", "", -1, "docker:3f2a9c1b0d4e" },
	/* rootless Docker under a user's manager */
	{ "/user.slice/user-1000.slice/user@1000.service/user.slice/docker-" ID ".scope",
	  IL_CG_RT_DOCKER, ID, "", "", -1, "docker:3f2a9c1b0d4e" },
	/* Kubernetes, cgroupfs driver: the runtime is not in the path */
	{ "/kubepods/burstable/pod" UID "/" ID2, IL_CG_RT_UNKNOWN, ID2, UID, "", -1, "pod:3f1c2d4e/9a8b7c6d5e4f" },
	{ "/kubepods/besteffort/pod" UID "/" ID2, IL_CG_RT_UNKNOWN, ID2, UID, "", -1, "pod:3f1c2d4e/9a8b7c6d5e4f" },
	{ "/kubepods/pod" UID "/" ID2, IL_CG_RT_UNKNOWN, ID2, UID, "", -1, "pod:3f1c2d4e/9a8b7c6d5e4f" },
	{ "/kubepods/burstable/pod" UID, IL_CG_RT_NONE, "", UID, "", -1, "pod:3f1c2d4e" },
	{ "/kubepods/burstable/pod" UID "/crio-" ID2, IL_CG_RT_CRIO, ID2, UID, "", -1, "pod:3f1c2d4e/9a8b7c6d5e4f" },
	/* Kubernetes, systemd driver: containerd, CRI-O, dockershim */
	{ "/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod" UID_ ".slice/cri-containerd-" ID2 ".scope",
	  IL_CG_RT_CONTAINERD, ID2, UID, "", -1, "pod:3f1c2d4e/9a8b7c6d5e4f" },
	{ "/kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod" UID_ ".slice/crio-" ID2 ".scope",
	  IL_CG_RT_CRIO, ID2, UID, "", -1, "pod:3f1c2d4e/9a8b7c6d5e4f" },
	{ "/kubepods.slice/kubepods-pod" UID_ ".slice/docker-" ID2 ".scope",
	  IL_CG_RT_DOCKER, ID2, UID, "", -1, "pod:3f1c2d4e/9a8b7c6d5e4f" },
	{ "/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod" UID_ ".slice",
	  IL_CG_RT_NONE, "", UID, "", -1, "pod:3f1c2d4e" },
	/* a static pod: its uid is a 32-digit hash */
	{ "/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod0123456789abcdef0123456789abcdef.slice/cri-containerd-" ID ".scope",
	  IL_CG_RT_CONTAINERD, ID, "0123456789abcdef0123456789abcdef", "", -1, "pod:01234567/3f2a9c1b0d4e" },
	/* the QoS slices alone are units, not pods */
	{ "/kubepods.slice/kubepods-burstable.slice", IL_CG_RT_NONE, "", "", "kubepods-burstable.slice", -1,
	  "kubepods-burstable.slice" },
	/* containerd outside Kubernetes, CRI-O's container outside a pod */
	{ "/system.slice/cri-containerd-" ID ".scope", IL_CG_RT_CONTAINERD, ID, "", "", -1, "containerd:3f2a9c1b0d4e" },
	{ "/system.slice/crio-" ID ".scope", IL_CG_RT_CRIO, ID, "", "", -1, "crio:3f2a9c1b0d4e" },
	/* CRI-O's and podman's conmon are units, not the container */
	{ "/system.slice/crio-conmon-" ID ".scope", IL_CG_RT_NONE, "", "", "crio-conmon-" ID ".scope", -1,
	  "crio-conmon-" ID ".scope" },
	/* podman: systemd driver (root, machine.slice; rootless, the user's manager), cgroupfs */
	{ "/machine.slice/libpod-" ID ".scope", IL_CG_RT_PODMAN, ID, "", "", -1, "podman:3f2a9c1b0d4e" },
	{ "/machine.slice/libpod-" ID ".scope/container", IL_CG_RT_PODMAN, ID, "", "", -1, "podman:3f2a9c1b0d4e" },
	{ "/user.slice/user-1000.slice/user@1000.service/user.slice/libpod-" ID ".scope",
	  IL_CG_RT_PODMAN, ID, "", "", -1, "podman:3f2a9c1b0d4e" },
	{ "/libpod_parent/libpod-" ID, IL_CG_RT_PODMAN, ID, "", "", -1, "podman:3f2a9c1b0d4e" },
	/* a bare id elsewhere (nerdctl's /default/<id>): a container of an unknown runtime */
	{ "/default/" ID, IL_CG_RT_UNKNOWN, ID, "", "", -1, "container:3f2a9c1b0d4e" },
	/* systemd units: system, user, sessions, slices */
	{ "/system.slice/redis.service", IL_CG_RT_NONE, "", "", "redis.service", -1, "redis.service" },
	{ "/system.slice/system-getty.slice/getty@tty1.service", IL_CG_RT_NONE, "", "", "getty@tty1.service", -1,
	  "getty@tty1.service" },
	{ "/user.slice/user-1000.slice/user@1000.service/app.slice/app-foo.service", IL_CG_RT_NONE, "", "",
	  "app-foo.service", 1000, "user@1000:app-foo.service" },
	{ "/user.slice/user-1000.slice/user@1000.service/init.scope", IL_CG_RT_NONE, "", "", "init.scope", 1000,
	  "user@1000:init.scope" },
	{ "/user.slice/user-1000.slice/user@1000.service", IL_CG_RT_NONE, "", "", "user@1000.service", 1000,
	  "user@1000.service" },
	{ "/user.slice/user-1000.slice/session-3.scope", IL_CG_RT_NONE, "", "", "session-3.scope", -1,
	  "session-3.scope" },
	{ "/system.slice", IL_CG_RT_NONE, "", "", "system.slice", -1, "system.slice" },
	{ "/init.scope", IL_CG_RT_NONE, "", "", "init.scope", -1, "init.scope" },
	{ "/system.slice/var-lib-docker.mount", IL_CG_RT_NONE, "", "", "var-lib-docker.mount", -1, "var-lib-docker.mount" },
	/* what names nothing: the root, plain directories, ids that are not 64 hex digits,
	 * uids that are not uids, what is not a path */
	{ "/", IL_CG_RT_NONE, "", "", "", -1, "/" },
	{ "/process_api/70fdaea0233b40e98126ebda5d1cfd3e", IL_CG_RT_NONE, "", "", "", -1,
	  "/process_api/70fdaea0233b40e98126ebda5d1cfd3e" },
	{ "/docker/" ID "0", IL_CG_RT_NONE, "", "", "", -1, "/docker/" ID "0" },
	{ "/docker/3f2a9c1b0d4e", IL_CG_RT_NONE, "", "", "", -1, "/docker/3f2a9c1b0d4e" },
	{ "/system.slice/docker-" ID ".service", IL_CG_RT_NONE, "", "", "docker-" ID ".service", -1,
	  "docker-" ID ".service" },
	{ "/kubepods/burstable/podxyz", IL_CG_RT_NONE, "", "", "", -1, "/kubepods/burstable/podxyz" },
	{ "/a/.service", IL_CG_RT_NONE, "", "", "", -1, "/a/.service" },
	{ "-", IL_CG_RT_NONE, "", "", "", -1, "-" },
	{ "cgroup:1234", IL_CG_RT_NONE, "", "", "", -1, "cgroup:1234" },
	/* upper-case hex is taken and shown in lower case; repeated slashes are one */
	{ "//docker//3F2A9C1B0D4E5F60718293A4B5C6D7E8F90A1B2C3D4E5F60718293A4B5C6D7E8", IL_CG_RT_DOCKER, ID, "", "",
	  -1, "docker:3f2a9c1b0d4e" },
};

static void test_shapes(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(wants) / sizeof(wants[0]); i++) {
		const struct want *w = &wants[i];
		struct il_cgident id;
		char buf[512];
		bool any = il_cgident_parse(w->path, &id);

		assert_int_equal(id.runtime, w->rt);
		assert_string_equal(id.container_id, w->container_id);
		assert_string_equal(id.pod_uid, w->pod_uid);
		assert_string_equal(id.unit, w->unit);
		assert_int_equal(id.user, w->user);
		assert_int_equal(any, w->container_id[0] || w->pod_uid[0] || w->unit[0]);
		assert_string_equal(il_cgident_short(&id, w->path, buf, sizeof(buf)), w->short_form);
		assert_string_equal(il_cgident_short_of(w->path, buf, sizeof(buf)), w->short_form);
	}
}

static void test_json(void **state)
{
	struct il_cgident id;
	struct json_object *o;

	(void)state;
	il_cgident_parse("/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod" UID_
			 ".slice/cri-containerd-" ID2 ".scope", &id);
	o = json_object_new_object();
	il_cgident_json_add(o, &id);
	assert_string_equal(json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN),
			    "{\"container_id\":\"" ID2 "\",\"runtime\":\"containerd\",\"pod_uid\":\"" UID "\"}");
	json_object_put(o);

	il_cgident_parse("/kubepods/burstable/pod" UID "/" ID2, &id);
	o = json_object_new_object();
	il_cgident_json_add(o, &id);
	assert_string_equal(json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN),
			    "{\"container_id\":\"" ID2 "\",\"pod_uid\":\"" UID "\"}");
	json_object_put(o);

	il_cgident_parse("/user.slice/user-1000.slice/user@1000.service/app.slice/x.service", &id);
	o = json_object_new_object();
	il_cgident_json_add(o, &id);
	assert_string_equal(json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN),
			    "{\"unit\":\"x.service\",\"user\":1000}");
	json_object_put(o);

	/* a unit's name is any bytes but '/': escaped as every name in JSON */
	il_cgident_parse("/system.slice/a\"\n\xff.service", &id);
	o = json_object_new_object();
	il_cgident_json_add(o, &id);
	assert_non_null(json_object_object_get(o, "unit"));
	json_object_put(o);

	il_cgident_parse("/", &id);
	o = json_object_new_object();
	il_cgident_json_add(o, &id);
	assert_string_equal(json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN), "{}");
	json_object_put(o);
}

static void test_dir_is_container(void **state)
{
	(void)state;
	assert_true(il_cgident_dir_is_container("/docker/" ID, "3f2a"));
	assert_true(il_cgident_dir_is_container("/docker/" ID, "3F2A9C"));
	assert_true(il_cgident_dir_is_container("/docker/" ID, ID));
	assert_true(il_cgident_dir_is_container("/system.slice/docker-" ID ".scope", "3f2a9c1b0d4e"));
	assert_true(il_cgident_dir_is_container("/kubepods/burstable/pod" UID "/" ID2, "9a8b"));
	assert_false(il_cgident_dir_is_container("/docker/" ID, "3f2b"));
	assert_false(il_cgident_dir_is_container("/docker/" ID "/sub", "3f2a")); /* below it */
	assert_false(il_cgident_dir_is_container("/kubepods/burstable/pod" UID, "3f1c")); /* a pod */
	assert_false(il_cgident_dir_is_container("/docker/" ID, ""));
	assert_false(il_cgident_dir_is_container("/docker/" ID, "xyz"));
	assert_false(il_cgident_dir_is_container("/docker/" ID, ID "0"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_shapes),
		cmocka_unit_test(test_json),
		cmocka_unit_test(test_dir_is_container),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
