// SPDX-License-Identifier: GPL-2.0
/*
 * pseudowatch: which files without a lookup path deliver inotify events to
 * a watch placed through /proc/self/fd/<n>, the way people watch pipes.
 *
 * For each kind (pipe, socket, eventfd, memfd) it creates the file, adds
 * an inotify watch on /proc/self/fd/<n> for modify and access, writes and
 * reads once, and counts the events.  Prints one line:
 *   pipe=<n> socket=<n> eventfd=<n> memfd=<n>
 * Exit 1 if a file or watch cannot be set up.
 *
 * Each kind gets an inotify instance of its own, read once for exactly
 * the bytes queued (FIONREAD), then closed: every anonymous inode file
 * (eventfd, and the inotify fd itself) shares one inode, so a watch on an
 * eventfd also sees each read of the inotify fd, and draining until empty
 * would never end.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/inotify.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

static int ifd = -1;

static void die(const char *what)
{
	fprintf(stderr, "pseudowatch: %s: %s\n", what, strerror(errno));
	exit(1);
}

static void watch(int fd)
{
	char path[64];

	ifd = inotify_init1(IN_NONBLOCK);
	if (ifd < 0)
		die("inotify_init1");
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	if (inotify_add_watch(ifd, path, IN_MODIFY | IN_ACCESS) < 0)
		die(path);
}

/* Events queued so far; the instance is closed. */
static int drain(void)
{
	char buf[4096] __attribute__((aligned(8)));
	int n = 0, queued;
	ssize_t len = 0;
	char *p;

	if (ioctl(ifd, FIONREAD, &queued))
		die("FIONREAD");
	if (queued > (int)sizeof(buf)) {
		errno = EOVERFLOW;
		die("queued events");
	}
	if (queued > 0)
		len = read(ifd, buf, queued);
	if (len != queued)
		die("read inotify");
	for (p = buf; p < buf + len;
	     p += sizeof(struct inotify_event) + ((struct inotify_event *)p)->len)
		n++;
	close(ifd);
	ifd = -1;
	return n;
}

static int rw(int wfd, int rfd, const void *data, size_t len)
{
	char buf[8];

	if (write(wfd, data, len) != (ssize_t)len)
		die("write");
	if (rfd >= 0 && read(rfd, buf, len) != (ssize_t)len)
		die("read");
	return rfd >= 0 ? drain() : 0;
}

int main(void)
{
	uint64_t one = 1;
	int fds[2], efd, mfd;
	int pipe_n, sock_n, ev_n, mem_n;

	if (pipe(fds))
		die("pipe");
	watch(fds[1]);
	pipe_n = rw(fds[1], fds[0], "x", 1);

	if (socketpair(AF_UNIX, SOCK_STREAM, 0, fds))
		die("socketpair");
	watch(fds[0]);
	sock_n = rw(fds[0], fds[1], "x", 1);

	efd = eventfd(0, 0);
	if (efd < 0)
		die("eventfd");
	watch(efd);
	ev_n = rw(efd, efd, &one, sizeof(one));

	mfd = memfd_create("pseudowatch", 0);
	if (mfd < 0)
		die("memfd_create");
	watch(mfd);
	mem_n = rw(mfd, -1, "x", 1);
	if (pread(mfd, &one, 1, 0) != 1)
		die("pread memfd");
	mem_n += drain();

	printf("pipe=%d socket=%d eventfd=%d memfd=%d\n", pipe_n, sock_n, ev_n, mem_n);
	return 0;
}
