################################################################################
#
# spoolbox: use this directory in a BR2_EXTERNAL tree, or copy it to package/spoolbox
# and add 'source "package/spoolbox/Config.in"' to package/Config.in. SPOOLBOX_OVERRIDE_SRCDIR
# (or local.mk) points at this source tree; BearSSL comes as an extra download.
#
################################################################################

SPOOLBOX_VERSION = 0.1
SPOOLBOX_SITE = $(realpath $(SPOOLBOX_PKGDIR)/../../..)
SPOOLBOX_SITE_METHOD = local
SPOOLBOX_LICENSE = MIT
SPOOLBOX_LICENSE_FILES = LICENSE

SPOOLBOX_BEARSSL_VERSION = 0.6
SPOOLBOX_EXTRA_DOWNLOADS = https://bearssl.org/bearssl-$(SPOOLBOX_BEARSSL_VERSION).tar.gz
SPOOLBOX_BEARSSL_DIR = $(@D)/bearssl-$(SPOOLBOX_BEARSSL_VERSION)

SPOOLBOX_MAKE_OPTS = \
	CC="$(TARGET_CC)" \
	OBJCOPY="$(TARGET_OBJCOPY)" \
	WERROR=0

ifeq ($(BR2_PACKAGE_SPOOLBOX_TLS),y)
SPOOLBOX_MAKE_OPTS += TLS=1 \
	BEARSSL_INC=$(SPOOLBOX_BEARSSL_DIR)/inc \
	BEARSSL_A=$(SPOOLBOX_BEARSSL_DIR)/build/libbearssl.a
define SPOOLBOX_BUILD_BEARSSL
	$(TAR) -xzf $(SPOOLBOX_DL_DIR)/bearssl-$(SPOOLBOX_BEARSSL_VERSION).tar.gz -C $(@D)
	$(TARGET_MAKE_ENV) $(MAKE) -C $(SPOOLBOX_BEARSSL_DIR) CC="$(TARGET_CC)" \
		AR="$(TARGET_AR)" CFLAGS="$(TARGET_CFLAGS) -fPIC" lib
endef
else
SPOOLBOX_MAKE_OPTS += TLS=0
endif

define SPOOLBOX_CONFIGURE_CMDS
	printf '#define DEFAULT_SPOOL "%s"\n' $(call qstrip,$(BR2_PACKAGE_SPOOLBOX_SPOOL)) \
		>$(@D)/config/local.h
endef

define SPOOLBOX_BUILD_CMDS
	$(SPOOLBOX_BUILD_BEARSSL)
	$(TARGET_MAKE_ENV) $(MAKE) -C $(@D) $(SPOOLBOX_MAKE_OPTS) variant
endef

define SPOOLBOX_INSTALL_TARGET_CMDS
	$(TARGET_MAKE_ENV) $(MAKE) -C $(@D) $(SPOOLBOX_MAKE_OPTS) \
		DESTDIR=$(TARGET_DIR) PREFIX=/usr install
endef

# the submit group, and the user the network-facing transport agents run as (AGENT_USER,
# docs/spool.md 8.1): in that group, no home, no login
define SPOOLBOX_USERS
	- -1 spoolbox -1 * - - - spoolbox submit group
	spoolbox -1 spoolbox -1 * - - - spoolbox transport agents
endef

define SPOOLBOX_PERMISSIONS
	/usr/sbin/spoolbox f 2755 0 spoolbox - - - - -
endef

define SPOOLBOX_INSTALL_INIT_SYSV
	$(INSTALL) -D -m 0755 $(SPOOLBOX_PKGDIR)/S50spoolbox $(TARGET_DIR)/etc/init.d/S50spoolbox
endef

define SPOOLBOX_INSTALL_INIT_SYSTEMD
	$(INSTALL) -D -m 0644 $(SPOOLBOX_PKGDIR)/../../systemd/spoolbox.service \
		$(TARGET_DIR)/usr/lib/systemd/system/spoolbox.service
endef

$(eval $(generic-package))
