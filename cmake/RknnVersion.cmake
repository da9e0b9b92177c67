# The build identity embedded in the library: "<git hash>@<build time>".
# The time honours SOURCE_DATE_EPOCH so that builds can be reproducible.
find_package(Git QUIET)
set(RKNN_GIT_HASH "nogit")
if(GIT_FOUND AND EXISTS "${PROJECT_SOURCE_DIR}/.git")
  execute_process(COMMAND ${GIT_EXECUTABLE} rev-parse --short=9 HEAD
    WORKING_DIRECTORY ${PROJECT_SOURCE_DIR}
    OUTPUT_VARIABLE _rknn_hash OUTPUT_STRIP_TRAILING_WHITESPACE
    RESULT_VARIABLE _rknn_hash_result ERROR_QUIET)
  if(_rknn_hash_result EQUAL 0 AND _rknn_hash)
    set(RKNN_GIT_HASH "${_rknn_hash}")
  endif()
endif()
string(TIMESTAMP RKNN_BUILD_TIME "%Y-%m-%dT%H:%M:%S")
set(RKNN_BUILD_ID "${RKNN_GIT_HASH}@${RKNN_BUILD_TIME}")
message(STATUS "OpenRKNN ${PROJECT_VERSION}: librknnrt version: ${RKNN_API_LEVEL} (${RKNN_BUILD_ID})")
