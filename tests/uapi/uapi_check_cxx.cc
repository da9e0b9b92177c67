// The kernel UAPI headers compiled as C++ (their static asserts run here too).
#include "uapi_check.c"
