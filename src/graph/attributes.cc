#include "graph/attributes.h"

#include <algorithm>

namespace rknn::graph {

const Attribute* Attributes::find(const std::string& name) const {
    for (const Attribute& item : items_) {
        if (item.name == name) return &item;
    }
    return nullptr;
}

int64_t Attributes::get_int(const std::string& name, int64_t fallback) const {
    const Attribute* a = find(name);
    return a && a->kind == Attribute::Kind::kInt ? a->i : fallback;
}

float Attributes::get_float(const std::string& name, float fallback) const {
    const Attribute* a = find(name);
    if (a && a->kind == Attribute::Kind::kFloat) return a->f;
    if (a && a->kind == Attribute::Kind::kInt) return static_cast<float>(a->i);
    return fallback;
}

std::string Attributes::get_string(const std::string& name, const std::string& fallback) const {
    const Attribute* a = find(name);
    return a && a->kind == Attribute::Kind::kString ? a->s : fallback;
}

std::vector<int64_t> Attributes::get_ints(const std::string& name, const std::vector<int64_t>& fallback) const {
    const Attribute* a = find(name);
    return a && a->kind == Attribute::Kind::kInts ? a->ints : fallback;
}

std::vector<float> Attributes::get_floats(const std::string& name, const std::vector<float>& fallback) const {
    const Attribute* a = find(name);
    return a && a->kind == Attribute::Kind::kFloats ? a->floats : fallback;
}

Attribute& Attributes::slot(const std::string& name, Attribute::Kind kind) {
    erase(name);
    Attribute attribute;
    attribute.name = name;
    attribute.kind = kind;
    items_.push_back(std::move(attribute));
    return items_.back();
}

void Attributes::set_int(const std::string& name, int64_t value) { slot(name, Attribute::Kind::kInt).i = value; }
void Attributes::set_float(const std::string& name, float value) { slot(name, Attribute::Kind::kFloat).f = value; }
void Attributes::set_string(const std::string& name, const std::string& value) {
    slot(name, Attribute::Kind::kString).s = value;
}
void Attributes::set_ints(const std::string& name, const std::vector<int64_t>& value) {
    slot(name, Attribute::Kind::kInts).ints = value;
}
void Attributes::set_floats(const std::string& name, const std::vector<float>& value) {
    slot(name, Attribute::Kind::kFloats).floats = value;
}

void Attributes::erase(const std::string& name) {
    items_.erase(std::remove_if(items_.begin(), items_.end(), [&](const Attribute& a) { return a.name == name; }),
                 items_.end());
}

void Attributes::add(Attribute attribute) {
    erase(attribute.name);
    items_.push_back(std::move(attribute));
}

}  // namespace rknn::graph
