// SPDX-License-Identifier: GPL-2.0
/*
 * kfs: what the kernfs optimization changes, measured and listed.
 *
 * usage: kfs WORKLOAD ITERATIONS PATH
 *   miss      stat() of PATH, which must not exist (ENOENT)
 *   stat      stat() of PATH, which must exist
 *   read      open(), read() of up to 4096 bytes and close() of PATH
 *   readmany  the same, of each file named in the list PATH in turn
 * Prints exactly one line: ns_per_op=<ns, 3 decimals>.  Exit 1 if any
 * call does otherwise than expected.
 *
 * usage: kfs dump DIR...
 *   Every entry below each DIR (not crossing into other filesystems),
 *   sorted by name: path, a tab, type and mode, owner, link count, what
 *   access() says of R_OK, W_OK and X_OK, for a symlink what stat()
 *   finds through it, and for a readable regular file the size and an
 *   FNV-1a hash of its first 4096 bytes, or the errno of open() or
 *   read().  For the differential test: what path walks, permission
 *   checks and getattr return, and which file each open reaches.
 *
 * usage: kfs entries PATH...
 *   The dump's line of each PATH.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define WARMUP	200

static char buf[4096];

static void print_usage(void)
{
	fprintf(stderr, "usage: kfs miss|stat|read|readmany ITERATIONS PATH\n"
		"       kfs dump DIR...\n"
		"       kfs entries PATH...\n");
	exit(2);
}

static int readfile(const char *path, uint64_t *hash, long *len)
{
	uint64_t h = 14695981039346656037ULL;
	ssize_t n, i;
	int fd;

	fd = open(path, O_RDONLY | O_NONBLOCK);
	if (fd < 0)
		return -errno;
	n = read(fd, buf, sizeof(buf));
	if (n < 0) {
		n = -errno;
		close(fd);
		return n;
	}
	close(fd);
	for (i = 0; i < n; i++)
		h = (h ^ (unsigned char)buf[i]) * 1099511628211ULL;
	*hash = h;
	*len = n;
	return 0;
}

static int by_name(const struct dirent **a, const struct dirent **b)
{
	return strcmp((*a)->d_name, (*b)->d_name);
}

/* One line of a dump; the entry's stat, or a zeroed one if lstat fails. */
static void entry(const char *path, struct stat *st)
{
	uint64_t h;
	long len;
	int r;

	if (lstat(path, st)) {
		printf("%s\tlstat %d\n", path, errno);
		memset(st, 0, sizeof(*st));
		return;
	}
	printf("%s\t%o %u:%u %lu %c%c%c", path, st->st_mode, st->st_uid,
	       st->st_gid, (unsigned long)st->st_nlink,
	       access(path, R_OK) ? '-' : 'r',
	       access(path, W_OK) ? '-' : 'w',
	       access(path, X_OK) ? '-' : 'x');
	if (S_ISLNK(st->st_mode)) {
		struct stat target;

		if (stat(path, &target))
			printf(" -> err %d", errno);
		else
			printf(" -> %o %u:%u", target.st_mode, target.st_uid,
			       target.st_gid);
	}
	if (S_ISREG(st->st_mode) && (st->st_mode & 0444)) {
		r = readfile(path, &h, &len);
		if (r)
			printf(" err %d", -r);
		else
			printf(" %ld %016llx", len, (unsigned long long)h);
	}
	printf("\n");
}

static void dump(const char *dir, dev_t dev)
{
	struct dirent **names;
	char path[4096];
	struct stat st;
	int i, n;

	n = scandir(dir, &names, NULL, by_name);
	if (n < 0) {
		printf("%s\tscandir %d\n", dir, errno);
		return;
	}
	for (i = 0; i < n; i++) {
		const char *name = names[i]->d_name;

		if (!strcmp(name, ".") || !strcmp(name, "..")) {
			free(names[i]);
			continue;
		}
		snprintf(path, sizeof(path), "%s/%s", dir, name);
		free(names[i]);
		entry(path, &st);
		if (S_ISDIR(st.st_mode) && st.st_dev == dev)
			dump(path, dev);
	}
	free(names);
}

static int op(const char *workload, const char *path)
{
	struct stat st;
	uint64_t h;
	long len;

	if (!strcmp(workload, "miss"))
		return stat(path, &st) == -1 && errno == ENOENT;
	if (!strcmp(workload, "stat"))
		return stat(path, &st) == 0;
	return readfile(path, &h, &len) == 0;
}

int main(int argc, char **argv)
{
	struct timespec t0, t1;
	char **paths = NULL;
	long i, iters, npaths = 0;
	double ns;

	if (argc >= 3 && !strcmp(argv[1], "entries")) {
		struct stat st;

		for (i = 2; i < argc; i++)
			entry(argv[i], &st);
		return 0;
	}
	if (argc >= 3 && !strcmp(argv[1], "dump")) {
		struct stat st;

		for (i = 2; i < argc; i++) {
			if (stat(argv[i], &st)) {
				perror(argv[i]);
				return 1;
			}
			dump(argv[i], st.st_dev);
		}
		return 0;
	}
	if (argc != 4)
		print_usage();
	if (strcmp(argv[1], "miss") && strcmp(argv[1], "stat") &&
	    strcmp(argv[1], "read") && strcmp(argv[1], "readmany"))
		print_usage();
	iters = strtol(argv[2], NULL, 10);
	if (iters <= 0)
		print_usage();
	if (!strcmp(argv[1], "readmany")) {
		FILE *f = fopen(argv[3], "r");
		char line[4096];

		if (!f) {
			perror(argv[3]);
			return 1;
		}
		while (fgets(line, sizeof(line), f)) {
			line[strcspn(line, "\n")] = '\0';
			paths = realloc(paths, (npaths + 1) * sizeof(*paths));
			if (!paths)
				return 1;
			paths[npaths++] = strdup(line);
		}
		fclose(f);
		if (!npaths) {
			fprintf(stderr, "%s: empty list\n", argv[3]);
			return 1;
		}
	}
	for (i = 0; i < WARMUP + iters; i++) {
		const char *p = npaths ? paths[i % npaths] : argv[3];

		if (i == WARMUP)
			clock_gettime(CLOCK_MONOTONIC, &t0);
		if (!op(npaths ? "read" : argv[1], p)) {
			fprintf(stderr, "kfs %s: %s: unexpected result (errno %d)\n",
				argv[1], p, errno);
			return 1;
		}
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	ns = (t1.tv_sec - t0.tv_sec) * 1e9 + (t1.tv_nsec - t0.tv_nsec);
	printf("ns_per_op=%.3f\n", ns / iters);
	return 0;
}
