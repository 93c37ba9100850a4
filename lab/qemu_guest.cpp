// SPDX-License-Identifier: GPL-2.0-or-later
#include "qemu_guest.h"

#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <array>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <thread>
#include <utility>

#include "child_process.h"
#include "unix_socket.h"

namespace vcpufold::testing {
namespace {

using Clock = std::chrono::steady_clock;

bool onPath(const std::string& program) {
  return std::system(("command -v " + program + " >/dev/null 2>&1").c_str()) == 0;
}

}  // namespace

std::optional<std::string> labUnavailableReason() {
  if (!onPath("qemu-system-x86_64")) return "qemu-system-x86_64 is not installed (scripts/install-deps.sh installs it)";
  if (!std::filesystem::exists("/bin/busybox")) return "busybox-static is not installed";
  if (!onPath("cpio")) return "cpio is not installed";
  return std::nullopt;
}

std::string labDirectory() {
  const char* configured = std::getenv("VCPUFOLD_LAB_DIR");
  return configured && *configured ? configured : "/var/tmp/vcpufold-lab";
}

std::string patchedKernelImage() { return labDirectory() + "/kernel-test/build-on/arch/x86/boot/bzImage"; }

std::string fetchHackbench() {
  const std::string lab = labDirectory();
  runShell("mkdir -p " + lab + "/debs && cd " + lab + "/debs && (ls rt-tests_*.deb >/dev/null 2>&1 || " +
           "apt-get download rt-tests) && rm -rf " + lab + "/rt-tests && dpkg-deb -x $(ls rt-tests_*.deb | head -1) " +
           lab + "/rt-tests");
  return lab + "/rt-tests/usr/bin/hackbench";
}

std::optional<LabImage> buildLabImage(const std::string& name, const std::vector<std::string>& files,
                                      const std::vector<std::string>& binaries, std::string& log) {
  std::string command = "IMAGE=" + name + " '" VCPUFOLD_SOURCE_DIR "/tests/lab/build-guest.sh'";
  for (const auto& file : files) command += " --add '" + file + "'";
  for (const auto& binary : binaries) command += " --bin '" + binary + "'";
  command += " 2>&1";
  FILE* pipe = ::popen(command.c_str(), "r");
  if (!pipe) return std::nullopt;
  std::array<char, 4096> chunk{};
  while (std::fgets(chunk.data(), chunk.size(), pipe)) log += chunk.data();
  if (::pclose(pipe) != 0) return std::nullopt;
  std::istringstream lines(log);
  std::vector<std::string> all;
  for (std::string line; std::getline(lines, line);) all.push_back(line);
  if (all.size() < 2) return std::nullopt;
  return LabImage{all[all.size() - 2], all.back()};
}

namespace {

std::vector<std::string> nonEmptyLines(const std::string& text) {
  std::vector<std::string> result;
  std::istringstream stream(text);
  for (std::string line; std::getline(stream, line);)
    if (!line.empty()) result.push_back(line);
  return result;
}

}  // namespace

namespace {

// The one vcpufold-agent and one vcpufold-hostd package in `directory`.
std::optional<std::pair<std::string, std::string>> packagesIn(const std::filesystem::path& directory,
                                                              std::string& log) {
  std::vector<std::string> agent;
  std::vector<std::string> hostd;
  std::error_code error;
  for (const auto& entry : std::filesystem::directory_iterator(directory, error)) {
    const std::string name = entry.path().filename().string();
    if (!name.ends_with("_amd64.deb")) continue;
    if (name.starts_with("vcpufold-agent_")) agent.push_back(entry.path().string());
    if (name.starts_with("vcpufold-hostd_")) hostd.push_back(entry.path().string());
  }
  if (agent.size() == 1 && hostd.size() == 1) return std::pair{agent.front(), hostd.front()};
  log += "expected one vcpufold-agent and one vcpufold-hostd .deb in " + directory.string() +
         " (scripts/build-debs.sh makes them; ctest runs it as packaging.build_debs), found " +
         std::to_string(agent.size()) + " and " + std::to_string(hostd.size()) + "\n";
  return std::nullopt;
}

}  // namespace

std::optional<BuiltPackages> builtPackages(const std::filesystem::path& debDirectory, std::string& log) {
  const auto current = packagesIn(debDirectory, log);
  const auto next = packagesIn(debDirectory / "next", log);
  if (!current || !next) return std::nullopt;
  return BuiltPackages{current->first, current->second, next->first, next->second};
}

std::optional<std::string> systemdGuestUnavailableReason() {
  if (auto reason = labUnavailableReason()) return reason;
  if (::geteuid() != 0) return "building the systemd guest needs root (debootstrap, chroot)";
  if (!onPath("debootstrap")) return "debootstrap is not installed";
  return std::nullopt;
}

std::optional<LabImage> buildSystemdGuestImage(const std::string& agentDeb, bool uninstalled, std::string& log,
                                               const std::vector<std::string>& extraFiles, const std::string& release) {
  std::string options = "--release " + release + (uninstalled ? " --uninstalled " : " ");
  for (const auto& file : extraFiles) options += "--with " + file + " ";
  const std::string output =
      runShell(VCPUFOLD_SOURCE_DIR "/tests/lab/build-systemd-guest.sh " + options + agentDeb + " 2>&1");
  log += output;
  const auto built = nonEmptyLines(output);
  if (built.size() < 2 || !std::filesystem::exists(built.back())) return std::nullopt;
  return LabImage{built[built.size() - 2], built.back()};
}

std::string QemuGuest::accelerator() {
  // KVM only where the CPU really has hardware virtualization: /dev/kvm alone
  // may be an emulation that cannot run stock guest kernels.
  std::ifstream cpuinfo("/proc/cpuinfo");
  std::stringstream text;
  text << cpuinfo.rdbuf();
  const bool hardware = text.str().find(" vmx") != std::string::npos || text.str().find(" svm") != std::string::npos;
  return hardware && std::filesystem::exists("/dev/kvm") ? "kvm" : "tcg";
}

QemuGuest::QemuGuest(QemuGuestSpec spec)
    : spec_(std::move(spec)), control_((spec_.runDirectory / "ctl.sock").string()) {
  std::filesystem::create_directories(spec_.runDirectory);
  if (!spec_.vmName.empty()) std::filesystem::create_directories(spec_.qmpDirectory);
  const auto dir = spec_.runDirectory.string();
  const bool kvm = accelerator() == "kvm";
  std::vector<std::string> args{"-accel",
                                kvm ? "kvm" : "tcg,thread=multi",
                                "-cpu",
                                kvm ? "host" : "max",
                                "-smp",
                                spec_.smp,
                                "-m",
                                spec_.memory,
                                "-M",
                                "pc",
                                "-nodefaults",
                                "-no-user-config",
                                "-display",
                                "none",
                                "-no-reboot",
                                "-kernel",
                                spec_.image.kernel,
                                "-initrd",
                                spec_.image.initrd,
                                "-append",
                                "console=ttyS0 panic=-1 quiet " + spec_.kernelArgs,
                                "-serial",
                                "file:" + consoleLog(),
                                "-device",
                                "virtio-serial-pci,id=vser0",
                                "-chardev",
                                "socket,id=ctl,path=" + dir + "/ctl.sock,server=on,wait=off",
                                "-device",
                                "virtserialport,bus=vser0.0,chardev=ctl,name=org.vcpufold.lab.ctl",
                                "-qmp",
                                "unix:" + qmpSocket() + ",server=on,wait=off"};
  const std::vector<std::string> hintPort =
      spec_.vmName.empty()
          ? std::vector<std::string>{"-chardev", "socket,id=hint,path=" + hintSocket() + ",server=on,wait=off",
                                     "-device",
                                     "virtserialport,bus=vser0.0,chardev=hint,name=org.vcpufold.hint.0,id=hintport"}
          // Exactly the arguments docs/hostd.md gives ("Inventory backends").
          : std::vector<std::string>{
                "-name",    spec_.vmName,
                "-chardev", "socket,id=vcpufold,path=" + hintSocket() + ",server=on,wait=off",
                "-device",  "virtio-serial-pci,id=vcpufold-serial",
                "-device",  "virtserialport,bus=vcpufold-serial.0,chardev=vcpufold,name=org.vcpufold.hint.0"};
  args.insert(args.end(), hintPort.begin(), hintPort.end());
  if (!spec_.incoming.empty()) args.insert(args.end(), {"-incoming", spec_.incoming});
  process_ = std::make_unique<ChildProcess>("/usr/bin/qemu-system-x86_64", args, dir + "/qemu.log");
}

QemuGuest::~QemuGuest() = default;

std::string QemuGuest::hintSocket() const {
  if (!spec_.vmName.empty()) return (spec_.qmpDirectory / (spec_.vmName + ".hint.sock")).string();
  return (spec_.runDirectory / "hint.sock").string();
}

std::string QemuGuest::qmpSocket() const {
  if (!spec_.vmName.empty()) return (spec_.qmpDirectory / (spec_.vmName + ".qmp")).string();
  return (spec_.runDirectory / "qmp.sock").string();
}
std::string QemuGuest::consoleLog() const { return (spec_.runDirectory / "console.log").string(); }

std::string QemuGuest::console() const {
  std::ifstream log(consoleLog());
  std::stringstream text;
  text << log.rdbuf();
  return text.str();
}

std::optional<std::string> QemuGuest::qmp(const std::string& command, int timeoutMs) {
  const auto deadline = Clock::now() + std::chrono::milliseconds(timeoutMs);
  const int fd = connectUnixSocket(qmpSocket());
  if (fd < 0) return std::nullopt;
  std::string buffer;
  // Greeting, then capabilities negotiation, then the command; answers are
  // the lines with "return" or "error" (others are asynchronous events).
  auto answer = [&]() -> std::optional<std::string> {
    for (;;) {
      const auto newline = buffer.find('\n');
      if (newline == std::string::npos) {
        if (!readUntilMarker(fd, buffer, "\n", deadline)) return std::nullopt;
        continue;
      }
      std::string line = buffer.substr(0, newline);
      buffer.erase(0, newline + 1);
      if (line.find("\"return\"") != std::string::npos || line.find("\"error\"") != std::string::npos) return line;
    }
  };
  std::optional<std::string> result;
  if (readUntilMarker(fd, buffer, "QMP", deadline)) {
    buffer.erase(0, buffer.find('\n') + 1);
    const std::string capabilities = "{\"execute\":\"qmp_capabilities\"}\n";
    const std::string line = command + "\n";
    if (::send(fd, capabilities.data(), capabilities.size(), MSG_NOSIGNAL) > 0 && answer() &&
        ::send(fd, line.data(), line.size(), MSG_NOSIGNAL) > 0)
      result = answer();
  }
  ::close(fd);
  return result;
}

}  // namespace vcpufold::testing
