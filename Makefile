# SPDX-License-Identifier: GPL-2.0
#
# make                 build against the running kernel
# make KDIR=<headers>  build against any kernel headers tree
# make install         install into /lib/modules/<release>/updates and depmod,
#                      the vfsfast and vfsfast-ab commands into $(SBINDIR),
#                      vfsfast-ab's statistics into $(SHAREDIR) and its C
#                      workloads (scripts/workloads: abloop, rlbench, nbench,
#                      kfs, built with $(CC); ablat for --latency where
#                      clang and libbpf-dev are, unless LATENCY=no) into
#                      $(LIBEXECDIR); all three under $(prefix), /usr/local
#                      unless given (prefix=/usr for a package), each under
#                      $(DESTDIR) when given
# make install-scripts only the commands, statistics and workloads, as above
# make install-dkms-src only the DKMS source tree, $(DESTDIR)/usr/src/vfsfast-<version>
# make dkms-install    copy the sources to /usr/src/vfsfast-<version>, then
#                      dkms add, build and install for KERNELRELEASE
# make deb             the Debian packages vfsfast-dkms and vfsfast-tools,
#                      built in the lab's bookworm chroot, into deb-out/
# make deb-arm64       the same, and vfsfast-tools for arm64 (cross-built with
#                      dpkg-buildpackage -a arm64), its programs checked, and
#                      DKMS's build of vfsfast-dkms for Debian's arm64 6.12, 6.1
#                      and 7.2 headers and the cloud 6.12 and 6.1 ones
# make deb-arm64-guest the packages (as deb-arm64, without its DKMS cross
#                      builds) installed with apt-get on Debian trixie's arm64
#                      userland in a qemu-system-aarch64 guest (TCG) booting
#                      6.12-arm64: DKMS builds the module natively there, it is
#                      loaded, vfsfast status and vfsfast-ab run (slow: never
#                      part of check)
# make check           the test suite in the qemu lab (KERNELS="5.10 6.1 6.12 7.2
#                      6.1-cloud": Debian's four stock kernels and one of their
#                      cloud flavour; PROFILE=ci for CI's shorter stress loops)
# make check-legacy    the test suite on the lab-built legacy kernel (6.1 with
#                      fsnotify as before 5.8; built on first use, ~30 min),
#                      PROFILE=ci unless PROFILE is given
# make legacy-kernel   only build (or find cached) the legacy kernel and
#                      legacy-ref, the same 6.1 build without the revert
# make bench-legacy    the fsnotify benchmark on legacy and legacy-ref, with
#                      the share of upstream's saving the knobs recover
# make check-debug     the test suite on the lab-built debug kernels,
#                      5.10-debug and 6.12-debug (Debian's configs with KASAN,
#                      lockdep and friends; built on first use, hours on 2
#                      CPUs), PROFILE=ci unless PROFILE is given
# make debug-kernels   only build (or find cached) the two debug kernels
# make bench           the readlink benchmark in the qemu lab (bench, demo and
#                      real-programs: the four stock kernels unless KERNELS
#                      is given)
# make style           checkpatch.pl on the module sources, and the check that
#                      the module's rooms call only downwards (module/engine.h)
# make build-arm64     cross-build the module for Debian's arm64 6.12, 6.1 and
#                      7.2 and the cloud flavour of 6.12 and 6.1 in the lab's
#                      trixie, bookworm and sid chroots, with W=1 (warnings
#                      fail it), and show which backends its modinfo says are
#                      available
# make check-arm64     the test suite on those arm64 kernels, booted in
#                      qemu-system-aarch64 (TCG), PROFILE=ci unless given
# make demo            boot a stock kernel with vfsfast and show an A/B result
# make check-external LTP=<ltp checkout> FSTESTS=<fstests checkout>
#                      LTP's syscall tests and fstests' vfstest, built static in
#                      the release chroots, and fstests' generic tests (check,
#                      in the release's userland), every knob off vs on in the lab
#                      (KERNELS as for check); exit 2 naming the clone to run
#                      when a checkout is missing.  Never part of check: CI
#                      cannot fetch either suite
# make real-programs   real programs (lscpu, ps, find, ...) of each release,
#                      every optimization off vs on; tables into
#                      Documentation/results.md (about 10 min per kernel)

KERNELRELEASE ?= $(shell uname -r)
KDIR ?= /lib/modules/$(KERNELRELEASE)/build
# Debian's four stock kernels, and 6.1's cloud flavour for `check` (the
# cloud kernel whose proc_cgroup needed another way to css_set_lock); the
# other cloud kernels, 5.10-cloud, 6.12-cloud and 7.2-cloud, only when named.
STOCK_KERNELS := 5.10 6.1 6.12 7.2
KERNELS ?= $(STOCK_KERNELS) 6.1-cloud
# What the measuring targets run on: KERNELS when given, else the stock four.
MEASURE_KERNELS = $(if $(filter command line environment,$(origin KERNELS)),$(KERNELS),$(STOCK_KERNELS))
prefix ?= /usr/local
SBINDIR ?= $(prefix)/sbin
LIBEXECDIR ?= $(prefix)/libexec/vfsfast
SHAREDIR ?= $(prefix)/share/vfsfast
CC ?= cc
# For the C workloads only (a package build passes its hardening flags).
CFLAGS ?= -O2
# vfsfast-ab's workload programs, scripts/workloads/<name>.c (ablat apart).
WORKLOADS := abloop rlbench nbench kfs
# ablat, vfsfast-ab --latency's BPF helper, is built where clang and a
# libbpf for $(CC)'s target are found; LATENCY=no leaves it out whatever
# is installed (a package built with the pkg.vfsfast.nolatency profile, whose
# result must not depend on what else the build machine holds).
LATENCY ?= auto
PROFILE ?= full
LAB := $(CURDIR)/scripts/vfsfast-lab
VERSION := $(shell sed -n 's/^PACKAGE_VERSION="\(.*\)"/\1/p' $(CURDIR)/dkms.conf)
DKMS_SRC := /usr/src/vfsfast-$(VERSION)
DKMS_FILES := Kbuild Makefile dkms.conf module include

all: modules

modules:
	$(MAKE) -C $(KDIR) M=$(CURDIR) modules

install: modules install-scripts
	$(MAKE) -C $(KDIR) M=$(CURDIR) INSTALL_MOD_DIR=updates modules_install
	depmod -a $(KERNELRELEASE)

install-scripts:
	install -D -m 0755 scripts/vfsfast $(DESTDIR)$(SBINDIR)/vfsfast
	install -D -m 0755 scripts/vfsfast-ab $(DESTDIR)$(SBINDIR)/vfsfast-ab
	install -D -m 0644 scripts/vfsfast-ab-stats.awk $(DESTDIR)$(SHAREDIR)/vfsfast-ab-stats.awk
	mkdir -p $(DESTDIR)$(LIBEXECDIR)
	for w in $(WORKLOADS); do \
		$(CC) $(CPPFLAGS) $(CFLAGS) -Wall -o $(DESTDIR)$(LIBEXECDIR)/$$w scripts/workloads/$$w.c $(LDFLAGS) || exit 1; \
	done
	@triplet=$$($(CC) -dumpmachine); \
	if [ "$(LATENCY)" = no ]; then \
		echo "note: LATENCY=no: vfsfast-ab --latency will say it is unavailable"; \
	elif command -v clang >/dev/null 2>&1 && [ -f /usr/include/bpf/libbpf.h ] && \
	     [ "$$($(CC) -print-file-name=libbpf.so)" != libbpf.so ]; then \
		echo "building ablat (vfsfast-ab --latency)"; \
		case $$triplet in \
		x86_64-*) bpfarch=x86 ;; aarch64-*) bpfarch=arm64 ;; *) bpfarch=$${triplet%%-*} ;; \
		esac; \
		clang -O2 -g -target bpf -D__TARGET_ARCH_$$bpfarch -I/usr/include/$$triplet \
			-c scripts/workloads/ablat.bpf.c -o $(DESTDIR)$(LIBEXECDIR)/ablat.bpf.o && \
		chmod 0644 $(DESTDIR)$(LIBEXECDIR)/ablat.bpf.o && \
		$(CC) $(CPPFLAGS) $(CFLAGS) -Wall -o $(DESTDIR)$(LIBEXECDIR)/ablat scripts/workloads/ablat.c $(LDFLAGS) -lbpf; \
	else \
		echo "note: clang or libbpf-dev (for $$triplet) missing: vfsfast-ab --latency will say it is unavailable"; \
	fi

install-dkms-src:
	rm -rf $(DESTDIR)$(DKMS_SRC)
	mkdir -p $(DESTDIR)$(DKMS_SRC)
	cp -r $(DKMS_FILES) $(DESTDIR)$(DKMS_SRC)/

dkms-install: install-scripts
	-dkms remove -m vfsfast -v $(VERSION) --all
	$(MAKE) install-dkms-src DESTDIR=
	dkms add -m vfsfast -v $(VERSION)
	dkms build -m vfsfast -v $(VERSION) -k $(KERNELRELEASE)
	dkms install -m vfsfast -v $(VERSION) -k $(KERNELRELEASE) --force

clean:
	$(MAKE) -C $(KDIR) M=$(CURDIR) clean

check:
	$(LAB) test --kernels "$(KERNELS)" --profile $(PROFILE)

# Not part of `check` nor of .ci/run: building the kernel does not fit CI's
# time budget next to the four Debian kernels.
check-legacy:
	$(LAB) test --kernels legacy --profile $(if $(filter command line environment,$(origin PROFILE)),$(PROFILE),ci)

legacy-kernel:
	$(LAB) setup --kernels "legacy legacy-ref"

# Not in `check` either, for the same reason: two kernel builds, and guests
# several times slower than on the stock kernels.
check-debug:
	$(LAB) test --kernels "5.10-debug 6.12-debug" --profile $(if $(filter command line environment,$(origin PROFILE)),$(PROFILE),ci)

debug-kernels:
	$(LAB) setup --kernels "5.10-debug 6.12-debug"

bench-legacy:
	$(LAB) bench fsnotify --kernels "legacy legacy-ref" --backends direct

bench:
	$(LAB) bench readlink --kernels "$(MEASURE_KERNELS)"

demo:
	$(LAB) demo --kernels "$(MEASURE_KERNELS)"

# Real programs of each release's userland, all optimizations off vs on,
# one kernel at a time (about 10 minutes each); the tables go into
# Documentation/results.md.
# Not part of `check` nor of .ci/run: CI cannot fetch LTP or fstests.
# EXTERNAL_ARGS: more options of vfsfast-lab external (--filesystems, --passes,
# --suites).
check-external:
	$(LAB) external --kernels "$(KERNELS)" $(if $(LTP),--ltp "$(LTP)") \
		$(if $(FSTESTS),--fstests "$(FSTESTS)") $(EXTERNAL_ARGS)

real-programs:
	$(LAB) real --kernels "$(MEASURE_KERNELS)" --doc Documentation/results.md

style:
	$(LAB) style

# Debian's arm64 kernels, and the cloud flavour (linux-image-cloud-arm64)
# its arm64 cloud images boot.
ARM64_KERNELS = 6.12-arm64 6.1-arm64 5.10-arm64 7.2-arm64 6.12-cloud-arm64 6.1-cloud-arm64

build-arm64:
	$(LAB) build --kernels "$(ARM64_KERNELS)"

# Every group on every arm64 lab kernel.  CI's `check` runs only
# 6.12-arm64's groups about the architecture's own code, beside amd64's
# 6.12 (suite.CROSS_TWIN_GROUPS): an arm64 guest is TCG's slowest.
check-arm64:
	$(LAB) test --kernels "$(ARM64_KERNELS)" --profile $(if $(filter command line environment,$(origin PROFILE)),$(PROFILE),ci)

# t_pac on a CPU with FEAT_FPAC, where a failed autiasp traps at once:
# the guests' qemu is trixie's (10.0), whose -cpu max has it; the host's
# (bookworm's 7.2) does not.
check-fpac:
	VFSFAST_QEMU_RELEASE=trixie $(LAB) test --kernels 6.12-arm64 --tests t_pac \
		--profile $(if $(filter command line environment,$(origin PROFILE)),$(PROFILE),ci)

deb:
	$(LAB) deb

deb-arm64:
	$(LAB) deb --arch arm64

deb-arm64-guest:
	$(LAB) deb --arch arm64 --dkms-kernels none --guest 6.12-arm64

.PHONY: all modules install install-scripts install-dkms-src dkms-install clean check \
	check-legacy legacy-kernel bench-legacy check-debug debug-kernels bench demo style deb deb-arm64 deb-arm64-guest \
	real-programs check-external build-arm64 check-arm64 check-fpac
