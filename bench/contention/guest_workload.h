// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once
// The work an emulated VM does, scheduled as a guest kernel would: the VM's
// runnable tasks wait in one run queue and run on its preferred vCPUs, a slice
// at a time. With more tasks than preferred vCPUs they take turns (round
// robin, a context switch between two tasks), so folding has its real cost:
// fewer vCPUs for the same tasks. A preferred vCPU with nothing to run halts,
// and so does every vCPU that is not preferred: their host threads sleep.
//
// Kinds of task (a VM may run a mix; its tasks take the kinds in turn):
//   compute     private work only: the control, with nothing to lose but
//               parallelism.
//   spinlock    every operation takes the VM's lock (test-and-set, as a Linux
//               guest's virt_spin_lock() without paravirt spinlocks), moves a
//               message through a shared ring inside it, then does private
//               work. A preempted holder stalls every running vCPU that
//               wants the lock: lock-holder preemption.
//   pvspinlock  the same work, with paravirt locks (what KVM Linux guests use
//               by default): a waiter spins a bounded number of times, then
//               halts until the unlocker kicks it, so a preempted holder costs
//               less. Any pvspinlock task makes every lock of the VM (the run
//               queue's and the pipes' too) a paravirt one.
//   message     producer/consumer pairs (tasks 2k and 2k+1) passing messages
//               through a bounded pipe, blocking when it is full or empty and
//               waking the partner (hackbench's pipes). Blocked tasks leave
//               the run queue; a wake-up may have to wake a halted vCPU.
//
// The run queue and the pipes are guarded by the VM's kind of spinlock, as a
// guest kernel's are: a vCPU preempted while holding one stalls the others.

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace vcpufold::bench {

enum class WorkloadKind { Compute, Spinlock, PvSpinlock, Message };
bool parseWorkloadKind(const std::string& text, WorkloadKind& kind);
// "spinlock", or a mix such as "spinlock+compute" (tasks take the kinds in turn).
bool parseWorkloadMix(const std::string& text, std::vector<WorkloadKind>& kinds);
const char* workloadKindName(WorkloadKind kind);
std::string workloadMixName(const std::vector<WorkloadKind>& kinds);

struct VcpuCounters {
  long tid = 0;                  // host thread id, as QEMU reports it
  std::uint64_t operations = 0;  // completed operations of the tasks that ran on this vCPU
};

class GuestWorkload {
 public:
  static constexpr unsigned kMaxTasks = 256;

  GuestWorkload(std::vector<WorkloadKind> mix, unsigned vcpus);
  ~GuestWorkload();
  GuestWorkload(const GuestWorkload&) = delete;
  GuestWorkload& operator=(const GuestWorkload&) = delete;

  // Starts the vCPU threads and waits until each knows its thread id.
  void start();
  void stop();

  // How many guest tasks exist and want to run (0..kMaxTasks), and on which
  // vCPUs they may (a bit per vCPU; empty means all, as the kernel's restore).
  void setRunnableTasks(unsigned tasks);
  void setPreferred(std::uint64_t vcpuMask);
  unsigned runnableTasks() const { return tasks_.load(); }

  std::vector<VcpuCounters> counters() const;
  // Switches from one task to another on a vCPU so far (a slice ending with
  // others waiting, or a task blocking).
  std::uint64_t contextSwitches() const;

 private:
  struct Shared;
  void runVcpu(unsigned index);
  bool isPreferred(unsigned index) const;

  std::vector<WorkloadKind> mix_;
  unsigned vcpus_;
  std::atomic<unsigned> tasks_{0};
  std::atomic<std::uint64_t> preferred_{~0ull};
  std::atomic<bool> stopping_{false};
  std::unique_ptr<Shared> shared_;
};

}  // namespace vcpufold::bench
