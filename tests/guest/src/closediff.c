// SPDX-License-Identifier: GPL-2.0
/*
 * closediff: what close(2) returns and what can be seen right after it,
 * knob off vs on.
 *
 * usage: closediff KNOB DIR
 *
 * Runs the same scenarios with the knob at 0 and at 1, each writing what
 * user space can observe once close() has returned: the return value and
 * errno of close() of a bad, a closed and an open descriptor; inotify's
 * events for a file opened, written and closed; whether another process
 * can take a flock() and a POSIX lock the closed descriptor held; a dup
 * still reading; EOF on a pipe and a socket whose other end closed;
 * epoll forgetting a closed descriptor; O_PATH, eventfd, memfd and
 * directory descriptors.  The two transcripts must be equal.
 *
 * One scenario has another thread asleep in read() of a pipe when its
 * read end is closed: that thread holds the file, so close() must not end
 * it, the write that wakes the reader must succeed, and the one after the
 * reader has returned must find no reader (EPIPE).
 *
 * Output: DIFF lines, then "closediff: lines=N mismatches=M".  Exit 0 iff
 * M == 0 and N > 0.
 *
 * usage: closediff --linger SECONDS
 *
 * Closes a TCP socket whose FIN cannot leave (the peer reads nothing and
 * its window is full) with SO_LINGER of SECONDS, so that the file's last
 * put sleeps that long: in task work after the system call on stock, in
 * the replacement when the knob is on.  Prints "closing" before close()
 * and "closed <ret> <ms>" after it; exits 0 iff close() returned 0.
 *
 * usage: closediff --park PARAMDIR FILE
 *
 * The fault-injection build, knob on: another thread, asleep in read() of
 * the regular file FILE (its buffer a userfaultfd page nobody has filled
 * yet), drops its reference while close() of the descriptor is parked
 * between filp_close() and the drop of its own (fi_close_park).  Exactly
 * one of the two puts must end the file, so once both are done the
 * flock() the descriptor held is gone and another open file description
 * takes it at once.  Prints "parked N, reader R, close C, flock after
 * both L"; exits 0 iff one close was parked, the reader read its byte,
 * close() returned 0 and the flock() was taken (L = 0).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <net/if.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/file.h>
#include <sys/inotify.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <linux/userfaultfd.h>
#include <poll.h>
#include <unistd.h>

static char *out[2][256];
static int nout[2];

static void say(int pass, const char *what, long v)
{
	char *s;

	if (nout[pass] >= 256 || asprintf(&s, "%s=%ld", what, v) < 0)
		exit(2);
	out[pass][nout[pass]++] = s;
}

/* close() of @fd: its return, and errno if it failed. */
static long cl(int fd)
{
	errno = 0;
	return close(fd) ? -errno : 0;
}

/* In a child: can it take @op on @path at once?  0 or errno. */
static long lock_from_child(const char *path, int posix)
{
	int status, fd;
	pid_t c = fork();

	if (c == 0) {
		struct flock fl = { .l_type = F_WRLCK, .l_whence = SEEK_SET };

		fd = open(path, O_RDWR);
		if (fd < 0)
			_exit(100);
		if (posix)
			_exit(fcntl(fd, F_SETLK, &fl) ? errno : 0);
		_exit(flock(fd, LOCK_EX | LOCK_NB) ? errno : 0);
	}
	if (c < 0 || waitpid(c, &status, 0) != c || !WIFEXITED(status))
		return -1;
	return WEXITSTATUS(status);
}

static int ioctl_nonblock(int fd, int on)
{
	int fl = fcntl(fd, F_GETFL);

	return fl < 0 ? -1 : fcntl(fd, F_SETFL, on ? fl | O_NONBLOCK : fl);
}

static void *blocked_reader(void *arg)
{
	char c;

	return (void *)(long)read(*(int *)arg, &c, 1);
}

/* close() of a pipe's read end while another thread sleeps reading it. */
static void close_under_reader(int pass)
{
	pthread_t t;
	void *rd;
	int p[2];

	if (pipe(p) || pthread_create(&t, NULL, blocked_reader, &p[0]))
		exit(2);
	usleep(100000);
	say(pass, "close(pipe read end, reader asleep)", cl(p[0]));
	say(pass, "write(wakes the reader)", write(p[1], "x", 1) < 0 ? -errno : 1);
	pthread_join(t, &rd);
	say(pass, "reader's read", (long)rd);
	say(pass, "write(no reader left)", write(p[1], "x", 1) < 0 ? -errno : 1);
	close(p[1]);
}

static void scenarios(int pass, const char *dir)
{
	char path[256], buf[4096];
	struct flock fl = { .l_type = F_WRLCK, .l_whence = SEEK_SET };
	struct epoll_event ev = { .events = EPOLLIN };
	int fd, fd2, in, ep, p[2], sv[2];
	ssize_t n;

	say(pass, "close(-1)", cl(-1));
	say(pass, "close(99999)", cl(99999));
	fd = open("/dev/null", O_RDONLY);
	say(pass, "close(open)", cl(fd));
	say(pass, "close(closed)", cl(fd));

	snprintf(path, sizeof(path), "%s/closediff.%d", dir, pass);
	in = inotify_init1(IN_NONBLOCK);
	fd = open(path, O_CREAT | O_RDWR | O_TRUNC, 0644);
	inotify_add_watch(in, path, IN_ALL_EVENTS);
	say(pass, "write", write(fd, "data", 4));
	say(pass, "close(written)", cl(fd));
	n = read(in, buf, sizeof(buf));
	for (char *q = buf; n > 0 && q < buf + n;) {
		struct inotify_event *e = (struct inotify_event *)q;

		say(pass, "inotify", e->mask);
		q += sizeof(*e) + e->len;
	}
	fd = open(path, O_RDONLY);
	say(pass, "close(read)", cl(fd));
	n = read(in, buf, sizeof(buf));
	for (char *q = buf; n > 0 && q < buf + n;) {
		struct inotify_event *e = (struct inotify_event *)q;

		say(pass, "inotify", e->mask);
		q += sizeof(*e) + e->len;
	}
	close(in);

	fd = open(path, O_RDWR);
	say(pass, "flock", flock(fd, LOCK_EX) ? -errno : 0);
	say(pass, "flock held, other", lock_from_child(path, 0));
	say(pass, "close(flocked)", cl(fd));
	say(pass, "flock after close, other", lock_from_child(path, 0));

	fd = open(path, O_RDWR);
	fd2 = open(path, O_RDWR);
	say(pass, "posix lock", fcntl(fd, F_SETLK, &fl) ? -errno : 0);
	say(pass, "posix held, other", lock_from_child(path, 1));
	say(pass, "close(other fd of the file)", cl(fd2));
	say(pass, "posix after close, other", lock_from_child(path, 1));
	close(fd);

	fd = open(path, O_RDONLY);
	fd2 = dup(fd);
	say(pass, "close(dup'd)", cl(fd));
	say(pass, "read(dup)", read(fd2, buf, sizeof(buf)));
	say(pass, "close(dup)", cl(fd2));

	if (pipe(p))
		exit(2);
	say(pass, "close(pipe write end)", cl(p[1]));
	say(pass, "read(pipe read end)", read(p[0], buf, 1));
	close(p[0]);
	close_under_reader(pass);

	if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv))
		exit(2);
	say(pass, "close(socket)", cl(sv[0]));
	say(pass, "recv(peer)", recv(sv[1], buf, 1, MSG_DONTWAIT));
	close(sv[1]);

	ep = epoll_create1(0);
	fd = eventfd(1, 0);
	say(pass, "epoll add", epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev));
	say(pass, "close(eventfd in epoll)", cl(fd));
	say(pass, "epoll_wait after close", epoll_wait(ep, &ev, 1, 0));
	close(ep);

	fd = open(path, O_PATH);
	say(pass, "close(O_PATH)", cl(fd));
	fd = memfd_create("closediff", 0);
	say(pass, "close(memfd)", cl(fd));
	fd = open(dir, O_RDONLY | O_DIRECTORY);
	say(pass, "close(dir)", cl(fd));
	say(pass, "unlink", unlink(path));
}

static int linger_close(int secs)
{
	struct sockaddr_in a = { .sin_family = AF_INET,
				 .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	struct linger l = { .l_onoff = 1, .l_linger = secs };
	socklen_t alen = sizeof(a);
	static char buf[65536];
	struct timeval t0, t1;
	struct ifreq ifr = { 0 };
	int ls, c, s, one = 1, ret;

	/* The guest's loopback may still be down. */
	ls = socket(AF_INET, SOCK_DGRAM, 0);
	strcpy(ifr.ifr_name, "lo");
	if (ls < 0 || ioctl(ls, SIOCGIFFLAGS, &ifr))
		return 2;
	ifr.ifr_flags |= IFF_UP;
	if (ioctl(ls, SIOCSIFFLAGS, &ifr))
		return 2;
	close(ls);
	ls = socket(AF_INET, SOCK_STREAM, 0);
	c = socket(AF_INET, SOCK_STREAM, 0);
	if (ls < 0 || c < 0 || bind(ls, (struct sockaddr *)&a, sizeof(a)) ||
	    listen(ls, 1) || getsockname(ls, (struct sockaddr *)&a, &alen) ||
	    connect(c, (struct sockaddr *)&a, sizeof(a)))
		return 2;
	s = accept(ls, NULL, NULL);
	if (s < 0 || ioctl_nonblock(c, one))
		return 2;
	/* Fill the peer's window and our send queue: the FIN then waits. */
	while (write(c, buf, sizeof(buf)) > 0)
		;
	if (setsockopt(c, SOL_SOCKET, SO_LINGER, &l, sizeof(l)))
		return 2;
	printf("closing\n");
	fflush(stdout);
	gettimeofday(&t0, NULL);
	ret = close(c) ? -errno : 0;
	gettimeofday(&t1, NULL);
	printf("closed %d %ld\n", ret, (t1.tv_sec - t0.tv_sec) * 1000 +
	       (t1.tv_usec - t0.tv_usec) / 1000);
	close(s);
	return ret ? 1 : 0;
}

static const char *park_dir;
static int park_fd, park_uffd;
static char *park_page;
static pthread_t park_reader;

static long param(const char *name, const char *set)
{
	char path[512], buf[64] = "";
	long v = -1;
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", park_dir, name);
	f = fopen(path, set ? "w" : "r");
	if (!f)
		return -1;
	if (set)
		v = fputs(set, f) < 0 ? -1 : 0;
	else if (fgets(buf, sizeof(buf), f))
		v = atol(buf);
	return fclose(f) ? -1 : v;
}

/* read() of the file into the userfaultfd page: asleep until it is filled. */
static void *uffd_reader(void *arg)
{
	return (void *)(long)read(*(int *)arg, park_page, 1);
}

/* Once the close is parked: fill the page, let the reader return, release. */
static void *waker(void *arg)
{
	struct uffdio_zeropage zero = {
		.range = { .start = (unsigned long)park_page, .len = 4096 },
	};
	long p0 = (long)arg;
	void *rd = (void *)-1L;
	int i;

	for (i = 0; i < 1000 && param("fi_close_parked", NULL) == p0; i++)
		usleep(10000);
	if (!ioctl(park_uffd, UFFDIO_ZEROPAGE, &zero))
		pthread_join(park_reader, &rd);
	param("fi_close_park", "\n");
	return rd;
}

static int parked_close(const char *file)
{
	struct uffdio_api api = { .api = UFFD_API };
	struct uffdio_register reg = { .mode = UFFDIO_REGISTER_MODE_MISSING };
	struct pollfd pfd;
	struct uffd_msg msg;
	long p0, c, after, parked;
	pthread_t w;
	void *rd;
	int fd2;

	park_fd = open(file, O_RDONLY);
	park_page = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	park_uffd = syscall(__NR_userfaultfd, O_CLOEXEC);
	if (park_fd < 0 || park_page == MAP_FAILED || park_uffd < 0 ||
	    ioctl(park_uffd, UFFDIO_API, &api) || flock(park_fd, LOCK_EX))
		return 2;
	reg.range.start = (unsigned long)park_page;
	reg.range.len = 4096;
	if (ioctl(park_uffd, UFFDIO_REGISTER, &reg) ||
	    pthread_create(&park_reader, NULL, uffd_reader, &park_fd))
		return 2;
	/* The reader holds its reference once its fault has arrived. */
	pfd.fd = park_uffd;
	pfd.events = POLLIN;
	if (poll(&pfd, 1, 30000) != 1 || read(park_uffd, &msg, sizeof(msg)) != sizeof(msg))
		return 2;
	p0 = param("fi_close_parked", NULL);
	if (p0 < 0 || param("fi_close_park", "clpark"))
		return 2;
	if (pthread_create(&w, NULL, waker, (void *)p0))
		return 2;
	/* Only this thread is named clpark: the others' closes go on. */
	prctl(PR_SET_NAME, "clpark");
	c = cl(park_fd);
	prctl(PR_SET_NAME, "closediff");
	pthread_join(w, &rd);
	fd2 = open(file, O_RDONLY);
	after = fd2 < 0 ? -errno : flock(fd2, LOCK_EX | LOCK_NB) ? -errno : 0;
	parked = param("fi_close_parked", NULL) - p0;
	printf("parked %ld, reader %ld, close %ld, flock after both %ld\n",
	       parked, (long)rd, c, after);
	return parked == 1 && (long)rd == 1 && c == 0 && after == 0 ? 0 : 1;
}

int main(int argc, char **argv)
{
	int kfd, pass, i, mismatches = 0;

	if (argc == 3 && !strcmp(argv[1], "--linger"))
		return linger_close(atoi(argv[2]));
	if (argc == 4 && !strcmp(argv[1], "--park")) {
		signal(SIGPIPE, SIG_IGN);
		park_dir = argv[2];
		return parked_close(argv[3]);
	}
	signal(SIGPIPE, SIG_IGN);
	if (argc != 3) {
		fprintf(stderr, "usage: closediff KNOB DIR | --linger SECONDS\n");
		return 2;
	}
	kfd = open(argv[1], O_WRONLY);
	if (kfd < 0)
		return 2;
	for (pass = 0; pass < 2; pass++) {
		if (pwrite(kfd, pass ? "1" : "0", 1, 0) != 1)
			return 2;
		scenarios(pass, argv[2]);
	}
	if (pwrite(kfd, "0", 1, 0) != 1)
		return 2;
	if (nout[0] != nout[1]) {
		printf("DIFF: %d lines off, %d on\n", nout[0], nout[1]);
		mismatches++;
	}
	for (i = 0; i < nout[0] && i < nout[1]; i++) {
		if (strcmp(out[0][i], out[1][i])) {
			printf("DIFF off: %s on: %s\n", out[0][i], out[1][i]);
			mismatches++;
		}
	}
	if (getenv("CLOSEDIFF_DUMP"))
		for (i = 0; i < nout[0]; i++)
			fprintf(stderr, "%s\n", out[0][i]);
	printf("closediff: lines=%d mismatches=%d\n", nout[0], mismatches);
	return mismatches || !nout[0] ? 1 : 0;
}
