// Hot loops that x86-64's baseline SSE2 vectorises poorly (the emulator's
// int64 DPU lanes, the runtime's layout conversions) get an AVX2 clone from
// GCC, picked at load time (an ifunc) on CPUs that have it. Elsewhere (other
// compilers, aarch64, where NEON is the baseline) the one portable version
// is built, and so it is under ThreadSanitizer, whose runtime is not yet up
// when ifunc resolvers run (the programs crash before main).
#pragma once

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && !defined(__SANITIZE_THREAD__)
#define RKNN_HOT_LOOP __attribute__((target_clones("avx2", "default")))
#else
#define RKNN_HOT_LOOP
#endif
