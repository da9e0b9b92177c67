/*
 * Compile-time checks usable from both C (C11) and C++ for the UAPI headers.
 * Each UAPI header pins struct sizes, field offsets and ioctl numbers with
 * these, so a transcription mistake fails the build instead of the board.
 */
#ifndef OPENRKNN_UAPI_ASSERT_H
#define OPENRKNN_UAPI_ASSERT_H

#include <stddef.h>

#ifdef __cplusplus
#define OPENRKNN_UAPI_ASSERT(cond, msg) static_assert(cond, msg)
#else
#define OPENRKNN_UAPI_ASSERT(cond, msg) _Static_assert(cond, msg)
#endif

#define OPENRKNN_UAPI_SIZE(type, bytes) \
    OPENRKNN_UAPI_ASSERT(sizeof(type) == (bytes), "size of " #type)
#define OPENRKNN_UAPI_OFFSET(type, field, off) \
    OPENRKNN_UAPI_ASSERT(offsetof(type, field) == (off), "offset of " #type "." #field)
#ifdef __cplusplus
#define OPENRKNN_UAPI_IOCTL(cmd, value) \
    OPENRKNN_UAPI_ASSERT(static_cast<unsigned long>(cmd) == static_cast<unsigned long>(value), \
                         "ioctl number " #cmd)
#else
#define OPENRKNN_UAPI_IOCTL(cmd, value) \
    OPENRKNN_UAPI_ASSERT((unsigned long)(cmd) == (unsigned long)(value), "ioctl number " #cmd)
#endif

#endif /* OPENRKNN_UAPI_ASSERT_H */
