#include "base/status.h"

#include <gtest/gtest.h>

namespace {

using rknn::Status;
using rknn::StatusCode;
using rknn::StatusOr;

StatusOr<int> parse_positive(int value) {
    if (value <= 0) return RKNN_INVALID_ARGUMENT("%d is not positive", value);
    return value;
}

Status double_it(int value, int* out) {
    RKNN_ASSIGN_OR_RETURN(const int parsed, parse_positive(value));
    *out = parsed * 2;
    return Status::ok();
}

TEST(Status, CarriesCodeAndFormattedMessage) {
    const Status status = RKNN_INVALID_ARGUMENT("index %u >= %u", 3u, 2u);
    EXPECT_FALSE(status.is_ok());
    EXPECT_EQ(status.code(), StatusCode::kInvalidArgument);
    EXPECT_EQ(status.message(), "index 3 >= 2");
    EXPECT_EQ(status.with_context("rknn_query").message(), "rknn_query: index 3 >= 2");
    EXPECT_TRUE(Status::ok().with_context("x").is_ok());
}

TEST(Status, MacrosPropagateErrors) {
    int out = 0;
    EXPECT_TRUE(double_it(21, &out).is_ok());
    EXPECT_EQ(out, 42);
    const Status failed = double_it(-1, &out);
    EXPECT_EQ(failed.code(), StatusCode::kInvalidArgument);
    EXPECT_EQ(failed.message(), "-1 is not positive");
}

TEST(Status, StatusOrFromOkStatusIsAnError) {
    StatusOr<int> broken{Status::ok()};
    EXPECT_FALSE(broken.is_ok());
    EXPECT_EQ(broken.status().code(), StatusCode::kInternal);
}

}  // namespace
