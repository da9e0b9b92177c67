/*
 * The vendor "rknpu" kernel driver ABI (Rockchip BSP, driver 0.9.8), transcribed
 * by OpenRKNN from spec/hw-facts.md sections 1.2-1.4. Little-endian, LP64 and
 * ILP32 identical (all 64-bit fields are naturally aligned).
 *
 * Two transports share these structs:
 *   - DRM render node (/dev/dri/renderD*, driver name "rknpu"): magic 'd',
 *     number DRM_COMMAND_BASE (0x40) + nr;
 *   - misc char device /dev/rknpu (DMA-heap builds): magic 'r', number nr. That
 *     driver dispatches on the nr alone.
 */
#ifndef OPENRKNN_RKNPU_IOCTL_H
#define OPENRKNN_RKNPU_IOCTL_H

#include <linux/ioctl.h>
#include <stdint.h>

#include "uapi_assert.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- memory flags (rknpu_mem_create.flags) ------------------------------ */
enum rknpu_mem_flags {
    RKNPU_MEM_CONTIGUOUS = 0,            /* default */
    RKNPU_MEM_NON_CONTIGUOUS = 1u << 0,  /* page allocation + own IOVA mapping */
    RKNPU_MEM_NON_CACHEABLE = 0,         /* default: write-combined/uncached CPU map */
    RKNPU_MEM_CACHEABLE = 1u << 1,       /* cached CPU map; MEM_SYNC needs it */
    RKNPU_MEM_WRITE_COMBINE = 1u << 2,
    RKNPU_MEM_KERNEL_MAPPING = 1u << 3,  /* needed for the task-array buffer */
    RKNPU_MEM_IOMMU = 1u << 4,
    RKNPU_MEM_ZEROING = 1u << 5,
    RKNPU_MEM_SECURE = 1u << 6,
    RKNPU_MEM_DMA32 = 1u << 7,
    RKNPU_MEM_TRY_ALLOC_SRAM = 1u << 8,
    RKNPU_MEM_TRY_ALLOC_NBUF = 1u << 9,
    RKNPU_MEM_IOMMU_LIMIT_IOVA_ALIGNMENT = 1u << 10, /* 0.9.7+ */
    RKNPU_MEM_MASK = 0x7ff
};

/* ---- cache sync direction (rknpu_mem_sync.flags) ------------------------- */
enum rknpu_mem_sync_flags {
    RKNPU_MEM_SYNC_TO_DEVICE = 1u << 0,
    RKNPU_MEM_SYNC_FROM_DEVICE = 1u << 1
};

/* ---- job flags (rknpu_submit.flags) -------------------------------------- */
enum rknpu_job_flags {
    RKNPU_JOB_SLAVE = 0,
    RKNPU_JOB_PC = 1u << 0,              /* mandatory: without it the submit fails */
    RKNPU_JOB_BLOCK = 0,
    RKNPU_JOB_NONBLOCK = 1u << 1,
    RKNPU_JOB_PINGPONG = 1u << 2,        /* sets TASK_PP_EN */
    RKNPU_JOB_FENCE_IN = 1u << 3,
    RKNPU_JOB_FENCE_OUT = 1u << 4,
    RKNPU_JOB_MASK = 0x1f
};

/* ---- core masks (rknpu_submit.core_mask) --------------------------------- */
enum rknpu_core_mask {
    RKNPU_CORE_AUTO_MASK = 0x0,
    RKNPU_CORE0_MASK = 0x1,
    RKNPU_CORE1_MASK = 0x2,
    RKNPU_CORE2_MASK = 0x4
};

/* ---- action codes (rknpu_action.flags) ------------------------------------ */
enum rknpu_action_code {
    RKNPU_GET_HW_VERSION = 0,
    RKNPU_GET_DRV_VERSION = 1,           /* major*10000 + minor*100 + patch */
    RKNPU_GET_FREQ = 2,
    RKNPU_SET_FREQ = 3,
    RKNPU_GET_VOLT = 4,
    RKNPU_SET_VOLT = 5,
    RKNPU_ACT_RESET = 6,
    RKNPU_GET_BW_PRIORITY = 7,
    RKNPU_SET_BW_PRIORITY = 8,
    RKNPU_GET_BW_EXPECT = 9,
    RKNPU_SET_BW_EXPECT = 10,
    RKNPU_GET_BW_TW = 11,
    RKNPU_SET_BW_TW = 12,
    RKNPU_ACT_CLR_TOTAL_RW_AMOUNT = 13,
    RKNPU_GET_DT_WR_AMOUNT = 14,
    RKNPU_GET_DT_RD_AMOUNT = 15,
    RKNPU_GET_WT_RD_AMOUNT = 16,
    RKNPU_GET_TOTAL_RW_AMOUNT = 17,
    RKNPU_GET_IOMMU_EN = 18,
    RKNPU_SET_PROC_NICE = 19,
    RKNPU_POWER_ON = 20,
    RKNPU_POWER_OFF = 21,
    RKNPU_GET_TOTAL_SRAM_SIZE = 22,
    RKNPU_GET_FREE_SRAM_SIZE = 23,
    RKNPU_GET_IOMMU_DOMAIN_ID = 24,
    RKNPU_SET_IOMMU_DOMAIN_ID = 25
};

/* The PC fetches this many words beyond regcfg_amount: the task tail. */
#define RKNPU_PC_DATA_EXTRA_AMOUNT 4
/* Interrupt bits a driver clears after each job. */
#define RKNPU_INT_CLEAR_ALL 0x1ffff
/* IOMMU address spaces a process may switch between. */
#define RKNPU_MAX_IOMMU_DOMAIN_NUM 16

/* ---- structs ----------------------------------------------------------------- */
struct rknpu_action {
    uint32_t flags;                      /* action code */
    uint32_t value;                      /* in/out */
};

struct rknpu_mem_create {
    uint32_t handle;                     /* in: existing GEM handle (import) or 0; out: handle.
                                            misc device: in dma-buf fd to import, out dma-buf fd */
    uint32_t flags;                      /* rknpu_mem_flags */
    uint64_t size;                       /* in; out page-aligned */
    uint64_t obj_addr;                   /* out: kernel object cookie for SUBMIT/SYNC/DESTROY */
    uint64_t dma_addr;                   /* out: NPU-visible address */
    uint64_t sram_size;                  /* in: max SRAM part; out: SRAM used */
    int32_t iommu_domain_id;
    uint32_t core_mask;                  /* placement hint (was `reserved`) */
};

/* The 40-byte layout of drivers up to 0.9.6 (ends after sram_size). */
#define RKNPU_MEM_CREATE_V1_SIZE 40

struct rknpu_mem_map {
    uint32_t handle;
    uint32_t reserved;
    uint64_t offset;                     /* out: fake mmap offset on the DRM fd */
};

struct rknpu_mem_destroy {
    uint32_t handle;
    uint32_t reserved;
    uint64_t obj_addr;                   /* used by the misc device */
};

struct rknpu_mem_sync {
    uint32_t flags;                      /* rknpu_mem_sync_flags */
    uint32_t reserved;
    uint64_t obj_addr;                   /* the object is found by cookie, not handle */
    uint64_t offset;
    uint64_t size;
};

/* One record of the task array, which lives in a buffer object (KERNEL_MAPPING). */
struct rknpu_task {
    uint32_t flags;
    uint32_t op_idx;                     /* informational */
    uint32_t enable_mask;                /* block enable bitmap, as the 0x0081 word */
    uint32_t int_mask;                   /* interrupt bits expected at task end */
    uint32_t int_clear;
    uint32_t int_status;                 /* out: written into the last task */
    uint32_t regcfg_amount;              /* regcmd words excluding the 4-word tail */
    uint32_t regcfg_offset;
    uint64_t regcmd_addr;                /* NPU address of the regcmd stream */
} __attribute__((packed));

struct rknpu_subcore_task {
    uint32_t task_start;
    uint32_t task_number;
};

#define RKNPU_MAX_SUBCORE_TASKS 5

struct rknpu_submit {
    uint32_t flags;                      /* rknpu_job_flags */
    uint32_t timeout;                    /* milliseconds */
    uint32_t task_start;                 /* single-core SoCs */
    uint32_t task_number;                /* must be > 0 */
    uint32_t task_counter;               /* out: tasks completed */
    int32_t priority;
    uint64_t task_obj_addr;              /* cookie of the task-array buffer */
    uint32_t iommu_domain_id;            /* <= 0.9.6: low half of regcfg_obj_addr */
    uint32_t reserved;
    uint64_t task_base_addr;             /* written to PC TASK_DMA_BASE_ADDR */
    int64_t hw_elapse_time;              /* out: ns (<= 0.9.6: user_data) */
    uint32_t core_mask;                  /* rknpu_core_mask, 0 = auto */
    int32_t fence_fd;                    /* in-fence or out-fence fd */
    struct rknpu_subcore_task subcore_task[RKNPU_MAX_SUBCORE_TASKS];
};

/* ---- ioctl numbers --------------------------------------------------------------- */
#define RKNPU_DRM_IOCTL_MAGIC 'd'
#define RKNPU_DRM_COMMAND_BASE 0x40
#define RKNPU_MISC_IOCTL_MAGIC 'r'

#define RKNPU_NR_ACTION 0x00
#define RKNPU_NR_SUBMIT 0x01
#define RKNPU_NR_MEM_CREATE 0x02
#define RKNPU_NR_MEM_MAP 0x03
#define RKNPU_NR_MEM_DESTROY 0x04
#define RKNPU_NR_MEM_SYNC 0x05

#define RKNPU_DRM_IOWR(nr, type) _IOWR(RKNPU_DRM_IOCTL_MAGIC, RKNPU_DRM_COMMAND_BASE + (nr), type)
#define RKNPU_MISC_IOWR(nr, type) _IOWR(RKNPU_MISC_IOCTL_MAGIC, (nr), type)

#define DRM_IOCTL_RKNPU_ACTION RKNPU_DRM_IOWR(RKNPU_NR_ACTION, struct rknpu_action)
#define DRM_IOCTL_RKNPU_SUBMIT RKNPU_DRM_IOWR(RKNPU_NR_SUBMIT, struct rknpu_submit)
#define DRM_IOCTL_RKNPU_MEM_CREATE RKNPU_DRM_IOWR(RKNPU_NR_MEM_CREATE, struct rknpu_mem_create)
#define DRM_IOCTL_RKNPU_MEM_CREATE_V1                                                   \
    _IOC(_IOC_READ | _IOC_WRITE, RKNPU_DRM_IOCTL_MAGIC, RKNPU_DRM_COMMAND_BASE + RKNPU_NR_MEM_CREATE, \
         RKNPU_MEM_CREATE_V1_SIZE)
#define DRM_IOCTL_RKNPU_MEM_MAP RKNPU_DRM_IOWR(RKNPU_NR_MEM_MAP, struct rknpu_mem_map)
#define DRM_IOCTL_RKNPU_MEM_DESTROY RKNPU_DRM_IOWR(RKNPU_NR_MEM_DESTROY, struct rknpu_mem_destroy)
#define DRM_IOCTL_RKNPU_MEM_SYNC RKNPU_DRM_IOWR(RKNPU_NR_MEM_SYNC, struct rknpu_mem_sync)

#define IOCTL_RKNPU_ACTION RKNPU_MISC_IOWR(RKNPU_NR_ACTION, struct rknpu_action)
#define IOCTL_RKNPU_SUBMIT RKNPU_MISC_IOWR(RKNPU_NR_SUBMIT, struct rknpu_submit)
#define IOCTL_RKNPU_MEM_CREATE RKNPU_MISC_IOWR(RKNPU_NR_MEM_CREATE, struct rknpu_mem_create)
#define IOCTL_RKNPU_MEM_MAP RKNPU_MISC_IOWR(RKNPU_NR_MEM_MAP, struct rknpu_mem_map)
#define IOCTL_RKNPU_MEM_DESTROY RKNPU_MISC_IOWR(RKNPU_NR_MEM_DESTROY, struct rknpu_mem_destroy)
#define IOCTL_RKNPU_MEM_SYNC RKNPU_MISC_IOWR(RKNPU_NR_MEM_SYNC, struct rknpu_mem_sync)

/* ---- checks against the facts (hw-facts 1.2, 1.3; hw-facts-check rows 1-9) ---------- */
OPENRKNN_UAPI_SIZE(struct rknpu_action, 8);
OPENRKNN_UAPI_OFFSET(struct rknpu_action, value, 4);

OPENRKNN_UAPI_SIZE(struct rknpu_mem_create, 48);
OPENRKNN_UAPI_OFFSET(struct rknpu_mem_create, flags, 4);
OPENRKNN_UAPI_OFFSET(struct rknpu_mem_create, size, 8);
OPENRKNN_UAPI_OFFSET(struct rknpu_mem_create, obj_addr, 16);
OPENRKNN_UAPI_OFFSET(struct rknpu_mem_create, dma_addr, 24);
OPENRKNN_UAPI_OFFSET(struct rknpu_mem_create, sram_size, 32);
OPENRKNN_UAPI_OFFSET(struct rknpu_mem_create, iommu_domain_id, 40);
OPENRKNN_UAPI_OFFSET(struct rknpu_mem_create, core_mask, 44);

OPENRKNN_UAPI_SIZE(struct rknpu_mem_map, 16);
OPENRKNN_UAPI_OFFSET(struct rknpu_mem_map, offset, 8);

OPENRKNN_UAPI_SIZE(struct rknpu_mem_destroy, 16);
OPENRKNN_UAPI_OFFSET(struct rknpu_mem_destroy, obj_addr, 8);

OPENRKNN_UAPI_SIZE(struct rknpu_mem_sync, 32);
OPENRKNN_UAPI_OFFSET(struct rknpu_mem_sync, obj_addr, 8);
OPENRKNN_UAPI_OFFSET(struct rknpu_mem_sync, offset, 16);
OPENRKNN_UAPI_OFFSET(struct rknpu_mem_sync, size, 24);

OPENRKNN_UAPI_SIZE(struct rknpu_task, 40);
OPENRKNN_UAPI_OFFSET(struct rknpu_task, op_idx, 4);
OPENRKNN_UAPI_OFFSET(struct rknpu_task, enable_mask, 8);
OPENRKNN_UAPI_OFFSET(struct rknpu_task, int_mask, 12);
OPENRKNN_UAPI_OFFSET(struct rknpu_task, int_clear, 16);
OPENRKNN_UAPI_OFFSET(struct rknpu_task, int_status, 20);
OPENRKNN_UAPI_OFFSET(struct rknpu_task, regcfg_amount, 24);
OPENRKNN_UAPI_OFFSET(struct rknpu_task, regcfg_offset, 28);
OPENRKNN_UAPI_OFFSET(struct rknpu_task, regcmd_addr, 32);

OPENRKNN_UAPI_SIZE(struct rknpu_subcore_task, 8);

OPENRKNN_UAPI_SIZE(struct rknpu_submit, 104);
OPENRKNN_UAPI_OFFSET(struct rknpu_submit, timeout, 4);
OPENRKNN_UAPI_OFFSET(struct rknpu_submit, task_start, 8);
OPENRKNN_UAPI_OFFSET(struct rknpu_submit, task_number, 12);
OPENRKNN_UAPI_OFFSET(struct rknpu_submit, task_counter, 16);
OPENRKNN_UAPI_OFFSET(struct rknpu_submit, priority, 20);
OPENRKNN_UAPI_OFFSET(struct rknpu_submit, task_obj_addr, 24);
OPENRKNN_UAPI_OFFSET(struct rknpu_submit, iommu_domain_id, 32);
OPENRKNN_UAPI_OFFSET(struct rknpu_submit, reserved, 36);
OPENRKNN_UAPI_OFFSET(struct rknpu_submit, task_base_addr, 40);
OPENRKNN_UAPI_OFFSET(struct rknpu_submit, hw_elapse_time, 48);
OPENRKNN_UAPI_OFFSET(struct rknpu_submit, core_mask, 56);
OPENRKNN_UAPI_OFFSET(struct rknpu_submit, fence_fd, 60);
OPENRKNN_UAPI_OFFSET(struct rknpu_submit, subcore_task, 64);

OPENRKNN_UAPI_IOCTL(DRM_IOCTL_RKNPU_ACTION, 0xC0086440u);
OPENRKNN_UAPI_IOCTL(DRM_IOCTL_RKNPU_SUBMIT, 0xC0686441u);
OPENRKNN_UAPI_IOCTL(DRM_IOCTL_RKNPU_MEM_CREATE, 0xC0306442u);
OPENRKNN_UAPI_IOCTL(DRM_IOCTL_RKNPU_MEM_CREATE_V1, 0xC0286442u);
OPENRKNN_UAPI_IOCTL(DRM_IOCTL_RKNPU_MEM_MAP, 0xC0106443u);
OPENRKNN_UAPI_IOCTL(DRM_IOCTL_RKNPU_MEM_DESTROY, 0xC0106444u);
OPENRKNN_UAPI_IOCTL(DRM_IOCTL_RKNPU_MEM_SYNC, 0xC0206445u);

OPENRKNN_UAPI_IOCTL(IOCTL_RKNPU_ACTION, 0xC0087200u);
OPENRKNN_UAPI_IOCTL(IOCTL_RKNPU_SUBMIT, 0xC0687201u);
OPENRKNN_UAPI_IOCTL(IOCTL_RKNPU_MEM_CREATE, 0xC0307202u);
OPENRKNN_UAPI_IOCTL(IOCTL_RKNPU_MEM_MAP, 0xC0107203u);
OPENRKNN_UAPI_IOCTL(IOCTL_RKNPU_MEM_DESTROY, 0xC0107204u);
OPENRKNN_UAPI_IOCTL(IOCTL_RKNPU_MEM_SYNC, 0xC0207205u);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* OPENRKNN_RKNPU_IOCTL_H */
