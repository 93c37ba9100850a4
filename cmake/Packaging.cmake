# Debian packages through CPack, one per daemon (component):
#   cpack -G DEB  ->  vcpufold-agent_<version>_amd64.deb
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_VENDOR "vcpufold")
set(CPACK_PACKAGE_CONTACT "vcpufold maintainers <maintainers@vcpufold.org>")
set(CPACK_PACKAGE_HOMEPAGE_URL "https://vcpufold.org")
set(CPACK_PACKAGING_INSTALL_PREFIX "/usr")
set(CPACK_DEB_COMPONENT_INSTALL ON)
set(CPACK_COMPONENTS_ALL agent)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION admin)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_STRIP_FILES ON)

set(CPACK_DEBIAN_AGENT_PACKAGE_NAME vcpufold-agent)
set(CPACK_DEBIAN_AGENT_DESCRIPTION
  "vcpufold guest agent: preferred vCPUs from the host's hints\n The agent keeps the guest's preferred CPUs as the host's vcpufold-hostd\n hints over the virtio-serial port org.vcpufold.hint.0, and folds by steal\n time when no hint is valid. It leaves the guest unfolded when it stops.")
set(CPACK_DEBIAN_AGENT_PACKAGE_CONTROL_EXTRA
  ${PROJECT_SOURCE_DIR}/packaging/agent/postinst
  ${PROJECT_SOURCE_DIR}/packaging/agent/prerm
  ${PROJECT_SOURCE_DIR}/packaging/agent/postrm
  ${PROJECT_SOURCE_DIR}/packaging/agent/conffiles)
set(CPACK_DEBIAN_AGENT_PACKAGE_CONTROL_STRICT_PERMISSION ON)

include(CPack)
