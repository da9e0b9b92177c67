#include "driver/soc_identify.h"

#include <cctype>
#include <fstream>

namespace rknn::driver {

const hw::SocProfile* soc_from_compatible(std::string_view compatible) {
    constexpr std::string_view kVendor = "rockchip,";
    size_t start = 0;
    while (start < compatible.size()) {
        size_t end = compatible.find('\0', start);
        if (end == std::string_view::npos) end = compatible.size();
        std::string_view entry = compatible.substr(start, end - start);
        start = end + 1;
        while (!entry.empty() && std::isspace(static_cast<unsigned char>(entry.back()))) entry.remove_suffix(1);
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
    // A real list is a few dozen bytes; read no more than a page of anything else.
    std::string text(4096, '\0');
    in.read(text.data(), static_cast<std::streamsize>(text.size()));
    text.resize(static_cast<size_t>(in.gcount()));
    if (const hw::SocProfile* soc = soc_from_compatible(text)) return soc;
    std::string shown = text.substr(0, 200);
    for (char& ch : shown) {
        if (ch == '\0') ch = ' ';
        else if (static_cast<unsigned char>(ch) < 0x20 || static_cast<unsigned char>(ch) > 0x7e) ch = '?';
    }
    std::string known;
    for (const std::string& name : hw::soc_names()) known += (known.empty() ? "" : ", ") + name;
    return Status(StatusCode::kUnavailable, "cannot tell which SoC this is: " + path + " says \"" + shown +
                                                "\", which names none of " + known);
}

const hw::SocProfile* soc_from_uevent(std::string_view uevent) {
    constexpr std::string_view kKey = "OF_COMPATIBLE_";
    size_t start = 0;
    while (start < uevent.size()) {
        size_t end = uevent.find('\n', start);
        if (end == std::string_view::npos) end = uevent.size();
        const std::string_view line = uevent.substr(start, end - start);
        start = end + 1;
        const size_t equals = line.find('=');
        if (line.substr(0, kKey.size()) != kKey || equals == std::string_view::npos) continue;
        const std::string_view value = line.substr(equals + 1);
        for (const std::string& name : hw::soc_names()) {
            const hw::SocProfile* soc = hw::find_soc(name);
            if (soc != nullptr && soc->compatible != nullptr && value == soc->compatible) return soc;
        }
    }
    return nullptr;
}

std::string uevent_path_of(const std::string& node) {
    const size_t slash = node.rfind('/');
    const std::string name = slash == std::string::npos ? node : node.substr(slash + 1);
    const char* cls = node.rfind("/dev/dri/", 0) == 0 ? "drm" : node.rfind("/dev/accel/", 0) == 0 ? "accel" : "misc";
    return std::string("/sys/class/") + cls + "/" + name + "/device/uevent";
}

}  // namespace rknn::driver
