/*
 * The mainline "rocket" accel driver ABI (Linux 6.18, include/uapi/drm/rocket_accel.h),
 * transcribed by OpenRKNN from spec/hw-facts.md section 2.2.
 *
 * Node /dev/accel/accelN, driver name "rocket". Buffers are freed with the
 * generic DRM GEM_CLOSE ioctl and mapped with mmap on the accel fd at
 * create_bo.offset. Reserved fields must be zero: the driver checks.
 */
#ifndef OPENRKNN_ROCKET_ACCEL_H
#define OPENRKNN_ROCKET_ACCEL_H

#include <linux/ioctl.h>
#include <stdint.h>

#include "uapi_assert.h"

#ifdef __cplusplus
extern "C" {
#endif

#define DRM_ROCKET_CREATE_BO 0x00
#define DRM_ROCKET_SUBMIT 0x01
#define DRM_ROCKET_PREP_BO 0x02
#define DRM_ROCKET_FINI_BO 0x03

struct drm_rocket_create_bo {
    uint32_t size;                       /* in */
    uint32_t handle;                     /* out */
    uint64_t dma_address;                /* out: IOVA in this fd's own address space */
    uint64_t offset;                     /* out: mmap offset on the accel fd */
};

/* Waits for NPU writers, then makes the buffer coherent for the CPU. */
struct drm_rocket_prep_bo {
    uint32_t handle;
    uint32_t reserved;                   /* must be 0 */
    int64_t timeout_ns;                  /* absolute CLOCK_MONOTONIC time */
};

/* Hands the buffer back to the NPU (flushes CPU caches). */
struct drm_rocket_fini_bo {
    uint32_t handle;
    uint32_t reserved;                   /* must be 0 */
};

struct drm_rocket_task {
    uint32_t regcmd;                     /* 32-bit NPU address of the regcmd stream */
    uint32_t regcmd_count;               /* 64-bit words including the tail, > 0 */
};

/* A job: tasks run in order on one core. */
struct drm_rocket_job {
    uint64_t tasks;                      /* user pointer to drm_rocket_task[] */
    uint64_t in_bo_handles;              /* user pointer to uint32_t[] */
    uint64_t out_bo_handles;             /* user pointer to uint32_t[] */
    uint32_t task_count;
    uint32_t task_struct_size;
    uint32_t in_bo_handle_count;
    uint32_t out_bo_handle_count;
};

struct drm_rocket_submit {
    uint64_t jobs;                       /* user pointer to drm_rocket_job[] */
    uint32_t job_count;
    uint32_t job_struct_size;
    uint64_t reserved;                   /* must be 0 */
};

#define ROCKET_DRM_IOCTL_MAGIC 'd'
#define ROCKET_DRM_COMMAND_BASE 0x40

#define DRM_IOCTL_ROCKET_CREATE_BO \
    _IOWR(ROCKET_DRM_IOCTL_MAGIC, ROCKET_DRM_COMMAND_BASE + DRM_ROCKET_CREATE_BO, struct drm_rocket_create_bo)
#define DRM_IOCTL_ROCKET_SUBMIT \
    _IOW(ROCKET_DRM_IOCTL_MAGIC, ROCKET_DRM_COMMAND_BASE + DRM_ROCKET_SUBMIT, struct drm_rocket_submit)
#define DRM_IOCTL_ROCKET_PREP_BO \
    _IOW(ROCKET_DRM_IOCTL_MAGIC, ROCKET_DRM_COMMAND_BASE + DRM_ROCKET_PREP_BO, struct drm_rocket_prep_bo)
#define DRM_IOCTL_ROCKET_FINI_BO \
    _IOW(ROCKET_DRM_IOCTL_MAGIC, ROCKET_DRM_COMMAND_BASE + DRM_ROCKET_FINI_BO, struct drm_rocket_fini_bo)

/* ---- checks against the facts (hw-facts 2.2; hw-facts-check rows 42-43) ---------- */
OPENRKNN_UAPI_SIZE(struct drm_rocket_create_bo, 24);
OPENRKNN_UAPI_OFFSET(struct drm_rocket_create_bo, handle, 4);
OPENRKNN_UAPI_OFFSET(struct drm_rocket_create_bo, dma_address, 8);
OPENRKNN_UAPI_OFFSET(struct drm_rocket_create_bo, offset, 16);

OPENRKNN_UAPI_SIZE(struct drm_rocket_prep_bo, 16);
OPENRKNN_UAPI_OFFSET(struct drm_rocket_prep_bo, reserved, 4);
OPENRKNN_UAPI_OFFSET(struct drm_rocket_prep_bo, timeout_ns, 8);

OPENRKNN_UAPI_SIZE(struct drm_rocket_fini_bo, 8);
OPENRKNN_UAPI_OFFSET(struct drm_rocket_fini_bo, reserved, 4);

OPENRKNN_UAPI_SIZE(struct drm_rocket_task, 8);
OPENRKNN_UAPI_OFFSET(struct drm_rocket_task, regcmd_count, 4);

OPENRKNN_UAPI_SIZE(struct drm_rocket_job, 40);
OPENRKNN_UAPI_OFFSET(struct drm_rocket_job, in_bo_handles, 8);
OPENRKNN_UAPI_OFFSET(struct drm_rocket_job, out_bo_handles, 16);
OPENRKNN_UAPI_OFFSET(struct drm_rocket_job, task_count, 24);
OPENRKNN_UAPI_OFFSET(struct drm_rocket_job, task_struct_size, 28);
OPENRKNN_UAPI_OFFSET(struct drm_rocket_job, in_bo_handle_count, 32);
OPENRKNN_UAPI_OFFSET(struct drm_rocket_job, out_bo_handle_count, 36);

OPENRKNN_UAPI_SIZE(struct drm_rocket_submit, 24);
OPENRKNN_UAPI_OFFSET(struct drm_rocket_submit, job_count, 8);
OPENRKNN_UAPI_OFFSET(struct drm_rocket_submit, job_struct_size, 12);
OPENRKNN_UAPI_OFFSET(struct drm_rocket_submit, reserved, 16);

OPENRKNN_UAPI_IOCTL(DRM_IOCTL_ROCKET_CREATE_BO, 0xC0186440u);
OPENRKNN_UAPI_IOCTL(DRM_IOCTL_ROCKET_SUBMIT, 0x40186441u);
OPENRKNN_UAPI_IOCTL(DRM_IOCTL_ROCKET_PREP_BO, 0x40106442u);
OPENRKNN_UAPI_IOCTL(DRM_IOCTL_ROCKET_FINI_BO, 0x40086443u);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* OPENRKNN_ROCKET_ACCEL_H */
