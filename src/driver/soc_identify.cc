#include "driver/soc_identify.h"

#include <fstream>
#include <iterator>

namespace rknn::driver {

const hw::SocProfile* soc_from_compatible(std::string_view compatible) {
    constexpr std::string_view kVendor = "rockchip,";
    size_t start = 0;
    while (start < compatible.size()) {
        size_t end = compatible.find('\0', start);
        if (end == std::string_view::npos) end = compatible.size();
        const std::string_view entry = compatible.substr(start, end - start);
        start = end + 1;
        if (entry.substr(0, kVendor.size()) != kVendor) continue;
        std::string_view model = entry.substr(kVendor.size());
        // RK3588S is the RK3588 in a smaller package: one NPU, one profile.
        if (model == "rk3588s") model = "rk3588";
        // Board entries ("rockchip,rk3588-evb1-v10") name no SoC; only an exact
        // SoC name does.
        if (const hw::SocProfile* soc = hw::find_soc(model)) return soc;
    }
    return nullptr;
}

StatusOr<const hw::SocProfile*> identify_board_soc(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in)
        return Status(StatusCode::kUnavailable, "cannot tell which SoC this is: " + path + " cannot be read");
    std::string text;
    text.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
    if (text.size() > 4096) text.resize(4096);  // a real list is a few dozen bytes
    if (const hw::SocProfile* soc = soc_from_compatible(text)) return soc;
    std::string shown = text;
    for (char& ch : shown) {
        if (ch == '\0') ch = ' ';
        else if (static_cast<unsigned char>(ch) < 0x20 || static_cast<unsigned char>(ch) > 0x7e) ch = '?';
    }
    std::string known;
    for (const std::string& name : hw::soc_names()) known += (known.empty() ? "" : ", ") + name;
    return Status(StatusCode::kUnavailable, "cannot tell which SoC this is: " + path + " says \"" + shown +
                                                "\", which names none of " + known);
}

}  // namespace rknn::driver
