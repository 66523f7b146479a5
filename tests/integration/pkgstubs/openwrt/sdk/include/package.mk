# Test stub of OpenWrt's package.mk: Download is a no-op (the test puts the file in DL_DIR),
# BuildPackage makes `compile` (Build/Prepare, Build/Compile) and `install`
# (Package/NAME/install into IPKG_ROOT), as the SDK runs them.
PKG_BUILD_DIR ?= $(BUILD_DIR)/$(PKG_NAME)-$(PKG_VERSION)

define Download
endef

define BuildPackage
.PHONY: compile install
compile:
	rm -rf $(PKG_BUILD_DIR)
	mkdir -p $(PKG_BUILD_DIR)
	$$(call Build/Prepare)
	$$(call Build/Compile)
install: compile
	mkdir -p $(IPKG_ROOT)
	$$(call Package/$(1)/install,$(IPKG_ROOT))
endef
