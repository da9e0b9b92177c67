// The front of a multi-batch model (batch_fanout.h): how it is made from the
// batch-1 context, and the calls that choose its cores.
#include <algorithm>

#include "base/log.h"
#include "runtime/batch_fanout.h"
#include "runtime/context.h"

namespace rknn::runtime {

StatusOr<std::shared_ptr<Context>> Context::make_batched(std::shared_ptr<Context> first, uint32_t batch) {
    if (first->dynamic_)
        return Status(StatusCode::kModelInvalid,
                      "the model is multi-batch and has shape sets; it can be one or the other");
    const graph::Graph& g = first->graph();
    for (const std::vector<int32_t>* list : {&g.inputs, &g.outputs}) {
        for (int32_t t : *list) {
            const graph::Tensor& tensor = g.tensors[static_cast<size_t>(t)];
            if (tensor.shape.empty() || tensor.shape[0] != 1)
                return Status(StatusCode::kModelInvalid, "multi-batch model: '" + tensor.name + "' has shape " +
                                                             graph::shape_to_string(tensor.shape) +
                                                             " (each input and output must start with a batch of 1)");
        }
    }
    if (first->flags_ & (RKNN_FLAG_MEM_ALLOC_OUTSIDE | RKNN_FLAG_INTERNAL_ALLOC_OUTSIDE))
        return Status(StatusCode::kUnimplemented,
                      "multi-batch model with RKNN_FLAG_MEM_ALLOC_OUTSIDE / INTERNAL_ALLOC_OUTSIDE: not implemented");
    // One context per core that can run an item at the same time (spec 5.3);
    // a model that never runs needs one.
    const auto cores = static_cast<uint32_t>(std::max(1, first->driver_->soc->num_cores));
    const uint32_t count = first->info_only() ? 1 : std::min(batch, cores);
    std::vector<std::shared_ptr<Context>> contexts{first};
    for (uint32_t c = 1; c < count; ++c) {
        RKNN_ASSIGN_OR_RETURN(std::shared_ptr<Context> copy, first->duplicate());
        contexts.push_back(std::move(copy));
    }
    RKNN_LOG_AT(3, "multi-batch model: %u items per run on %u context(s)", batch, count);
    return front_of(*first, std::make_unique<BatchFanout>(std::move(contexts), batch));
}

std::shared_ptr<Context> Context::front_of(const Context& like, std::unique_ptr<BatchFanout> fanout) {
    std::shared_ptr<Context> front(new Context());
    front->flags_ = like.flags_;
    front->driver_ = like.driver_;
    front->batch_ = std::move(fanout);
    return front;
}

uint32_t Context::batch() const {
    return batch_ ? batch_->batch() : 1;
}

const graph::Graph& Context::graph() const {
    return batch_ ? batch_->contexts()[0]->graph() : main_set_->plan->graph;
}

size_t Context::batch_contexts_in_use() const { return batch_ ? batch_->contexts_in_use() : 0; }

bool Context::in_own_callbacks() const {
    if (in_callbacks_of(this)) return true;
    if (!batch_) return false;
    const auto& contexts = batch_->contexts();
    return std::any_of(contexts.begin(), contexts.end(),
                       [](const std::shared_ptr<Context>& c) { return in_callbacks_of(c.get()); });
}

Status Context::set_batch_core_num(int core_num) {
    std::lock_guard<std::mutex> lock(mutex_);
    const hw::SocProfile& soc = *driver_->soc;
    if (soc.num_cores < 2)
        return make_status(StatusCode::kInvalidArgument,
                           "%s has one NPU core; rknn_set_batch_core_num is for RK3588 and RK3576", soc.name);
    if (core_num < 1 || core_num > soc.num_cores)
        return make_status(StatusCode::kInvalidArgument, "core_num %d: %s has cores 1..%d", core_num, soc.name,
                           soc.num_cores);
    if (!batch_) {
        RKNN_LOG_AT(3, "rknn_set_batch_core_num: the model is not multi-batch, nothing changes");
        return Status::ok();
    }
    return apply_batch_cores(0, static_cast<uint32_t>(core_num));
}

Status Context::apply_batch_cores(uint32_t mask, uint32_t core_num) {
    const size_t available = batch_->contexts().size();
    std::vector<uint32_t> masks;
    if (mask == 0) {
        const size_t wanted = core_num == 0 ? available : core_num;
        masks.assign(std::min(wanted, available), 0);  // each on the kernel's choice of core
    } else {
        // One context pinned to each core of the mask, lowest first.
        for (uint32_t bit = 0; bit < 32 && masks.size() < available; ++bit)
            if (mask & (1u << bit)) masks.push_back(1u << bit);
    }
    RKNN_RETURN_IF_ERROR(batch_->use_cores(masks));
    batch_mask_ = mask;
    batch_core_num_ = core_num;
    return Status::ok();
}

}  // namespace rknn::runtime
