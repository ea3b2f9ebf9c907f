/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * hostile_names: files whose names hold terminal escapes, line breaks, CSV and JSON
 * metacharacters and bytes that are not UTF-8, written and fsynced by a process whose comm
 * is just as hostile; the known answers of the name escaping.
 *
 *   hostile_names [-g GOFILE] DIR
 *
 * Prints "pid PID", "comm HEX" and one "name HEX" line per file (the raw bytes in hex), then
 * (with -g) waits until GOFILE exists. Then, for each name in order: open(DIR/NAME, O_CREAT |
 * O_TRUNC | O_WRONLY), one 4096-byte write, fsync, close: 3 traced calls per file (O, W, F).
 * Exit 0 when every call succeeded, 1 otherwise.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/prctl.h>

/* Short (under 31 bytes), so that no tool has to cut them. */
static const char *names[] = {
	"esc-\x1b[31mred",        /* SGR: turns a terminal red */
	"osc-\x1b]0;pwned\x07",   /* OSC: sets the terminal's title */
	"nl-a\nb",
	"cr-a\rb",
	"tab-a\tb",
	"comma-a,b",
	"quote-a\"b",
	"backslash-a\\b",
	"bytes-\xff\xfe",
	"all-\x1b\n\r\t,\"\\\xff\xfe",
};

/* 15 bytes, the most a comm holds. */
static const char comm[] = "hn\x1b[1m\n\t,\"\\\xff";

static void hex(const char *label, const char *s)
{
	printf("%s ", label);
	for (; *s; s++)
		printf("%02x", (unsigned char)*s);
	printf("\n");
}

int main(int argc, char **argv)
{
	const char *gofile = NULL, *dir;
	static char buf[4096];
	char path[4096];
	int c, failed = 0;

	while ((c = getopt(argc, argv, "g:")) != -1) {
		if (c != 'g')
			goto usage;
		gofile = optarg;
	}
	if (optind != argc - 1)
		goto usage;
	dir = argv[optind];
	if (prctl(PR_SET_NAME, comm)) {
		perror("hostile_names: prctl");
		return 1;
	}
	printf("pid %d\n", getpid());
	hex("comm", comm);
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		hex("name", names[i]);
	fflush(stdout);
	while (gofile && access(gofile, F_OK))
		usleep(10000);
	memset(buf, 'x', sizeof(buf));
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		int fd;

		snprintf(path, sizeof(path), "%s/%s", dir, names[i]);
		fd = open(path, O_CREAT | O_TRUNC | O_WRONLY, 0644);
		if (fd < 0) {
			fprintf(stderr, "hostile_names: open: %s\n", strerror(errno));
			failed = 1;
			continue;
		}
		if (write(fd, buf, sizeof(buf)) != sizeof(buf) || fsync(fd))
			failed = 1;
		close(fd);
	}
	return failed;
usage:
	fprintf(stderr, "usage: hostile_names [-g GOFILE] DIR\n");
	return 2;
}
