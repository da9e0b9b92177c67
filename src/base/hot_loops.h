// Hot loops that x86-64's baseline SSE2 vectorises poorly (the emulator's
// int64 DPU lanes, the runtime's layout conversions) get an AVX2 clone from
// GCC, picked at load time (an ifunc) on CPUs that have it. Elsewhere (other
// compilers, aarch64, where NEON is the baseline) the one portable version
// is built, and so it is under ThreadSanitizer, whose runtime is not yet up
// when ifunc resolvers run (the programs crash before main).
#pragma once

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && !defined(__SANITIZE_THREAD__)
#define RKNN_HOT_LOOP __attribute__((target_clones("avx2", "default")))
// Float loops over long rows, which also get an AVX-512 clone (twice the lanes).
#define RKNN_HOT_LOOP_WIDE __attribute__((target_clones("avx512f", "avx2", "default")))
#else
#define RKNN_HOT_LOOP
#define RKNN_HOT_LOOP_WIDE
#endif

// Loops that multiply float16 values (exact in float32) and add: a fused
// multiply-add gives the same float as the separate multiply and add, so
// they may contract. An x86-64-v3 clone (AVX2 with FMA) does; the default
// clone has no FMA to contract into; aarch64 (GCC) contracts into FMLA.
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && !defined(__SANITIZE_THREAD__)
#define RKNN_HOT_LOOP_EXACT_PRODUCTS \
    __attribute__((target_clones("arch=x86-64-v3", "default"), optimize("fp-contract=fast")))
#elif defined(__GNUC__) && !defined(__clang__)
#define RKNN_HOT_LOOP_EXACT_PRODUCTS __attribute__((optimize("fp-contract=fast")))
#else
#define RKNN_HOT_LOOP_EXACT_PRODUCTS
#endif
