// The object behind an rknn_matmul_ctx handle.
#pragma once

#include <memory>

#include "api/handle_table.h"
#include "matmul/matmul_context.h"

namespace rknn::api {

class MatmulHandle : public HandleObject {
public:
    static constexpr HandleKind kHandleKind = HandleKind::kMatmul;
    explicit MatmulHandle(std::unique_ptr<matmul::MatmulContext> context) : context_(std::move(context)) {}
    HandleKind kind() const override { return kHandleKind; }
    matmul::MatmulContext& context() { return *context_; }

private:
    std::unique_ptr<matmul::MatmulContext> context_;
};

}  // namespace rknn::api
