#include "driver/soc_identify.h"

#include <cctype>
#include <fstream>

namespace rknn::driver {

namespace {

// Calls `use` with each piece of `text` between `separator`s until it returns
// a SoC; that SoC, or nullptr.
template <typename Use>
const hw::SocProfile* first_in_pieces(std::string_view text, char separator, Use use) {
    size_t start = 0;
    while (start < text.size()) {
        size_t end = text.find(separator, start);
        if (end == std::string_view::npos) end = text.size();
        if (const hw::SocProfile* soc = use(text.substr(start, end - start))) return soc;
        start = end + 1;
    }
    return nullptr;
}

// The first page of a file (these are a few dozen bytes; never more of anything
// else); false when it cannot be opened.
bool read_first_page(const std::string& path, std::string* text) {
    std::ifstream in(path, std::ios::binary);
    if (!in) return false;
    text->assign(4096, '\0');
    in.read(text->data(), static_cast<std::streamsize>(text->size()));
    text->resize(static_cast<size_t>(in.gcount()));
    return true;
}

}  // namespace

const hw::SocProfile* soc_from_compatible(std::string_view compatible) {
    constexpr std::string_view kVendor = "rockchip,";
    return first_in_pieces(compatible, '\0', [&](std::string_view entry) -> const hw::SocProfile* {
        while (!entry.empty() && std::isspace(static_cast<unsigned char>(entry.back()))) entry.remove_suffix(1);
        if (entry.substr(0, kVendor.size()) != kVendor) return nullptr;
        std::string_view model = entry.substr(kVendor.size());
        // RK3588S is the RK3588 in a smaller package: one NPU, one profile.
        if (model == "rk3588s") model = "rk3588";
        // Board entries ("rockchip,rk3588-evb1-v10") name no SoC; only an exact
        // SoC name does.
        return hw::find_soc(model);
    });
}

StatusOr<const hw::SocProfile*> identify_board_soc(const std::string& path) {
    std::string text;
    if (!read_first_page(path, &text))
        return Status(StatusCode::kUnavailable, "cannot tell which SoC this is: " + path + " cannot be read");
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
    return first_in_pieces(uevent, '\n', [&](std::string_view line) -> const hw::SocProfile* {
        const size_t equals = line.find('=');
        if (line.substr(0, kKey.size()) != kKey || equals == std::string_view::npos) return nullptr;
        const std::string_view value = line.substr(equals + 1);
        for (const std::string& name : hw::soc_names()) {
            const hw::SocProfile* soc = hw::find_soc(name);
            if (soc != nullptr && soc->compatible != nullptr && value == soc->compatible) return soc;
        }
        return nullptr;
    });
}

std::string uevent_path_of(const std::string& node) {
    const size_t slash = node.rfind('/');
    const std::string name = slash == std::string::npos ? node : node.substr(slash + 1);
    const char* cls = node.rfind("/dev/dri/", 0) == 0 ? "drm" : node.rfind("/dev/accel/", 0) == 0 ? "accel" : "misc";
    return std::string("/sys/class/") + cls + "/" + name + "/device/uevent";
}

StatusOr<const hw::SocProfile*> identify_node_soc(const std::string& node) {
    StatusOr<const hw::SocProfile*> found = identify_board_soc();
    if (found.is_ok()) return found;
    std::string uevent;
    if (read_first_page(uevent_path_of(node), &uevent)) {
        if (const hw::SocProfile* soc = soc_from_uevent(uevent)) return soc;
    }
    return found;
}

}  // namespace rknn::driver
