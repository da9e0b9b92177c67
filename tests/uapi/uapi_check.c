/*
 * Kernel UAPI transcriptions: every struct size, field offset and ioctl number is
 * pinned by static asserts inside the headers, so compiling this file (as C11
 * here and as C++ in uapi_check_cxx.cc) is the main check. At run time it also
 * decodes a few ioctl numbers back into (type, nr, size).
 */
#include <stdio.h>

#include "rknpu_ioctl.h"
#include "rocket_accel.h"

static int g_failures = 0;

static void expect(int condition, const char* what)
{
    if (!condition) {
        ++g_failures;
        printf("MISMATCH %s\n", what);
    }
}

int main(void)
{
    expect(_IOC_TYPE(DRM_IOCTL_RKNPU_SUBMIT) == 'd', "rknpu DRM ioctls use magic 'd'");
    expect(_IOC_NR(DRM_IOCTL_RKNPU_SUBMIT) == 0x41, "rknpu SUBMIT is DRM_COMMAND_BASE + 1");
    expect(_IOC_SIZE(DRM_IOCTL_RKNPU_SUBMIT) == sizeof(struct rknpu_submit), "SUBMIT encodes its size");
    expect(_IOC_TYPE(IOCTL_RKNPU_MEM_SYNC) == 'r', "rknpu misc ioctls use magic 'r'");
    expect(_IOC_NR(IOCTL_RKNPU_MEM_SYNC) == RKNPU_NR_MEM_SYNC, "misc MEM_SYNC nr");
    expect(_IOC_SIZE(DRM_IOCTL_RKNPU_MEM_CREATE_V1) == RKNPU_MEM_CREATE_V1_SIZE, "old MEM_CREATE is 40 bytes");
    expect(_IOC_DIR(DRM_IOCTL_ROCKET_SUBMIT) == _IOC_WRITE, "rocket SUBMIT is write-only");
    expect(_IOC_DIR(DRM_IOCTL_ROCKET_CREATE_BO) == (_IOC_READ | _IOC_WRITE), "rocket CREATE_BO is read-write");
    expect(RKNPU_MEM_MASK == 0x7ff, "all rknpu memory flags fit the mask");
    expect(RKNPU_JOB_MASK == (RKNPU_JOB_PC | RKNPU_JOB_NONBLOCK | RKNPU_JOB_PINGPONG | RKNPU_JOB_FENCE_IN |
                              RKNPU_JOB_FENCE_OUT),
           "job mask is the OR of the job flags");
    expect(RKNPU_SET_IOMMU_DOMAIN_ID == 25, "last action code");
    printf("kernel UAPI check (%s): %d mismatches\n",
#if defined(__cplusplus)
           "C++",
#else
           "C11",
#endif
           g_failures);
    return g_failures == 0 ? 0 : 1;
}
