// SPDX-License-Identifier: GPL-2.0
/*
 * abloop: the built-in system-call loops of vfsfast-ab.
 *
 * usage: abloop pipe|eventfd|socket ITERATIONS
 *        abloop sysfs-stat ITERATIONS [PATH]   stat() of a missing sysfs path
 *        abloop sysfs-read ITERATIONS [PATH]   open/read/close of a sysfs file
 *        abloop close-socket ITERATIONS NPROC  close(socket()) in NPROC processes
 *        abloop CALL ITERATIONS [PATH]         one call of what every process
 *                                              makes, on PATH (default /etc/passwd):
 *          fstatat-empty   fstatat(fd, "", AT_EMPTY_PATH) of an open PATH
 *          fstat           the fstat system call of it (glibc 2.33+ would make
 *                          fstat() the call above)
 *          statx-empty     statx(fd, "", AT_EMPTY_PATH, STATX_BASIC_STATS)
 *          access          access(PATH, R_OK)
 *          access-missing  access(PATH + "-missing", R_OK): ENOENT
 *          access-denied   access(PATH, X_OK): EACCES on a file without x bits
 *          read-file       open, read of up to 4096 bytes and close of PATH
 *                          (default /proc/filesystems)
 *          stat            stat(PATH): the path walk and getattr
 *          open-missing    open(PATH + "-missing", O_RDONLY): ENOENT
 *          open-notdir     open(PATH, O_RDONLY | O_DIRECTORY): ENOTDIR, refused
 *                          after the walk found it (root passes every
 *                          permission check, so this stands in for EACCES)
 *          lstat           lstat(PATH)
 *          stat-rel        stat() of PATH's last component, relative to its
 *                          directory (made the working directory first)
 *          stat-missing    stat(PATH + "-missing"): ENOENT
 *          access-x        access(PATH, X_OK) of an executable PATH
 *          open-close      open(PATH, O_RDONLY) and close()
 *          readdir         one whole read of the directory PATH: open,
 *                          getdents64() into 32 KiB until it returns 0,
 *                          close; every read must see as many entries as
 *                          the first (a fixed directory), and the warm-up
 *                          is 2 reads, not 1000
 *        abloop time COMMAND [ARG...]          run COMMAND, then print its wall time
 *
 * The loops print exactly one line: ns_per_op=<ns, 3 decimals> ops=<calls>
 * (close-socket: wall time of the whole run divided by ITERATIONS, each of
 * the NPROC processes doing ITERATIONS).  "time" prints runtime_s=<seconds>
 * after the command has exited, and exits with the command's status (128 +
 * signal when it was killed).  A failing call is exit 1 with the reason on
 * stderr: a loop that fails measures nothing; 2 is a usage error.
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
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/*
 * access() by its own number where the architecture has one (x86_64);
 * the generic table (arm64) has faccessat only, which is what the old
 * entry is in the kernel too: do_faccessat(AT_FDCWD, ...).
 */
static long access_call(const char *path, int mode)
{
#ifdef SYS_access
	return syscall(SYS_access, path, mode);
#else
	return syscall(SYS_faccessat, AT_FDCWD, path, mode);
#endif
}

#define WARMUP 1000
#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

static void print_usage(void)
{
	fprintf(stderr,
		"usage: abloop pipe|eventfd|socket ITERATIONS\n"
		"       abloop sysfs-stat ITERATIONS [PATH]\n"
		"       abloop sysfs-read ITERATIONS [PATH]\n"
		"       abloop close-socket ITERATIONS NPROC\n"
		"       abloop fstatat-empty|fstat|statx-empty|access|access-missing|\n"
		"              access-denied|read-file|stat|open-missing|open-notdir|\n"
		"              lstat|stat-rel|stat-missing|access-x|open-close|readdir\n"
		"              ITERATIONS [PATH]\n"
		"       abloop time COMMAND [ARG...]\n");
	exit(2);
}

static unsigned long parse_ulong(const char *s, unsigned long max)
{
	unsigned long v;
	char *end;

	if (!*s || *s == '-' || *s == '+')
		print_usage();
	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || *end || v < 1 || v > max)
		print_usage();
	return v;
}

static void die(const char *what)
{
	fprintf(stderr, "abloop: %s: %s\n", what, strerror(errno));
	exit(1);
}

static double now_ns(void)
{
	struct timespec t;

	if (clock_gettime(CLOCK_MONOTONIC, &t))
		die("clock_gettime");
	return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}

/* One write and one read through a pair of descriptors. */
static void rw_loop(int wfd, int rfd, size_t len, unsigned long n)
{
	uint64_t v = 1;
	unsigned long i;

	for (i = 0; i < n; i++) {
		if (write(wfd, &v, len) != (ssize_t)len)
			die("write");
		if (read(rfd, &v, len) != (ssize_t)len)
			die("read");
	}
}

static void stat_loop(const char *path, unsigned long n)
{
	struct stat st;
	unsigned long i;

	for (i = 0; i < n; i++) {
		if (stat(path, &st) == 0) {
			fprintf(stderr, "abloop: %s exists; sysfs-stat needs a missing path\n", path);
			exit(1);
		}
		if (errno != ENOENT)
			die(path);
	}
}

static void read_loop(const char *path, unsigned long n)
{
	char buf[256];
	unsigned long i;
	int fd;

	for (i = 0; i < n; i++) {
		fd = open(path, O_RDONLY);
		if (fd < 0)
			die(path);
		if (read(fd, buf, sizeof(buf)) < 0)
			die(path);
		close(fd);
	}
}

static void socket_loop(unsigned long n)
{
	unsigned long i;
	int fd;

	for (i = 0; i < n; i++) {
		fd = socket(AF_UNIX, SOCK_DGRAM, 0);
		if (fd < 0)
			die("socket");
		close(fd);
	}
}

static int run_time(char **argv)
{
	double t0 = now_ns();
	int status;
	pid_t pid;

	pid = fork();
	if (pid < 0)
		die("fork");
	if (pid == 0) {
		execvp(argv[0], argv);
		fprintf(stderr, "abloop: %s: %s\n", argv[0], strerror(errno));
		_exit(127);
	}
	if (waitpid(pid, &status, 0) < 0)
		die("waitpid");
	fflush(stdout);
	printf("runtime_s=%.6f\n", (now_ns() - t0) / 1e9);
	if (WIFSIGNALED(status))
		return 128 + WTERMSIG(status);
	return WEXITSTATUS(status);
}

static const char * const calls[] = {
	"fstatat-empty", "fstat", "statx-empty", "access", "access-missing",
	"access-denied", "read-file", "stat", "open-missing", "open-notdir",
	"lstat", "stat-rel", "stat-missing", "access-x", "open-close",
	"readdir",
};
#define CALL_READDIR 15

/*
 * One whole read of a directory; returns the entries it held.  The
 * buffer is getdents64()'s, as GNU find's and ls's are (32 KiB).
 */
static long read_dir(const char *path)
{
	static char buf[32768];
	long r, entries = 0;
	int fd;

	fd = syscall(SYS_openat, AT_FDCWD, path, O_RDONLY | O_DIRECTORY);
	if (fd < 0)
		return -1;
	while ((r = syscall(SYS_getdents64, fd, buf, sizeof(buf))) > 0) {
		long off = 0;

		while (off < r) {
			off += *(unsigned short *)(buf + off + 16);
			entries++;
		}
	}
	close(fd);
	return r < 0 ? -1 : entries;
}

/*
 * One of calls[] on @path, @n times; the system calls are made directly,
 * so that the C library of the build does not choose which one runs.
 */
static void call_loop(int c, const char *path, int fd, unsigned long n)
{
	static char buf[4096];
	struct statx stx;
	static long entries = -1;
	struct stat st;
	unsigned long i;
	long r = 0;
	int want = 0;

	for (i = 0; i < n; i++) {
		switch (c) {
		case 0:
			r = syscall(SYS_newfstatat, fd, "", &st, AT_EMPTY_PATH);
			break;
		case 1:
			r = syscall(SYS_fstat, fd, &st);
			break;
		case 2:
			r = syscall(SYS_statx, fd, "", AT_EMPTY_PATH,
				    STATX_BASIC_STATS, &stx);
			break;
		case 3:
		case 4:
			r = access_call(path, R_OK);
			want = c == 4 ? ENOENT : 0;
			break;
		case 5:
			r = access_call(path, X_OK);
			want = EACCES;
			break;
		case 6:
			fd = open(path, O_RDONLY);
			r = fd < 0 ? -1 : read(fd, buf, sizeof(buf));
			if (fd >= 0)
				close(fd);
			r = r < 0 ? -1 : 0;
			break;
		case 7:
			r = syscall(SYS_newfstatat, AT_FDCWD, path, &st, 0);
			break;
		case 8:
		case 9:
			r = syscall(SYS_openat, AT_FDCWD, path,
				    c == 9 ? O_RDONLY | O_DIRECTORY : O_RDONLY);
			want = c == 8 ? ENOENT : ENOTDIR;
			break;
		case 10:
			r = syscall(SYS_newfstatat, AT_FDCWD, path, &st,
				    AT_SYMLINK_NOFOLLOW);
			break;
		case 11:
		case 12:
			r = syscall(SYS_newfstatat, AT_FDCWD, path, &st, 0);
			want = c == 12 ? ENOENT : 0;
			break;
		case 13:
			r = access_call(path, X_OK);
			break;
		case 14:
			fd = syscall(SYS_openat, AT_FDCWD, path, O_RDONLY);
			r = fd < 0 ? -1 : close(fd);
			break;
		case CALL_READDIR:
			r = read_dir(path);
			if (r >= 0 && entries >= 0 && r != entries) {
				fprintf(stderr, "abloop: readdir %s: %ld entries, then %ld\n",
					path, entries, r);
				exit(1);
			}
			if (r >= 0)
				entries = r;
			r = r < 0 ? -1 : 0;
			break;
		}
		if (want ? r != -1 || errno != want : r != 0) {
			fprintf(stderr, "abloop: %s %s: %s\n", calls[c], path,
				r >= 0 ? "succeeded" : strerror(errno));
			exit(1);
		}
	}
}

int main(int argc, char **argv)
{
	const char *mode, *path = NULL;
	unsigned long n, nproc = 1, i;
	int fds[2], status, failed = 0;
	double t0, t1;

	if (argc < 3)
		print_usage();
	mode = argv[1];
	if (!strcmp(mode, "time"))
		return run_time(argv + 2);
	n = parse_ulong(argv[2], ULONG_MAX / 4);
	if (!strcmp(mode, "pipe") || !strcmp(mode, "eventfd") || !strcmp(mode, "socket")) {
		size_t len = 1;

		if (argc != 3)
			print_usage();
		if (mode[0] == 'p') {
			if (pipe(fds))
				die("pipe");
		} else if (mode[0] == 'e') {
			fds[0] = fds[1] = eventfd(0, 0);
			if (fds[0] < 0)
				die("eventfd");
			len = 8;
		} else if (socketpair(AF_UNIX, SOCK_STREAM, 0, fds)) {
			die("socketpair");
		}
		rw_loop(fds[1], fds[0], len, WARMUP);
		t0 = now_ns();
		rw_loop(fds[1], fds[0], len, n);
		t1 = now_ns();
	} else if (!strcmp(mode, "sysfs-stat") || !strcmp(mode, "sysfs-read")) {
		int st = mode[6] == 's';

		if (argc > 4)
			print_usage();
		path = argc == 4 ? argv[3] :
		       st ? "/sys/kernel/no-such-vfsfast-ab-path" : "/sys/devices/system/cpu/online";
		if (st)
			stat_loop(path, WARMUP);
		else
			read_loop(path, WARMUP);
		t0 = now_ns();
		if (st)
			stat_loop(path, n);
		else
			read_loop(path, n);
		t1 = now_ns();
	} else if (!strcmp(mode, "close-socket")) {
		if (argc != 4)
			print_usage();
		nproc = parse_ulong(argv[3], 4096);
		socket_loop(WARMUP);
		t0 = now_ns();
		for (i = 0; i < nproc; i++) {
			pid_t pid = fork();

			if (pid < 0)
				die("fork");
			if (pid == 0) {
				socket_loop(n);
				_exit(0);
			}
		}
		while (wait(&status) > 0)
			if (!WIFEXITED(status) || WEXITSTATUS(status))
				failed = 1;
		t1 = now_ns();
		if (failed) {
			fprintf(stderr, "abloop: a close-socket process failed\n");
			return 1;
		}
	} else {
		char missing[PATH_MAX];
		size_t c;
		int fd = -1;

		for (c = 0; c < ARRAY_SIZE(calls); c++)
			if (!strcmp(mode, calls[c]))
				break;
		if (c == ARRAY_SIZE(calls) || argc > 4)
			print_usage();
		path = argc == 4 ? argv[3] : c == 6 ? "/proc/filesystems" : "/etc/passwd";
		if (c == 4 || c == 8 || c == 12) {
			snprintf(missing, sizeof(missing), "%s-missing", path);
			path = missing;
		}
		if (c == 11) {
			const char *slash = strrchr(path, '/');

			if (slash) {
				snprintf(missing, sizeof(missing), "%.*s",
					 (int)(slash - path), path);
				if (chdir(missing[0] ? missing : "/"))
					die(missing);
				path = slash + 1;
			}
		}
		if (c <= 2) {
			fd = open(path, O_RDONLY);
			if (fd < 0)
				die(path);
		}
		call_loop(c, path, fd, c == CALL_READDIR ? 2 : WARMUP);
		t0 = now_ns();
		call_loop(c, path, fd, n);
		t1 = now_ns();
	}
	printf("ns_per_op=%.3f ops=%lu\n", (t1 - t0) / (double)n, n * nproc);
	return 0;
}
