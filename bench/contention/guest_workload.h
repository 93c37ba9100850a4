#pragma once
// The work an emulated VM's vCPU threads do: the guest's runnable tasks run on
// its preferred vCPUs, the other vCPUs halt (their host threads sleep), as in
// a guest whose scheduler folds onto the preferred mask.
//
// Workloads:
//   spinlock  every operation takes the VM's spinlock (test-and-set, as a
//             Linux guest's virt_spin_lock() under a hypervisor), moves a
//             message through a shared ring inside the critical section, then
//             does private work. A preempted holder stalls every other
//             running vCPU of the VM: lock-holder preemption.
//   compute   private work only: the control, with nothing to lose but
//             parallelism.

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace vcpufold::bench {

enum class WorkloadKind { Compute, Spinlock };
bool parseWorkloadKind(const std::string& text, WorkloadKind& kind);

struct VcpuCounters {
  long tid = 0;                  // host thread id, as QEMU reports it
  std::uint64_t operations = 0;  // completed operations
};

class GuestWorkload {
 public:
  GuestWorkload(WorkloadKind kind, unsigned vcpus);
  ~GuestWorkload();
  GuestWorkload(const GuestWorkload&) = delete;
  GuestWorkload& operator=(const GuestWorkload&) = delete;

  // Starts the vCPU threads and waits until each knows its thread id.
  void start();
  void stop();

  // How many guest tasks want to run (0..vCPUs), and on which vCPUs
  // (a bit per vCPU). The first min(tasks, preferred) preferred vCPUs work.
  void setRunnableTasks(unsigned tasks);
  void setPreferred(std::uint64_t vcpuMask);
  unsigned runnableTasks() const { return tasks_.load(); }

  std::vector<VcpuCounters> counters() const;

 private:
  struct Shared;
  void runVcpu(unsigned index);
  bool shouldWork(unsigned index) const;

  WorkloadKind kind_;
  unsigned vcpus_;
  std::atomic<unsigned> tasks_{0};
  std::atomic<std::uint64_t> preferred_{~0ull};
  std::atomic<bool> stopping_{false};
  std::unique_ptr<Shared> shared_;
};

}  // namespace vcpufold::bench
