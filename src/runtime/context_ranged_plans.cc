// Plans for shapes inside a dynamic model's input ranges that no shape set
// names (rknn_convert --dynamic-range; the vendor accepts its preset sets
// only). The first rknn_set_input_shapes with such a shape compiles a plan
// for it beside the sets' plans: the same device buffers (a shape that needs
// more than the largest set is refused), the weights the sets wrote, and
// streams in a regcmd buffer of its own. The plans are kept in a
// least-recently-used list bounded by the host and stream bytes they hold.
#include <chrono>
#include <cstdlib>

#include "base/log.h"
#include "runtime/context.h"

namespace rknn::runtime {
namespace {

const char* buffer_kind(int32_t id) { return id == kInternalBuffer ? "internal" : "input/output"; }

uint64_t values_bytes(const std::vector<cpu::HostTensor>& values) {
    uint64_t bytes = 0;
    for (const cpu::HostTensor& v : values) bytes += v.byte_size();
    return bytes;
}

}  // namespace

uint64_t Context::ranged_limit_from_env() {
    const char* text = std::getenv("RKNN_DYNAMIC_SHAPE_CACHE_MB");
    constexpr uint64_t kDefaultMiB = 256;
    if (text == nullptr || *text == '\0') return kDefaultMiB << 20;
    char* end = nullptr;
    const unsigned long long mib = std::strtoull(text, &end, 10);
    constexpr unsigned long long kMostMiB = 1ull << 30;  // 1 PiB: no wrap when shifted to bytes
    if (*end != '\0' || *text == '-' || mib > kMostMiB) {
        RKNN_LOGW("RKNN_DYNAMIC_SHAPE_CACHE_MB=%s is not a number of MiB (0 to 2^30); using %llu", text,
                  static_cast<unsigned long long>(kDefaultMiB));
        return kDefaultMiB << 20;
    }
    return static_cast<uint64_t>(mib) << 20;
}

StatusOr<Context::PlanState*> Context::ranged_plan(const std::vector<graph::Shape>& shapes, bool* compiled) {
    *compiled = false;
    for (auto it = ranged_.begin(); it != ranged_.end(); ++it)
        if (it->shapes == shapes) {
            ranged_.splice(ranged_.begin(), ranged_, it);
            return &ranged_.front().state;
        }
    const auto start = std::chrono::steady_clock::now();
    const std::string named = "input shapes " + graph::shapes_to_string(shapes);
    std::vector<std::shared_ptr<const CompiledPlan>> laid_out{main_set_->plan};
    for (const PlanState& s : sets_)
        if (&s != main_set_) laid_out.push_back(s.plan);
    StatusOr<std::shared_ptr<const CompiledPlan>> compiled_plan =
        CompiledPlan::compile_at(shapes, laid_out, *driver_, plan_options_);
    if (!compiled_plan.is_ok()) return compiled_plan.status().with_context(named);
    std::shared_ptr<const CompiledPlan> plan = std::move(compiled_plan).value();
    for (size_t id = 0; id < buffer_bytes_.size(); ++id)
        if (static_cast<int32_t>(id) != kWeightBuffer && plan->memory.buffer_bytes[id] > buffer_bytes_[id])
            return make_status(StatusCode::kInputInvalid,
                               "%s need %llu bytes of %s memory; the context holds %llu, what the largest shape set "
                               "needs (convert with these shapes as a set)",
                               named.c_str(), static_cast<unsigned long long>(plan->memory.buffer_bytes[id]),
                               buffer_kind(static_cast<int32_t>(id)), static_cast<unsigned long long>(buffer_bytes_[id]));
    StatusOr<std::shared_ptr<const LoweredSchedule>> lowered = plan->lowered(core_mask_, per_op_programs(core_mask_));
    if (!lowered.is_ok()) return lowered.status().with_context(named);
    // Made whole in a list of its own, then moved to the front (the nodes
    // stay where they are: the prepared calls point into the values).
    std::list<RangedPlan> made(1);
    RangedPlan& entry = made.front();
    StatusOr<DetachedLink> link = link_detached(*lowered.value());
    if (!link.is_ok()) return link.status().with_context(named);
    entry.streams = link.value().streams;
    try {
        entry.shapes = shapes;
        PlanState& s = entry.state;
        s.plan = std::move(plan);
        s.lowered = std::move(lowered).value();
        s.submits = std::move(link.value().submits);
        *compiled = true;  // from here the kernels' trial calls write the shared host values
        prepare_cpu_calls(s);
        prepare_fast_io(s);
        finish_linking(s);
        // (Its host values share the context's storage: counted, at most.)
        entry.bytes = entry.streams.size + s.plan->host_bytes() + values_bytes(s.values);
    } catch (...) {
        buffers_->discard(&entry.streams);
        throw;
    }
    ranged_.splice(ranged_.begin(), made);
    ranged_bytes_ += entry.bytes;
    const auto us = std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() - start).count();
    RKNN_LOG_AT(3, "%s: compiled on first use in %.1f ms (%zu plan(s) kept, %.1f of %.1f MiB)", named.c_str(),
                static_cast<double>(us) / 1e3, ranged_.size(), static_cast<double>(ranged_bytes_) / (1 << 20),
                static_cast<double>(ranged_limit_) / (1 << 20));
    return &entry.state;
}

Context::RangedPlanStats Context::ranged_plan_stats() {
    std::lock_guard<std::mutex> lock(mutex_);
    return {ranged_.size(), ranged_bytes_};
}

void Context::trim_ranged_plans() {
    for (auto it = ranged_.end(); ranged_bytes_ > ranged_limit_ && it != ranged_.begin();) {
        --it;
        if (&it->state == set_) continue;  // the plan running stays
        RKNN_LOG_AT(3, "input shapes %s: plan dropped (least recently used)", graph::shapes_to_string(it->shapes).c_str());
        buffers_->discard(&it->streams);
        ranged_bytes_ -= it->bytes;
        it = ranged_.erase(it);
    }
}

StatusOr<Context::DetachedLink> Context::link_detached(const LoweredSchedule& lowered) {
    DetachedLink link;
    RKNN_ASSIGN_OR_RETURN(link.streams, buffers_->create_detached(plan_aligned(regcmd_bytes(lowered.programs))));
    StatusOr<Submits> submits =
        link_segments(lowered.programs, buffers_->bases(), link.streams.dma_addr, link.streams.host, timeout_ms_);
    Status status = submits.status();
    if (status.is_ok()) status = buffers_->flush_detached(link.streams);
    if (!status.is_ok()) {
        buffers_->discard(&link.streams);
        return status;
    }
    link.submits = std::move(submits).value();
    return link;
}

StatusOr<std::vector<Context::DetachedLink>> Context::link_ranged_plans(
    const std::vector<std::shared_ptr<const LoweredSchedule>>& lowered) {
    std::vector<DetachedLink> links;
    links.reserve(lowered.size());  // push_back below cannot throw and leak a buffer
    for (const auto& one : lowered) {
        StatusOr<DetachedLink> link = link_detached(*one);
        if (!link.is_ok()) {
            discard_links(&links);
            return link.status();
        }
        links.push_back(std::move(link).value());
    }
    return links;
}

void Context::install_ranged_links(std::vector<DetachedLink> links,
                                   const std::vector<std::shared_ptr<const LoweredSchedule>>& lowered) {
    size_t k = 0;
    for (RangedPlan& entry : ranged_) {
        const uint64_t old_bytes = entry.streams.size;  // discard clears the object
        buffers_->discard(&entry.streams);
        ranged_bytes_ = ranged_bytes_ - old_bytes + links[k].streams.size;
        entry.bytes = entry.bytes - old_bytes + links[k].streams.size;
        entry.streams = links[k].streams;
        entry.state.submits = std::move(links[k].submits);
        if (entry.state.lowered != lowered[k]) {
            entry.state.lowered = lowered[k];
            finish_linking(entry.state);
        }
        ++k;
    }
}

void Context::discard_links(std::vector<DetachedLink>* links) {
    for (DetachedLink& link : *links) buffers_->discard(&link.streams);
    links->clear();
}

}  // namespace rknn::runtime
