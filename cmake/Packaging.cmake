# SPDX-License-Identifier: GPL-2.0-or-later
# Debian packages through CPack, one per daemon (component):
#   cpack -G DEB  ->  vcpufold-agent_<version>_amd64.deb, vcpufold-hostd_<version>_amd64.deb
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_VENDOR "vcpufold")
set(CPACK_PACKAGE_CONTACT "vcpufold maintainers <maintainers@vcpufold.org>")
set(CPACK_PACKAGE_HOMEPAGE_URL "https://vcpufold.org")
set(CPACK_PACKAGING_INSTALL_PREFIX "/usr")
set(CPACK_DEB_COMPONENT_INSTALL ON)
set(CPACK_COMPONENTS_ALL agent hostd)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION admin)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_STRIP_FILES ON)

# vcpufold_deb(COMPONENT DESCRIPTION): package vcpufold-COMPONENT with the
# maintainer scripts and conffiles list in packaging/COMPONENT/.
macro(vcpufold_deb component description)
  string(TOUPPER ${component} upper)
  set(CPACK_DEBIAN_${upper}_PACKAGE_NAME vcpufold-${component})
  set(CPACK_DEBIAN_${upper}_DESCRIPTION "${description}")
  set(CPACK_DEBIAN_${upper}_PACKAGE_CONTROL_EXTRA
    ${PROJECT_SOURCE_DIR}/packaging/${component}/postinst
    ${PROJECT_SOURCE_DIR}/packaging/${component}/prerm
    ${PROJECT_SOURCE_DIR}/packaging/${component}/postrm
    ${PROJECT_SOURCE_DIR}/packaging/${component}/conffiles)
  set(CPACK_DEBIAN_${upper}_PACKAGE_CONTROL_STRICT_PERMISSION ON)
endmacro()

vcpufold_deb(agent
  "vcpufold guest agent: preferred vCPUs from the host's hints\n The agent keeps the guest's preferred CPUs as the host's vcpufold-hostd\n hints over the virtio-serial port org.vcpufold.hint.0, and folds by steal\n time when no hint is valid. It leaves the guest unfolded when it stops.")
vcpufold_deb(hostd
  "vcpufold host daemon: folds overcommitted VMs onto their fair share\n On a KVM host whose pCPUs are overcommitted, vcpufold-hostd computes each\n VM's weighted fair share of the pCPU pool every tick and tells the VM's\n vcpufold-agent how many vCPUs to keep busy, over a virtio-serial port.")

include(CPack)
