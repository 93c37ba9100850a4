#include "guest_workload.h"

#include <sys/syscall.h>
#include <unistd.h>

#include <array>
#include <bit>
#include <thread>

namespace vcpufold::bench {

namespace {

// Private work between operations and the work inside the critical section,
// in loop iterations (a few microseconds and about one microsecond here).
constexpr unsigned kPrivateIterations = 4000;
constexpr unsigned kCriticalIterations = 1000;

inline void cpuRelax() { __builtin_ia32_pause(); }

std::uint64_t mix(std::uint64_t value, unsigned iterations) {
  for (unsigned i = 0; i < iterations; ++i) value = value * 6364136223846793005ull + 1442695040888963407ull;
  return value;
}

}  // namespace

bool parseWorkloadKind(const std::string& text, WorkloadKind& kind) {
  if (text == "compute")
    kind = WorkloadKind::Compute;
  else if (text == "spinlock")
    kind = WorkloadKind::Spinlock;
  else
    return false;
  return true;
}

struct GuestWorkload::Shared {
  struct alignas(64) Counter {
    std::atomic<long> tid{0};
    std::atomic<std::uint64_t> operations{0};
    std::atomic<std::uint64_t> checksum{0};  // keeps the work observable to the compiler
  };
  // Test-and-set lock: what a Linux guest uses under a hypervisor without
  // paravirt spinlocks (virt_spin_lock()), as a queued lock would stall
  // behind every preempted waiter, not only the holder.
  alignas(64) std::atomic<bool> locked{false};
  // The message ring the lock protects.
  alignas(64) std::array<std::uint64_t, 256> ring{};
  std::uint32_t head = 0;
  std::uint32_t count = 0;
  // Bumped whenever the set of working vCPUs may change; halted vCPUs wait on it.
  alignas(64) std::atomic<std::uint32_t> generation{0};
  std::vector<Counter> counters;
  std::vector<std::thread> threads;
  explicit Shared(unsigned vcpus) : counters(vcpus) {}
};

GuestWorkload::GuestWorkload(WorkloadKind kind, unsigned vcpus)
    : kind_(kind), vcpus_(vcpus), shared_(std::make_unique<Shared>(vcpus)) {}

GuestWorkload::~GuestWorkload() { stop(); }

void GuestWorkload::start() {
  for (unsigned i = 0; i < vcpus_; ++i) shared_->threads.emplace_back([this, i] { runVcpu(i); });
  for (auto& counter : shared_->counters)
    while (counter.tid.load() == 0) std::this_thread::yield();
}

void GuestWorkload::stop() {
  stopping_ = true;
  shared_->generation.fetch_add(1);
  shared_->generation.notify_all();
  for (auto& thread : shared_->threads)
    if (thread.joinable()) thread.join();
  shared_->threads.clear();
}

void GuestWorkload::setRunnableTasks(unsigned tasks) {
  if (tasks_.exchange(tasks > vcpus_ ? vcpus_ : tasks) == tasks) return;
  shared_->generation.fetch_add(1);
  shared_->generation.notify_all();
}

void GuestWorkload::setPreferred(std::uint64_t vcpuMask) {
  if (vcpus_ < 64) vcpuMask &= (1ull << vcpus_) - 1;
  if (vcpuMask == 0) vcpuMask = ~0ull;  // an empty mask means all, as the kernel's restore does
  if (preferred_.exchange(vcpuMask) == vcpuMask) return;
  shared_->generation.fetch_add(1);
  shared_->generation.notify_all();
}

bool GuestWorkload::shouldWork(unsigned index) const {
  const std::uint64_t preferred = preferred_.load(std::memory_order_relaxed);
  if (!((preferred >> index) & 1u)) return false;
  // This vCPU's rank among the preferred ones: the guest fills preferred
  // vCPUs in order with its runnable tasks.
  const std::uint64_t below = index == 0 ? 0 : preferred & ((1ull << index) - 1);
  return static_cast<unsigned>(std::popcount(below)) < tasks_.load(std::memory_order_relaxed);
}

void GuestWorkload::runVcpu(unsigned index) {
  auto& counter = shared_->counters[index];
  counter.tid = ::syscall(SYS_gettid);
  std::uint64_t value = index + 1;
  while (!stopping_.load(std::memory_order_relaxed)) {
    const std::uint32_t generation = shared_->generation.load();
    if (!shouldWork(index)) {
      // A halted vCPU: its host thread sleeps until the guest needs it.
      shared_->generation.wait(generation);
      continue;
    }
    if (kind_ == WorkloadKind::Spinlock) {
      while (shared_->locked.exchange(true, std::memory_order_acquire))
        while (shared_->locked.load(std::memory_order_relaxed)) cpuRelax();
      // Pass a message: every other operation posts one, the rest consume one.
      auto& ring = shared_->ring;
      if (shared_->count < ring.size() && (value & 1u)) {
        ring[(shared_->head + shared_->count) % ring.size()] = value;
        ++shared_->count;
      } else if (shared_->count > 0) {
        value ^= ring[shared_->head];
        shared_->head = (shared_->head + 1) % static_cast<std::uint32_t>(ring.size());
        --shared_->count;
      }
      value = mix(value, kCriticalIterations);
      shared_->locked.store(false, std::memory_order_release);
    }
    value = mix(value, kPrivateIterations);
    counter.checksum.store(value, std::memory_order_relaxed);
    counter.operations.fetch_add(1, std::memory_order_relaxed);
  }
}

std::vector<VcpuCounters> GuestWorkload::counters() const {
  std::vector<VcpuCounters> result;
  for (const auto& counter : shared_->counters) result.push_back({counter.tid.load(), counter.operations.load()});
  return result;
}

}  // namespace vcpufold::bench
