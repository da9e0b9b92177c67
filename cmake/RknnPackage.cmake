# Debian packages (cpack -G DEB), one per install component, installing under /usr.
# Configure with CMAKE_INSTALL_PREFIX=/usr (scripts/package.sh does) for the
# multiarch libdir; another prefix's libdir (lib) is used as it is.
#   librknnrt                 the library (multiarch libdir, and the lib/ link)
#   librknnrt-dev             headers, CMake package, pkg-config file
#   rknn-tools                rknn_convert, rknn_info, rknn_regdump, rknn_benchmark
#   python3-rknnlite          rknnlite (RKNN-Toolkit-Lite2's API)
#   python3-openrknn-toolkit  rknn (the Toolkit2 subset)
# Components a build lacks (tools and Python in the cross build) are left out.
set(CPACK_GENERATOR "DEB")
set(CPACK_PACKAGE_NAME "openrknn")
set(CPACK_PACKAGE_VENDOR "OpenRKNN")
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "open drop-in replacement for the Rockchip RKNN NPU runtime")
set(CPACK_PACKAGE_CONTACT "OpenRKNN developers <openrknn-dev@lists.invalid>")
set(CPACK_PACKAGING_INSTALL_PREFIX "/usr")
set(CPACK_PACKAGE_DIRECTORY ${PROJECT_BINARY_DIR}/packages)
set(CPACK_DEB_COMPONENT_INSTALL ON)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION "libs")
# The library dependencies come from dpkg-shlibdeps (dpkg-dev); without it CPack
# would write packages that depend on nothing.
find_program(RKNN_DPKG_SHLIBDEPS dpkg-shlibdeps)
if(NOT RKNN_DPKG_SHLIBDEPS)
  message(STATUS "Debian packages: dpkg-shlibdeps (dpkg-dev) not found; cpack would leave out the library dependencies")
endif()
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_STRIP_FILES ON)  # the debug sections stay in the build tree
if(CMAKE_CROSSCOMPILING AND CMAKE_SYSTEM_PROCESSOR STREQUAL "aarch64")
  set(CPACK_DEBIAN_PACKAGE_ARCHITECTURE "arm64")
endif()

set(version_dep "(= ${PROJECT_VERSION})")
set(CPACK_DEBIAN_RUNTIME_PACKAGE_NAME "librknnrt")
set(CPACK_COMPONENT_RUNTIME_DESCRIPTION "OpenRKNN runtime library (librknnrt.so, API ${RKNN_API_LEVEL})")
set(CPACK_DEBIAN_DEVELOPMENT_PACKAGE_NAME "librknnrt-dev")
set(CPACK_DEBIAN_DEVELOPMENT_PACKAGE_SECTION "libdevel")
set(CPACK_DEBIAN_DEVELOPMENT_PACKAGE_DEPENDS "librknnrt ${version_dep}")
set(CPACK_COMPONENT_DEVELOPMENT_DESCRIPTION "OpenRKNN runtime: headers, CMake package and pkg-config file")
set(CPACK_DEBIAN_TOOLS_PACKAGE_NAME "rknn-tools")
set(CPACK_DEBIAN_TOOLS_PACKAGE_SECTION "devel")
set(CPACK_DEBIAN_TOOLS_PACKAGE_DEPENDS "librknnrt ${version_dep}")
set(CPACK_COMPONENT_TOOLS_DESCRIPTION "OpenRKNN tools: rknn_convert (ONNX to model), rknn_info, rknn_regdump, rknn_benchmark")
# The extensions are built for this python3 (its ABI tag is in their names).
set(python_dep "python3 (>= ${RKNN_PYTHON_VERSION}), python3 (<< ${RKNN_PYTHON_VERSION}.99), python3-numpy")
set(CPACK_DEBIAN_PYTHONLITE_PACKAGE_NAME "python3-rknnlite")
set(CPACK_DEBIAN_PYTHONLITE_PACKAGE_SECTION "python")
set(CPACK_DEBIAN_PYTHONLITE_PACKAGE_DEPENDS "librknnrt ${version_dep}, ${python_dep}")
set(CPACK_COMPONENT_PYTHONLITE_DESCRIPTION "OpenRKNN for Python: rknnlite, RKNN-Toolkit-Lite2's API")
set(CPACK_DEBIAN_PYTHONTOOLKIT_PACKAGE_NAME "python3-openrknn-toolkit")
set(CPACK_DEBIAN_PYTHONTOOLKIT_PACKAGE_SECTION "python")
set(CPACK_DEBIAN_PYTHONTOOLKIT_PACKAGE_DEPENDS "python3-rknnlite ${version_dep}")
set(CPACK_DEBIAN_PYTHONTOOLKIT_PACKAGE_RECOMMENDS "python3-onnx")  # load_onnx(inputs=...) reads the names with it
set(CPACK_COMPONENT_PYTHONTOOLKIT_DESCRIPTION "OpenRKNN for Python: rknn, RKNN-Toolkit2's conversion API")

# Only the components this build installs (get_cmake_property lists those seen).
get_cmake_property(installed_components COMPONENTS)
set(CPACK_COMPONENTS_ALL ${installed_components})
include(CPack)
