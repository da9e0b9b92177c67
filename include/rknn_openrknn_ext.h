/*
 * OpenRKNN extensions to the vendor API: what librknnrt does not offer.
 * Their values sit far above the vendor's enums, so that a program written
 * for the vendor's runtime never meets them; the vendor's runtime answers
 * them with an error. The header compiles as C99 and as C++.
 */
#ifndef RKNN_OPENRKNN_EXT_H
#define RKNN_OPENRKNN_EXT_H

#include "rknn_api.h"

#ifdef __cplusplus
extern "C" {
#endif

/*
 * rknn_query(ctx, RKNN_QUERY_OPENRKNN_INPUT_SHAPE_RANGE, &range, sizeof(range)),
 * range.index set: the shapes input `index` takes beyond the model's shape
 * sets (rknn_convert --dynamic-range). Each dim d from min[d] to max[d] in
 * steps of step[d], 4-D shapes as NHWC (as rknn_set_input_shapes takes
 * them). n_dims is 0 where the model takes no shapes beyond its shape sets,
 * or has static shapes: unlike RKNN_QUERY_INPUT_DYNAMIC_RANGE, the query
 * succeeds on every model, so that a program can ask without an error;
 * shape_number tells a dynamic-shape model (its shape sets) from a static
 * one (0).
 */
/* RKNN_QUERY_OPENRKNN_INPUT_SHAPE_RANGE = 0x1000 is an enumerator of
 * rknn_query_cmd (rknn_api.h), so that the enum's range holds it. This macro
 * lets a program test for the extension with the preprocessor. */
#define RKNN_OPENRKNN_HAS_INPUT_SHAPE_RANGE 1

typedef struct _rknn_openrknn_shape_range {
    uint32_t index;
    uint32_t shape_number; /* the model's shape sets; 0: static shapes */
    uint32_t n_dims;
    rknn_tensor_format fmt;
    uint32_t min[RKNN_MAX_DIMS];
    uint32_t max[RKNN_MAX_DIMS];
    uint32_t step[RKNN_MAX_DIMS];
} rknn_openrknn_shape_range;

#ifdef __cplusplus
}
#endif

#endif /* RKNN_OPENRKNN_EXT_H */
