// SPDX-License-Identifier: GPL-2.0
/*
 * fliptime: guest time of one module load or one sysfs write, for the
 * lab's load and flip table (vfsfast-lab fliptime).  In an icount guest
 * CLOCK_MONOTONIC counts instructions, and the clock jumps over idle
 * time to the next timer, so what a grace period waits for is counted
 * too: the figure is what the writer (systemd-modules-load, a script
 * flipping a knob) waits.
 *
 *   fliptime load MODULE.ko [PARAMS]   finit_module(), then "ns <n>"
 *   fliptime write FILE VALUE          open, write, close, then "ns <n>"
 *
 * Exit status: 0, or 1 with the errno printed when the call failed.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

int main(int argc, char **argv)
{
	long long t0, t1;
	int fd, ret, err = 0;

	if (argc >= 3 && !strcmp(argv[1], "load")) {
		fd = open(argv[2], O_RDONLY | O_CLOEXEC);
		if (fd < 0) {
			perror(argv[2]);
			return 1;
		}
		t0 = now_ns();
		ret = syscall(SYS_finit_module, fd, argc > 3 ? argv[3] : "", 0);
		t1 = now_ns();
		if (ret)
			err = errno;
		close(fd);
	} else if (argc == 4 && !strcmp(argv[1], "write")) {
		size_t len = strlen(argv[3]);

		t0 = now_ns();
		fd = open(argv[2], O_WRONLY | O_CLOEXEC);
		ret = fd < 0 ? -1 : (int)write(fd, argv[3], len);
		if (ret < 0)
			err = errno;
		if (fd >= 0)
			close(fd);
		t1 = now_ns();
	} else {
		fprintf(stderr, "usage: fliptime load MODULE.ko [PARAMS] | write FILE VALUE\n");
		return 2;
	}
	if (err) {
		fprintf(stderr, "fliptime: %s\n", strerror(err));
		printf("ns %lld error %d\n", t1 - t0, err);
		return 1;
	}
	printf("ns %lld\n", t1 - t0);
	return 0;
}
