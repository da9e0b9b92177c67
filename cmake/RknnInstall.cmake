# Install rules: the library, the four public headers, a CMake package
# (find_package(rknnrt CONFIG) -> rknnrt::rknnrt) and librknnrt.pc.
include(CMakePackageConfigHelpers)

install(TARGETS rknnrt EXPORT rknnrtTargets
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT Runtime
  INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
# Board software opens /usr/lib/librknnrt.so by that path (rknn_server, Lite2):
# with a multiarch libdir, a link there too.
cmake_path(SET RKNN_LIBDIR NORMALIZE "${CMAKE_INSTALL_LIBDIR}")
string(REGEX REPLACE "/+$" "" RKNN_LIBDIR "${RKNN_LIBDIR}")
if(RKNN_INSTALL_COMPAT_LINK AND NOT RKNN_LIBDIR STREQUAL "lib" AND NOT IS_ABSOLUTE "${RKNN_LIBDIR}")
  file(RELATIVE_PATH RKNN_LIB_FROM_LIB "/prefix/lib" "/prefix/${RKNN_LIBDIR}/librknnrt.so")
  file(MAKE_DIRECTORY ${PROJECT_BINARY_DIR}/compat-link)
  file(CREATE_LINK ${RKNN_LIB_FROM_LIB} ${PROJECT_BINARY_DIR}/compat-link/librknnrt.so SYMBOLIC)
  install(FILES ${PROJECT_BINARY_DIR}/compat-link/librknnrt.so DESTINATION lib COMPONENT Runtime)
endif()
install(FILES
  ${PROJECT_SOURCE_DIR}/include/rknn_api.h
  ${PROJECT_SOURCE_DIR}/include/rknn_matmul_api.h
  ${PROJECT_SOURCE_DIR}/include/rknn_custom_op.h
  ${PROJECT_SOURCE_DIR}/include/rknn_openrknn_ext.h
  DESTINATION ${CMAKE_INSTALL_INCLUDEDIR} COMPONENT Development)

set(RKNN_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/rknnrt)
install(EXPORT rknnrtTargets NAMESPACE rknnrt:: DESTINATION ${RKNN_CMAKE_DIR} COMPONENT Development)
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/rknnrtConfig.cmake.in
  ${PROJECT_BINARY_DIR}/rknnrtConfig.cmake INSTALL_DESTINATION ${RKNN_CMAKE_DIR})
write_basic_package_version_file(${PROJECT_BINARY_DIR}/rknnrtConfigVersion.cmake
  VERSION ${RKNN_API_LEVEL} COMPATIBILITY SameMajorVersion)
install(FILES ${PROJECT_BINARY_DIR}/rknnrtConfig.cmake ${PROJECT_BINARY_DIR}/rknnrtConfigVersion.cmake
  DESTINATION ${RKNN_CMAKE_DIR} COMPONENT Development)

# The .pc file locates the prefix relative to itself, so the install can move.
file(RELATIVE_PATH RKNN_PC_TO_PREFIX "/prefix/${CMAKE_INSTALL_LIBDIR}/pkgconfig" "/prefix")
string(REGEX REPLACE "/$" "" RKNN_PC_TO_PREFIX "${RKNN_PC_TO_PREFIX}")
configure_file(${PROJECT_SOURCE_DIR}/cmake/librknnrt.pc.in ${PROJECT_BINARY_DIR}/librknnrt.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/librknnrt.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig COMPONENT Development)
