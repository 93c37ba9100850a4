// SPDX-License-Identifier: GPL-2.0-or-later
#include "vcpufold/agent/systemd_units.h"

#include <systemd/sd-bus.h>

#include <cstring>

namespace vcpufold::agent {
namespace {

constexpr std::uint64_t kCallTimeoutUsec = 5'000'000;

class BusUnits final : public SystemdUnits {
 public:
  explicit BusUnits(sd_bus* bus) : bus_(bus) {}
  ~BusUnits() override { sd_bus_flush_close_unref(bus_); }

  Expected<void> setAllowedCpus(const std::string& unit, const protocol::CpuSet& cpus) override {
    const auto mask = systemdCpuMask(cpus);
    sd_bus_message* call = nullptr;
    sd_bus_message* reply = nullptr;
    sd_bus_error error = SD_BUS_ERROR_NULL;
    int r = sd_bus_message_new_method_call(bus_, &call, "org.freedesktop.systemd1", "/org/freedesktop/systemd1",
                                           "org.freedesktop.systemd1.Manager", "SetUnitProperties");
    // SetUnitProperties(in s name, in b runtime, in a(sv) properties)
    if (r >= 0) r = sd_bus_message_append(call, "sb", unit.c_str(), 1);
    if (r >= 0) r = sd_bus_message_open_container(call, 'a', "(sv)");
    if (r >= 0) r = sd_bus_message_open_container(call, 'r', "sv");
    if (r >= 0) r = sd_bus_message_append(call, "s", "AllowedCPUs");
    if (r >= 0) r = sd_bus_message_open_container(call, 'v', "ay");
    if (r >= 0) r = sd_bus_message_append_array(call, 'y', mask.data(), mask.size());
    for (int i = 0; i < 3 && r >= 0; ++i) r = sd_bus_message_close_container(call);
    if (r >= 0) r = sd_bus_call(bus_, call, kCallTimeoutUsec, &error, &reply);
    std::string why = r < 0 ? (error.message ? error.message : std::strerror(-r)) : "";
    sd_bus_error_free(&error);
    sd_bus_message_unref(reply);
    sd_bus_message_unref(call);
    if (r < 0) return Error{unit + ": set AllowedCPUs: " + why};
    return {};
  }

 private:
  sd_bus* bus_;
};

}  // namespace

std::vector<std::uint8_t> systemdCpuMask(const protocol::CpuSet& cpus) {
  std::vector<std::uint8_t> mask;
  for (unsigned cpu : cpus.toVector()) {
    if (mask.size() <= cpu / 8) mask.resize(cpu / 8 + 1, 0);
    mask[cpu / 8] = static_cast<std::uint8_t>(mask[cpu / 8] | (1u << (cpu % 8)));
  }
  return mask;
}

Expected<std::unique_ptr<SystemdUnits>> connectSystemd() {
  sd_bus* bus = nullptr;
  const int r = sd_bus_open_system(&bus);
  if (r < 0) return Error{std::string("cannot connect to the system bus: ") + std::strerror(-r)};
  return std::unique_ptr<SystemdUnits>(std::make_unique<BusUnits>(bus));
}

}  // namespace vcpufold::agent
