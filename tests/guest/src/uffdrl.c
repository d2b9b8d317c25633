// SPDX-License-Identifier: GPL-2.0
/*
 * uffdrl: a readlink() that sleeps inside the kernel until told to go on.
 *
 * usage: uffdrl [--fstatat|--statx] PATH RELEASEFILE
 *
 * The buffer is a page registered with userfaultfd, so the readlink()'s
 * copy_to_user() faults and the task sleeps in the middle of
 * vfs_readlink() (in vfsfast's replacement, when it is enabled) until the
 * fault is resolved.  Prints "blocked" once the fault has arrived, waits
 * for RELEASEFILE to exist, resolves the fault and checks the result
 * against a plain readlink() of PATH done at start.
 * Prints "ok <len>" and exits 0, "mismatch ..." and exits 1, or exits 2 on
 * usage error or when userfaultfd is not available.
 *
 * With --fstatat, the call is newfstatat(fd, "", page, AT_EMPTY_PATH) of
 * PATH opened read-only, and the result is checked against the fstat
 * system call of the same descriptor.  With --statx, the call is
 * statx(fd, "", AT_EMPTY_PATH, STATX_BASIC_STATS, page), checked against
 * statx() of PATH by name.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/userfaultfd.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

static const char *path;
static char *page;
static long result;
static int result_errno;
static int stat_fd = -1;
static int use_statx;
/*
 * The empty name, read once before the call: a fast path reads its first
 * byte with page faults disabled and hands the call to stock if the page
 * is not mapped yet, and then the task would sleep in stock's code.
 */
static char empty_name[1];

static void *reader(void *arg)
{
	(void)arg;
	if (__atomic_load_n(&empty_name[0], __ATOMIC_RELAXED))
		return NULL;
	if (stat_fd >= 0 && use_statx)
		result = syscall(SYS_statx, stat_fd, empty_name, AT_EMPTY_PATH,
				 STATX_BASIC_STATS, page);
	else if (stat_fd >= 0)
		result = syscall(SYS_newfstatat, stat_fd, empty_name, page, AT_EMPTY_PATH);
	else
		result = readlink(path, page, 4096);
	result_errno = errno;
	return NULL;
}

static void die(const char *what)
{
	perror(what);
	exit(2);
}

int main(int argc, char **argv)
{
	struct uffdio_api api = { .api = UFFD_API };
	struct uffdio_register reg;
	struct uffdio_zeropage zero;
	struct uffd_msg msg;
	struct pollfd pfd;
	char expect[4096];
	long elen, result_expect;
	pthread_t t;
	int uffd;

	if (argc == 4 && (!strcmp(argv[1], "--fstatat") || !strcmp(argv[1], "--statx"))) {
		use_statx = !strcmp(argv[1], "--statx");
		argv++;
		argc--;
		stat_fd = open(argv[1], O_RDONLY);
		if (stat_fd < 0)
			die(argv[1]);
	}
	if (argc != 3) {
		fprintf(stderr, "usage: uffdrl [--fstatat|--statx] PATH RELEASEFILE\n");
		return 2;
	}
	path = argv[1];
	if (stat_fd >= 0 && use_statx) {
		elen = syscall(SYS_statx, AT_FDCWD, path, 0, STATX_BASIC_STATS, expect) ?
			-1 : (long)sizeof(struct statx);
		result_expect = 0;
	} else if (stat_fd >= 0) {
		elen = syscall(SYS_fstat, stat_fd, expect) ? -1 : (long)sizeof(struct stat);
		result_expect = 0;
	} else {
		elen = readlink(path, expect, sizeof(expect));
		result_expect = elen;
	}
	if (elen < 0)
		die("readlink");
	page = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (page == MAP_FAILED)
		die("mmap");
	uffd = syscall(__NR_userfaultfd, O_CLOEXEC);
	if (uffd < 0 || ioctl(uffd, UFFDIO_API, &api))
		die("userfaultfd");
	reg.range.start = (unsigned long)page;
	reg.range.len = 4096;
	reg.mode = UFFDIO_REGISTER_MODE_MISSING;
	if (ioctl(uffd, UFFDIO_REGISTER, &reg))
		die("UFFDIO_REGISTER");
	if (pthread_create(&t, NULL, reader, NULL))
		die("pthread_create");
	pfd.fd = uffd;
	pfd.events = POLLIN;
	if (poll(&pfd, 1, 30000) != 1 || read(uffd, &msg, sizeof(msg)) != sizeof(msg) ||
	    msg.event != UFFD_EVENT_PAGEFAULT) {
		fprintf(stderr, "uffdrl: no fault arrived\n");
		return 2;
	}
	printf("blocked\n");
	fflush(stdout);
	while (access(argv[2], F_OK))
		usleep(20000);
	zero.range.start = (unsigned long)page;
	zero.range.len = 4096;
	zero.mode = 0;
	if (ioctl(uffd, UFFDIO_ZEROPAGE, &zero))
		die("UFFDIO_ZEROPAGE");
	pthread_join(t, NULL);
	if (result != result_expect || memcmp(page, expect, elen)) {
		printf("mismatch: got %ld (errno %d), want %ld\n", result,
		       result_errno, result_expect);
		return 1;
	}
	printf("ok %ld\n", result);
	return 0;
}
