/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * slowdisk: a FUSE file system holding one disk image that answers like a slow disk.
 *
 *   slowdisk [--delay-us N] [--bw BYTES_PER_S] [--size MIB] [--image PATH] [-f] [-d] [-s]
 *            [-o OPT] MOUNTPOINT
 *
 * MOUNTPOINT/disk.img is a file of --size MiB (default 64) whose every read, write and fsync
 * takes --delay-us microseconds (default 2000) plus, with --bw, its length divided by the
 * bandwidth (bytes/s; K, M, G suffixes are powers of 1024). The requests model one
 * single-queue device: a mutex-protected "busy until" clock serialises them, so a request
 * that arrives while another is served waits for it, and two writers share the bandwidth.
 * Put a loop device over the file (losetup --direct-io=on) and the host has a slow disk:
 * tests/integration/slowdisk-lib.sh does that, docs/slowdisk.md tells how by hand.
 *
 * The file is opened direct_io (no page cache in the FUSE layer: each I/O that reaches the
 * file is one FUSE request, of up to max_write = 512 KiB: give the loop device a
 * max_sectors_kb of 512 and each block request is one request here). The data is kept in anonymous
 * memory, or with --image in PATH (created or grown to --size; use /dev/shm, so that the
 * daemon never waits for a real disk), mapped shared: it outlives the daemon.
 *
 * MOUNTPOINT/stats (read-only) counts what the device served, one "key value" a line:
 *   reads N, writes N, fsyncs N, read_bytes N, write_bytes N,
 *   min_us N, max_us N   the shortest and the longest request, arrival to answer.
 * Without -f the daemon goes to the background once mounted (FUSE's default); SIGTERM or
 * umount ends it. FUSE's -d (debug), -s (single-threaded) and -o OPTIONS are passed on.
 */
#define FUSE_USE_VERSION 31
#include <errno.h>
#include <fcntl.h>
#include <fuse.h>
#include <getopt.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>

#define DISK "/disk.img"
#define STATS "/stats"
#define MAX_IO (512 << 10)

static struct {
	uint64_t delay_ns, bw, size;
	char *data;
	pthread_mutex_t lock;
	uint64_t busy_until; /* CLOCK_MONOTONIC ns: when the device has served all it was given */
	uint64_t reads, writes, fsyncs, read_bytes, write_bytes, min_ns, max_ns;
} dev = { .delay_ns = 2000000, .size = 64ULL << 20, .lock = PTHREAD_MUTEX_INITIALIZER,
	  .min_ns = UINT64_MAX };

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

/* One request of len bytes (0: fsync) goes through the device: it starts when the device is
 * free, takes delay + len/bw, and the caller sleeps until it is done. *count is its kind's
 * counter, *bytes its byte counter (NULL for fsync). */
static void serve(size_t len, uint64_t *count, uint64_t *bytes)
{
	uint64_t arrival = now_ns(), start, done, lat;
	struct timespec ts;

	pthread_mutex_lock(&dev.lock);
	start = dev.busy_until > arrival ? dev.busy_until : arrival;
	done = start + dev.delay_ns + (dev.bw ? len * 1000000000ULL / dev.bw : 0);
	dev.busy_until = done;
	pthread_mutex_unlock(&dev.lock);

	ts.tv_sec = done / 1000000000ULL;
	ts.tv_nsec = done % 1000000000ULL;
	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
		;
	lat = now_ns() - arrival;

	pthread_mutex_lock(&dev.lock);
	(*count)++;
	if (bytes)
		*bytes += len;
	if (lat < dev.min_ns)
		dev.min_ns = lat;
	if (lat > dev.max_ns)
		dev.max_ns = lat;
	pthread_mutex_unlock(&dev.lock);
}

static int stats_text(char *buf, size_t size)
{
	int n;

	pthread_mutex_lock(&dev.lock);
	n = snprintf(buf, size,
		     "reads %llu\nwrites %llu\nfsyncs %llu\nread_bytes %llu\nwrite_bytes %llu\n"
		     "min_us %llu\nmax_us %llu\n",
		     (unsigned long long)dev.reads, (unsigned long long)dev.writes,
		     (unsigned long long)dev.fsyncs, (unsigned long long)dev.read_bytes,
		     (unsigned long long)dev.write_bytes,
		     (unsigned long long)(dev.min_ns == UINT64_MAX ? 0 : dev.min_ns / 1000),
		     (unsigned long long)(dev.max_ns / 1000));
	pthread_mutex_unlock(&dev.lock);
	return n;
}

static void *sd_init(struct fuse_conn_info *conn, struct fuse_config *cfg)
{
	cfg->direct_io = 1;	/* every read and write is a request to us, none is cached */
	cfg->kernel_cache = 0;
	cfg->attr_timeout = 0;
	conn->max_write = MAX_IO;
	return NULL;
}

static int sd_getattr(const char *path, struct stat *st, struct fuse_file_info *fi)
{
	memset(st, 0, sizeof(*st));
	if (!strcmp(path, "/")) {
		st->st_mode = S_IFDIR | 0755;
		st->st_nlink = 2;
	} else if (!strcmp(path, DISK)) {
		st->st_mode = S_IFREG | 0600;
		st->st_nlink = 1;
		st->st_size = dev.size;
		st->st_blksize = 4096;
		st->st_blocks = dev.size / 512;
	} else if (!strcmp(path, STATS)) {
		st->st_mode = S_IFREG | 0444;
		st->st_nlink = 1;
		st->st_size = 4096;
	} else {
		return -ENOENT;
	}
	st->st_uid = getuid();
	st->st_gid = getgid();
	return 0;
}

static int sd_readdir(const char *path, void *buf, fuse_fill_dir_t fill, off_t off,
		      struct fuse_file_info *fi, enum fuse_readdir_flags flags)
{
	if (strcmp(path, "/"))
		return -ENOENT;
	fill(buf, ".", NULL, 0, 0);
	fill(buf, "..", NULL, 0, 0);
	fill(buf, DISK + 1, NULL, 0, 0);
	fill(buf, STATS + 1, NULL, 0, 0);
	return 0;
}

static int sd_open(const char *path, struct fuse_file_info *fi)
{
	if (!strcmp(path, STATS))
		return (fi->flags & O_ACCMODE) == O_RDONLY ? 0 : -EACCES;
	if (strcmp(path, DISK))
		return -ENOENT;
	fi->direct_io = 1;
	return 0;
}

/* the part of [off, off + len) inside the disk */
static size_t clamp(off_t off, size_t len)
{
	if (off < 0 || (uint64_t)off >= dev.size)
		return 0;
	return (uint64_t)off + len > dev.size ? dev.size - off : len;
}

static int sd_read(const char *path, char *buf, size_t len, off_t off, struct fuse_file_info *fi)
{
	if (!strcmp(path, STATS)) {
		char text[512];
		int n = stats_text(text, sizeof(text));

		if (off >= n)
			return 0;
		len = len < (size_t)(n - off) ? len : (size_t)(n - off);
		memcpy(buf, text + off, len);
		return len;
	}
	len = clamp(off, len);
	serve(len, &dev.reads, &dev.read_bytes);
	memcpy(buf, dev.data + off, len);
	return len;
}

static int sd_write(const char *path, const char *buf, size_t len, off_t off,
		    struct fuse_file_info *fi)
{
	len = clamp(off, len);
	if (!len)
		return -ENOSPC;
	serve(len, &dev.writes, &dev.write_bytes);
	memcpy(dev.data + off, buf, len);
	return len;
}

/* A loop device's flush request arrives as fsync of the file: a cache flush, one delay. */
static int sd_fsync(const char *path, int datasync, struct fuse_file_info *fi)
{
	serve(0, &dev.fsyncs, NULL);
	return 0;
}

/* The disk's size is fixed: a truncate to it (open with O_TRUNC by a tool) is accepted. */
static int sd_truncate(const char *path, off_t size, struct fuse_file_info *fi)
{
	return strcmp(path, DISK) ? -EACCES : (uint64_t)size == dev.size ? 0 : -EPERM;
}

static const struct fuse_operations ops = {
	.init = sd_init,
	.getattr = sd_getattr,
	.readdir = sd_readdir,
	.open = sd_open,
	.read = sd_read,
	.write = sd_write,
	.fsync = sd_fsync,
	.truncate = sd_truncate,
};

static int usage(FILE *f, int status)
{
	fprintf(f, "usage: slowdisk [--delay-us N] [--bw BYTES_PER_S[K|M|G]] [--size MIB] "
		   "[--image PATH] [-f] [-d] [-s] [-o OPT] MOUNTPOINT\n"
		   "  MOUNTPOINT/disk.img: each read, write and fsync takes N us (default 2000)\n"
		   "  plus its length at the bandwidth, one request at a time; MOUNTPOINT/stats\n"
		   "  counts them. --size: 64 MiB by default; --image: keep the data in PATH.\n");
	return status;
}

/* "N" with an optional K, M or G (powers of 1024); 0 when not a number */
static uint64_t number(const char *s)
{
	char *end;
	unsigned long long v = strtoull(s, &end, 10);

	if (end == s || *s == '-')
		return 0;
	switch (*end) {
	case 'K': case 'k': v <<= 10; end++; break;
	case 'M': case 'm': v <<= 20; end++; break;
	case 'G': case 'g': v <<= 30; end++; break;
	}
	return *end ? 0 : v;
}

static char *map_image(const char *image)
{
	void *p;
	int fd;

	if (!image) {
		p = mmap(NULL, dev.size, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
		return p == MAP_FAILED ? NULL : p;
	}
	fd = open(image, O_RDWR | O_CREAT, 0600);
	if (fd < 0) {
		perror(image);
		return NULL;
	}
	struct stat st;
	if (fstat(fd, &st) || ((uint64_t)st.st_size < dev.size && ftruncate(fd, dev.size))) {
		perror(image);
		close(fd);
		return NULL;
	}
	p = mmap(NULL, dev.size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	return p == MAP_FAILED ? NULL : p;
}

int main(int argc, char **argv)
{
	static const struct option longs[] = {
		{ "delay-us", required_argument, NULL, 'D' },
		{ "bw", required_argument, NULL, 'B' },
		{ "size", required_argument, NULL, 'S' },
		{ "image", required_argument, NULL, 'I' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	const char *image = NULL;
	char *fargv[2 * argc + 4];
	int fargc = 0, opt;
	uint64_t v;

	fargv[fargc++] = argv[0];
	while ((opt = getopt_long(argc, argv, "fdso:h", longs, NULL)) != -1) {
		switch (opt) {
		case 'D':
			if (!(v = number(optarg)) && strcmp(optarg, "0"))
				return usage(stderr, 1);
			dev.delay_ns = v * 1000;
			break;
		case 'B':
			if (!(v = number(optarg)) && strcmp(optarg, "0"))
				return usage(stderr, 1);
			dev.bw = v;
			break;
		case 'S':
			if (!(v = number(optarg)))
				return usage(stderr, 1);
			dev.size = v << 20;
			break;
		case 'I': image = optarg; break;
		/* FUSE's own: foreground, debug, single-threaded, mount options */
		case 'f': fargv[fargc++] = "-f"; break;
		case 'd': fargv[fargc++] = "-d"; break;
		case 's': fargv[fargc++] = "-s"; break;
		case 'o': fargv[fargc++] = "-o"; fargv[fargc++] = optarg; break;
		case 'h': return usage(stdout, 0);
		default: return usage(stderr, 1);
		}
	}
	if (optind != argc - 1)
		return usage(stderr, 1);
	fargv[fargc++] = argv[optind];
	/* max_idle_threads: libfuse 3.14 warns when it is left at its default */
	fargv[fargc++] = "-o";
	fargv[fargc++] = "fsname=slowdisk,subtype=slowdisk,max_idle_threads=16";
	fargv[fargc] = NULL;

	dev.data = map_image(image);
	if (!dev.data) {
		fprintf(stderr, "slowdisk: cannot map %llu bytes\n", (unsigned long long)dev.size);
		return 1;
	}
	/* wake-ups on time: FUSE's worker threads inherit this timer slack (default 50 us) */
	prctl(PR_SET_TIMERSLACK, 1UL);
	return fuse_main(fargc, fargv, &ops, NULL);
}
