// Typed operator attributes (the ONNX attribute kinds OpenRKNN uses).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace rknn::graph {

struct Attribute {
    enum class Kind : uint8_t { kInt, kFloat, kString, kInts, kFloats };
    std::string name;
    Kind kind = Kind::kInt;
    int64_t i = 0;
    float f = 0.0f;
    std::string s;
    std::vector<int64_t> ints;
    std::vector<float> floats;
};

class Attributes {
public:
    const Attribute* find(const std::string& name) const;
    bool has(const std::string& name) const { return find(name) != nullptr; }

    // Getters return `fallback` when the attribute is absent or of another kind.
    int64_t get_int(const std::string& name, int64_t fallback) const;
    float get_float(const std::string& name, float fallback) const;
    std::string get_string(const std::string& name, const std::string& fallback) const;
    std::vector<int64_t> get_ints(const std::string& name, const std::vector<int64_t>& fallback = {}) const;
    std::vector<float> get_floats(const std::string& name, const std::vector<float>& fallback = {}) const;

    // Setters replace an attribute of the same name.
    void set_int(const std::string& name, int64_t value);
    void set_float(const std::string& name, float value);
    void set_string(const std::string& name, const std::string& value);
    void set_ints(const std::string& name, const std::vector<int64_t>& value);
    void set_floats(const std::string& name, const std::vector<float>& value);
    void erase(const std::string& name);

    const std::vector<Attribute>& items() const { return items_; }
    void add(Attribute attribute);

private:
    Attribute& slot(const std::string& name, Attribute::Kind kind);
    std::vector<Attribute> items_;
};

}  // namespace rknn::graph
