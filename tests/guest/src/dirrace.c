// SPDX-License-Identifier: GPL-2.0
/*
 * dirrace: directory reads racing creates and unlinks.
 *
 * usage: dirrace DIR STABLE SECONDS [BUFSIZE]
 *
 * Makes STABLE files s<N> in DIR (which must be empty), then for SECONDS
 * a child creates and unlinks files c<N> (N of 0..STABLE-1, in a fixed
 * pseudo-random order) while the parent reads DIR whole, again and again,
 * by getdents64() into BUFSIZE bytes (default 4096: many calls a read,
 * so that ext4 refills its readdir tree between them as the directory
 * changes under it).  What POSIX promises and the kernel keeps: in each
 * read every file that exists throughout (each s<N>, . and ..) is
 * returned exactly once; a file created or unlinked meanwhile at most
 * once.  Output:
 *   dirrace: reads=R stable=S churn_seen=C stable_missing=M stable_twice=T churn_twice=U
 * (churn_seen: the child's files the reads returned, all reads together:
 * that the race ran at all).
 * Exit 0 iff M, T and U are 0; 1 otherwise or on error; 2 on usage.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "common.h"

static char buf[65536];

static void die(const char *what)
{
	fprintf(stderr, "dirrace: %s: %s\n", what, strerror(errno));
	exit(1);
}

static void churn(int dfd, long n)
{
	unsigned long x = 1;
	char name[32];

	for (;;) {
		x = x * 6364136223846793005UL + 1442695040888963407UL;
		snprintf(name, sizeof(name), "c%lu", (x >> 33) % n);
		if (unlinkat(dfd, name, 0) && errno == ENOENT) {
			int fd = openat(dfd, name, O_CREAT | O_WRONLY, 0644);

			if (fd < 0)
				die(name);
			close(fd);
		}
	}
}

int main(int argc, char **argv)
{
	long n, secs, size = 4096, reads = 0, missing = 0, twice = 0, ctwice = 0;
	long churned_seen = 0;
	unsigned char *seen_s, *seen_c;
	char name[32];
	time_t end;
	pid_t pid;
	int dfd, fd, status;
	long i, r, off;

	if (argc < 4 || argc > 5) {
		fprintf(stderr, "usage: dirrace DIR STABLE SECONDS [BUFSIZE]\n");
		return 2;
	}
	n = atol(argv[2]);
	secs = atol(argv[3]);
	if (argc == 5)
		size = atol(argv[4]);
	if (n < 1 || secs < 1 || size < 64 || size > (long)sizeof(buf)) {
		fprintf(stderr, "usage: dirrace DIR STABLE SECONDS [BUFSIZE]\n");
		return 2;
	}
	dfd = open(argv[1], O_RDONLY | O_DIRECTORY);
	if (dfd < 0)
		die(argv[1]);
	for (i = 0; i < n; i++) {
		snprintf(name, sizeof(name), "s%ld", i);
		fd = openat(dfd, name, O_CREAT | O_EXCL | O_WRONLY, 0644);
		if (fd < 0)
			die(name);
		close(fd);
	}
	seen_s = calloc(n + 2, 1);
	seen_c = calloc(n, 1);
	if (!seen_s || !seen_c)
		die("calloc");
	pid = fork();
	if (pid < 0)
		die("fork");
	if (pid == 0)
		churn(dfd, n);
	end = time(NULL) + secs;
	while (time(NULL) < end) {
		memset(seen_s, 0, n + 2);
		memset(seen_c, 0, n);
		fd = open(argv[1], O_RDONLY | O_DIRECTORY);
		if (fd < 0)
			die(argv[1]);
		while ((r = syscall(SYS_getdents64, fd, buf, size)) > 0) {
			for (off = 0; off < r; off += *(unsigned short *)(buf + off + 16)) {
				const char *d = buf + off + 19;
				unsigned char *slot;
				int churned = d[0] == 'c';

				if (!strcmp(d, "."))
					slot = &seen_s[n];
				else if (!strcmp(d, ".."))
					slot = &seen_s[n + 1];
				else if (d[0] == 's')
					slot = &seen_s[atol(d + 1)];
				else
					slot = &seen_c[atol(d + 1)];
				churned_seen += churned;
				if (*slot && churned)
					ctwice++;
				else if (*slot)
					twice++;
				*slot = 1;
			}
		}
		if (r < 0)
			die("getdents64");
		close(fd);
		for (i = 0; i < n + 2; i++)
			missing += !seen_s[i];
		reads++;
	}
	kill(pid, SIGKILL);
	waitpid(pid, &status, 0);
	printf("dirrace: reads=%ld stable=%ld churn_seen=%ld stable_missing=%ld stable_twice=%ld churn_twice=%ld\n",
	       reads, n, churned_seen, missing, twice, ctwice);
	return missing || twice || ctwice;
}
