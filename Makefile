# SPDX-License-Identifier: GPL-2.0
#
# make                 build against the running kernel
# make KDIR=<headers>  build against any kernel headers tree
# make install         install into /lib/modules/<release>/updates and depmod
# make check           the test suite in the qemu lab (KERNELS="5.10 6.1 6.12 7.2",
#                      PROFILE=ci for CI's shorter stress loops)
# make bench           the readlink benchmark in the qemu lab
# make style           checkpatch.pl on the module sources
# make demo            boot a stock kernel with vfsfast and show an A/B result

KERNELRELEASE ?= $(shell uname -r)
KDIR ?= /lib/modules/$(KERNELRELEASE)/build
KERNELS ?= 5.10 6.1 6.12 7.2
PROFILE ?= full
LAB := $(CURDIR)/scripts/vfsfast-lab

all: modules

modules:
	$(MAKE) -C $(KDIR) M=$(CURDIR) modules

install: modules
	$(MAKE) -C $(KDIR) M=$(CURDIR) INSTALL_MOD_DIR=updates modules_install
	depmod -a $(KERNELRELEASE)

clean:
	$(MAKE) -C $(KDIR) M=$(CURDIR) clean

check:
	$(LAB) test --kernels "$(KERNELS)" --profile $(PROFILE)

bench:
	$(LAB) bench readlink --kernels "$(KERNELS)"

demo:
	$(LAB) demo --kernels "$(KERNELS)"

style:
	$(LAB) style

.PHONY: all modules install clean check bench demo style
