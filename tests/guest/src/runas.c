// SPDX-License-Identifier: GPL-2.0
/*
 * runas: run a command as an unprivileged user, with no capabilities, or
 * in a cgroup namespace of its own.
 *
 * usage: runas UID COMMAND [ARG...]
 *        runas -C CGROUPDIR COMMAND [ARG...]
 *        runas -c FILE
 *
 * The first form drops supplementary groups, then sets group and user ID
 * to UID.  -C moves the process into the cgroup2 directory CGROUPDIR and
 * then into a new cgroup namespace rooted there (busybox's unshare has no
 * -C).  -c copies FILE to standard output with read(2): a reader whose
 * command name is this binary's, whatever it is copied to.  Exits 2 if the
 * set-up fails; otherwise the command's own exit status.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <grp.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifndef CLONE_NEWCGROUP
#define CLONE_NEWCGROUP 0x02000000
#endif

static int copy(const char *path)
{
	char buf[4096];
	ssize_t n;
	int fd = open(path, O_RDONLY);

	if (fd < 0) {
		perror(path);
		return 1;
	}
	while ((n = read(fd, buf, sizeof(buf))) > 0)
		if (write(1, buf, n) != n)
			return 1;
	close(fd);
	return n < 0;
}

static int enter_cgroup(const char *dir)
{
	char path[4096];
	FILE *f;

	snprintf(path, sizeof(path), "%s/cgroup.procs", dir);
	f = fopen(path, "w");
	if (!f || fprintf(f, "%d\n", getpid()) < 0 || fclose(f)) {
		perror(path);
		return -1;
	}
	if (unshare(CLONE_NEWCGROUP)) {
		perror("unshare");
		return -1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	uid_t id;

	if (argc == 3 && !strcmp(argv[1], "-c"))
		return copy(argv[2]);
	if (argc < 3) {
		fprintf(stderr, "usage: runas UID|-C CGROUPDIR COMMAND [ARG...] | runas -c FILE\n");
		return 2;
	}
	if (!strcmp(argv[1], "-C")) {
		if (argc < 4 || enter_cgroup(argv[2]))
			return 2;
		execvp(argv[3], argv + 3);
		perror(argv[3]);
		return 127;
	}
	id = strtoul(argv[1], NULL, 10);
	if (setgroups(0, NULL) || setgid(id) || setuid(id) || !getuid()) {
		perror("runas");
		return 2;
	}
	execvp(argv[2], argv + 2);
	perror(argv[2]);
	return 127;
}
