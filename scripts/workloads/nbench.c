// SPDX-License-Identifier: GPL-2.0
/*
 * nbench: cost of one small I/O operation, the calls that go through
 * fsnotify on every kernel (fsnotify_modify() and fsnotify_access() after
 * each successful write and read).
 *
 * usage: nbench WORKLOAD ITERATIONS [DIR]
 *   write    pwrite() of 1 byte to a file in DIR (default /tmp)
 *   read     pread() of 1 byte from a file in DIR
 *   watched  pwrite() as "write", while an inotify watch on another file
 *            of the same filesystem makes its superblock a watched one
 *   pipe     write() then read() of 1 byte through a pipe
 *   socket   write() then read() of 1 byte through an AF_UNIX socketpair
 *   eventfd  write() then read() of an eventfd counter
 *   pipewatched  "pipe", while an inotify watch on another pipe (through
 *            /proc/self/fd) makes pipefs a watched superblock: the case
 *            where only the checks inside fsnotify() can return early
 *
 * usage: nbench exec|execwatched OPS COMMAND [ARG...]
 *   runs COMMAND once (its stdout to /dev/null) and divides its elapsed
 *   time by OPS, the operations it is known to perform (hackbench's
 *   messages); exit 1 if it fails.  execwatched first puts an inotify
 *   watch on a pipe of its own, as pipewatched does, so that every pipe
 *   COMMAND makes is on a watched superblock
 *
 * Prints exactly one line: ns_per_op=<ns, 3 decimals>.  Exit 1 if any call
 * fails or moves another number of bytes than asked, 2 on usage error.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/inotify.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define WARMUP	1000

static void bad_args(void)
{
	fprintf(stderr, "usage: nbench write|read|watched|pipe|socket|eventfd|pipewatched ITERATIONS [DIR]\n"
		"       nbench exec|execwatched OPS COMMAND [ARG...]\n");
	exit(2);
}

static void die(const char *what)
{
	fprintf(stderr, "nbench: %s: %s\n", what, strerror(errno));
	exit(1);
}

static int wfd = -1, rfd = -1;
static uint64_t one = 1;

static void op_write(void)
{
	if (pwrite(wfd, "x", 1, 0) != 1)
		die("pwrite");
}

static void op_read(void)
{
	char c;

	if (pread(wfd, &c, 1, 0) != 1)
		die("pread");
}

static void op_pair(void)
{
	char c;

	if (write(wfd, "x", 1) != 1)
		die("write");
	if (read(rfd, &c, 1) != 1)
		die("read");
}

static void op_eventfd(void)
{
	uint64_t v;

	if (write(wfd, &one, sizeof(one)) != sizeof(one))
		die("eventfd write");
	if (read(wfd, &v, sizeof(v)) != sizeof(v) || v != 1)
		die("eventfd read");
}

static void open_file(const char *dir, const char *name)
{
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	wfd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
	if (wfd < 0 || pwrite(wfd, "x", 1, 0) != 1)
		die(path);
}

/* An inotify watch on a pipe (through /proc/self/fd): pipefs is watched. */
static void watch_a_pipe(void)
{
	char path[64];
	int fds[2], ifd;

	if (pipe(fds))
		die("pipe");
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fds[0]);
	ifd = inotify_init1(IN_NONBLOCK);
	if (ifd < 0 || inotify_add_watch(ifd, path, IN_MODIFY) < 0)
		die("inotify on a pipe");
}

static double elapsed_ns(const struct timespec *t0)
{
	struct timespec t1;

	clock_gettime(CLOCK_MONOTONIC, &t1);
	return (t1.tv_sec - t0->tv_sec) * 1e9 + (t1.tv_nsec - t0->tv_nsec);
}

static int run_command(unsigned long ops, char **argv)
{
	struct timespec t0;
	int status, devnull;
	pid_t pid;
	double ns;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	pid = fork();
	if (pid < 0)
		die("fork");
	if (!pid) {
		devnull = open("/dev/null", O_WRONLY);
		if (devnull < 0 || dup2(devnull, 1) < 0)
			die("/dev/null");
		execvp(argv[0], argv);
		die(argv[0]);
	}
	if (waitpid(pid, &status, 0) != pid)
		die("waitpid");
	ns = elapsed_ns(&t0);
	if (!WIFEXITED(status) || WEXITSTATUS(status)) {
		fprintf(stderr, "nbench: %s failed (status 0x%x)\n", argv[0], status);
		return 1;
	}
	printf("ns_per_op=%.3f\n", ns / ops);
	return 0;
}

int main(int argc, char **argv)
{
	const char *dir = argc > 3 ? argv[3] : "/tmp";
	unsigned long iters, i;
	struct timespec t0;
	void (*op)(void);
	char path[PATH_MAX];
	int fds[2], ifd;
	char *end;
	double ns;

	if (argc < 3)
		bad_args();
	errno = 0;
	iters = strtoul(argv[2], &end, 10);
	if (errno || *end || !iters || argv[2][0] == '-')
		bad_args();
	if (!strcmp(argv[1], "exec") || !strcmp(argv[1], "execwatched")) {
		if (argc < 4)
			bad_args();
		if (!strcmp(argv[1], "execwatched"))
			watch_a_pipe();
		return run_command(iters, argv + 3);
	}
	if (argc > 4)
		bad_args();

	if (!strcmp(argv[1], "write") || !strcmp(argv[1], "watched")) {
		open_file(dir, "nbench.data");
		op = op_write;
		if (argv[1][0] == 'w' && argv[1][1] == 'a') {
			snprintf(path, sizeof(path), "%s/nbench.watched", dir);
			if (close(open(path, O_RDWR | O_CREAT, 0600)))
				die(path);
			ifd = inotify_init1(IN_NONBLOCK);
			if (ifd < 0 || inotify_add_watch(ifd, path, IN_MODIFY) < 0)
				die("inotify");
		}
	} else if (!strcmp(argv[1], "read")) {
		open_file(dir, "nbench.data");
		op = op_read;
	} else if (!strcmp(argv[1], "pipe") || !strcmp(argv[1], "pipewatched")) {
		if (argv[1][4] == 'w')
			watch_a_pipe();
		if (pipe(fds))
			die("pipe");
		rfd = fds[0];
		wfd = fds[1];
		op = op_pair;
	} else if (!strcmp(argv[1], "socket")) {
		if (socketpair(AF_UNIX, SOCK_STREAM, 0, fds))
			die("socketpair");
		wfd = fds[0];
		rfd = fds[1];
		op = op_pair;
	} else if (!strcmp(argv[1], "eventfd")) {
		wfd = eventfd(0, 0);
		if (wfd < 0)
			die("eventfd");
		op = op_eventfd;
	} else {
		bad_args();
	}

	for (i = 0; i < WARMUP; i++)
		op();
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (i = 0; i < iters; i++)
		op();
	ns = elapsed_ns(&t0);
	printf("ns_per_op=%.3f\n", ns / iters);
	return 0;
}
