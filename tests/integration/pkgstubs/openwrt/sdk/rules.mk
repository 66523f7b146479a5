# Test stub of OpenWrt's rules.mk: the variables a package Makefile uses, for a native build.
# The test passes TOPDIR (this directory), DL_DIR, BUILD_DIR, IPKG_ROOT and TARGET_CC.
INCLUDE_DIR := $(TOPDIR)/include
TARGET_CROSS ?=
TARGET_AR ?= ar
TARGET_CFLAGS ?= -Os
CP := cp -fpR
TAR := tar
INSTALL_DIR := install -d -m0755
INSTALL_BIN := install -m0755
INSTALL_CONF := install -m0600
INSTALL_DATA := install -m0644
