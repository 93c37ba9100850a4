// SPDX-License-Identifier: GPL-2.0-or-later
#include "guest_workload.h"

#include <sys/syscall.h>
#include <unistd.h>

#include <array>
#include <bit>
#include <chrono>
#include <deque>
#include <sstream>
#include <thread>
#include <utility>

namespace vcpufold::bench {

namespace {

// Private work between operations and the work inside the critical section,
// in loop iterations (a few microseconds and about one microsecond here); the
// cost of switching a vCPU from one task to another; and the slice a task
// runs before the next one waiting gets its turn.
constexpr unsigned kPrivateIterations = 4000;
constexpr unsigned kCriticalIterations = 1000;
constexpr unsigned kSwitchIterations = 2000;
constexpr auto kSlice = std::chrono::milliseconds(3);
// A paravirt spinlock waiter spins this many times, then halts until kicked.
constexpr unsigned kPvSpinIterations = 1u << 13;
constexpr std::size_t kPipeCapacity = 16;

inline void cpuRelax() { __builtin_ia32_pause(); }

std::uint64_t mix(std::uint64_t value, unsigned iterations) {
  for (unsigned i = 0; i < iterations; ++i) value = value * 6364136223846793005ull + 1442695040888963407ull;
  return value;
}

// A guest kernel's spinlock: test-and-set, or paravirt (spin, then halt until
// the unlocker kicks).
class GuestLock {
 public:
  void lock(bool paravirt) {
    for (;;) {
      if (!locked_.exchange(true, std::memory_order_acquire)) return;
      unsigned spins = 0;
      while (locked_.load(std::memory_order_relaxed)) {
        cpuRelax();
        if (paravirt && ++spins >= kPvSpinIterations) {
          waiters_.fetch_add(1);
          locked_.wait(true);  // the host thread sleeps: the vCPU halts
          waiters_.fetch_sub(1);
          spins = 0;
        }
      }
    }
  }
  void unlock() {
    locked_.store(false, std::memory_order_release);
    if (waiters_.load() > 0) locked_.notify_one();  // the kick
  }

 private:
  alignas(64) std::atomic<bool> locked_{false};
  std::atomic<int> waiters_{0};
};

enum class TaskState { Parked, Runnable, Running, Blocked };

}  // namespace

bool parseWorkloadKind(const std::string& text, WorkloadKind& kind) {
  if (text == "compute")
    kind = WorkloadKind::Compute;
  else if (text == "spinlock")
    kind = WorkloadKind::Spinlock;
  else if (text == "pvspinlock")
    kind = WorkloadKind::PvSpinlock;
  else if (text == "message")
    kind = WorkloadKind::Message;
  else
    return false;
  return true;
}

bool parseWorkloadMix(const std::string& text, std::vector<WorkloadKind>& kinds) {
  kinds.clear();
  std::istringstream parts(text);
  for (std::string part; std::getline(parts, part, '+');) {
    WorkloadKind kind{};
    if (!parseWorkloadKind(part, kind)) return false;
    kinds.push_back(kind);
  }
  return !kinds.empty();
}

const char* workloadKindName(WorkloadKind kind) {
  switch (kind) {
    case WorkloadKind::Compute:
      return "compute";
    case WorkloadKind::Spinlock:
      return "spinlock";
    case WorkloadKind::PvSpinlock:
      return "pvspinlock";
    case WorkloadKind::Message:
      return "message";
  }
  return "?";
}

std::string workloadMixName(const std::vector<WorkloadKind>& kinds) {
  std::string name;
  for (const auto kind : kinds) name += (name.empty() ? "" : "+") + std::string(workloadKindName(kind));
  return name;
}

struct GuestWorkload::Shared {
  struct alignas(64) Counter {
    std::atomic<long> tid{0};
    std::atomic<std::uint64_t> operations{0};
    std::atomic<std::uint64_t> checksum{0};  // keeps the work observable to the compiler
  };
  struct Task {
    WorkloadKind kind = WorkloadKind::Compute;
    TaskState state = TaskState::Parked;  // guarded by runQueueLock (Blocked is set under its pipe's lock)
    std::uint64_t value = 0;              // the task's own data, touched only while it runs
  };
  // Message pairs: tasks 2k (producer) and 2k+1 (consumer) share pipe k.
  struct Pipe {
    GuestLock lock;
    std::array<std::uint64_t, kPipeCapacity> slots{};
    std::size_t head = 0;
    std::size_t count = 0;
    bool producerBlocked = false;
    bool consumerBlocked = false;
  };

  explicit Shared(unsigned vcpus) : counters(vcpus), tasks(kMaxTasks), pipes(kMaxTasks / 2) {}

  bool paravirt = false;
  // The VM's shared data behind its lock (spinlock tasks), and the lock.
  GuestLock dataLock;
  std::array<std::uint64_t, 256> ring{};
  std::uint32_t ringHead = 0;
  std::uint32_t ringCount = 0;
  // The run queue, guarded by its own lock, as a guest kernel's.
  GuestLock runQueueLock;
  std::deque<unsigned> runQueue;
  // Bumped whenever a halted preferred vCPU may have something to do; those wait on it.
  alignas(64) std::atomic<std::uint32_t> generation{0};
  // Bumped when the preferred vCPUs change (or the VM stops): the vCPUs that
  // are not preferred wait on this alone. A guest kernel sends a wake-up to
  // the CPU that will run the task, not to every idle CPU: waking the
  // non-preferred vCPUs on every task wake-up would make them burn host CPU.
  alignas(64) std::atomic<std::uint32_t> maskGeneration{0};
  std::atomic<std::uint64_t> contextSwitches{0};
  std::vector<Counter> counters;
  std::vector<Task> tasks;
  std::vector<Pipe> pipes;
  std::vector<std::thread> threads;

  // Work for one more vCPU (a task became runnable): one halted preferred vCPU wakes.
  void wakeOne() {
    generation.fetch_add(1);
    generation.notify_one();
  }
  void wakeHalted() {
    generation.fetch_add(1);
    generation.notify_all();
  }
  void maskChanged() {
    maskGeneration.fetch_add(1);
    maskGeneration.notify_all();
    wakeHalted();
  }

  // A blocked task becomes runnable again (its partner moved the pipe).
  void wake(unsigned task) {
    runQueueLock.lock(paravirt);
    if (tasks[task].state == TaskState::Blocked) {
      tasks[task].state = TaskState::Runnable;
      runQueue.push_back(task);
    }
    runQueueLock.unlock();
    wakeOne();
  }
};

GuestWorkload::GuestWorkload(std::vector<WorkloadKind> mix, unsigned vcpus)
    : mix_(mix.empty() ? std::vector<WorkloadKind>{WorkloadKind::Compute} : std::move(mix)),
      vcpus_(vcpus),
      shared_(std::make_unique<Shared>(vcpus)) {
  for (unsigned i = 0; i < kMaxTasks; ++i) {
    shared_->tasks[i].kind = mix_[i % mix_.size()];
    shared_->tasks[i].value = i + 1;
    if (shared_->tasks[i].kind == WorkloadKind::PvSpinlock) shared_->paravirt = true;
  }
}

GuestWorkload::~GuestWorkload() { stop(); }

void GuestWorkload::start() {
  for (unsigned i = 0; i < vcpus_; ++i) shared_->threads.emplace_back([this, i] { runVcpu(i); });
  for (auto& counter : shared_->counters)
    while (counter.tid.load() == 0) std::this_thread::yield();
}

void GuestWorkload::stop() {
  stopping_ = true;
  shared_->maskChanged();
  for (auto& thread : shared_->threads)
    if (thread.joinable()) thread.join();
  shared_->threads.clear();
}

void GuestWorkload::setRunnableTasks(unsigned tasks) {
  tasks = tasks > kMaxTasks ? kMaxTasks : tasks;
  if (tasks_.exchange(tasks) == tasks) return;
  // New tasks join the run queue; tasks beyond the count park when next picked.
  shared_->runQueueLock.lock(shared_->paravirt);
  for (unsigned i = 0; i < tasks; ++i)
    if (shared_->tasks[i].state == TaskState::Parked) {
      shared_->tasks[i].state = TaskState::Runnable;
      shared_->runQueue.push_back(i);
    }
  shared_->runQueueLock.unlock();
  shared_->wakeHalted();
}

void GuestWorkload::setPreferred(std::uint64_t vcpuMask) {
  if (vcpus_ < 64) vcpuMask &= (1ull << vcpus_) - 1;
  if (vcpuMask == 0) vcpuMask = ~0ull;  // an empty mask means all, as the kernel's restore does
  if (preferred_.exchange(vcpuMask) == vcpuMask) return;
  shared_->maskChanged();
}

bool GuestWorkload::isPreferred(unsigned index) const {
  return (preferred_.load(std::memory_order_relaxed) >> index) & 1u;
}

void GuestWorkload::runVcpu(unsigned index) {
  auto& shared = *shared_;
  auto& counter = shared.counters[index];
  counter.tid = ::syscall(SYS_gettid);
  const bool paravirt = shared.paravirt;
  constexpr unsigned kNone = ~0u;
  unsigned current = kNone;  // the task this vCPU runs

  // Takes the next runnable task, parking those beyond the task count; kNone when the queue is empty.
  const auto next = [&]() {
    shared.runQueueLock.lock(paravirt);
    unsigned picked = kNone;
    while (!shared.runQueue.empty() && picked == kNone) {
      const unsigned task = shared.runQueue.front();
      shared.runQueue.pop_front();
      if (task >= tasks_.load(std::memory_order_relaxed)) {
        shared.tasks[task].state = TaskState::Parked;
        continue;
      }
      shared.tasks[task].state = TaskState::Running;
      picked = task;
    }
    shared.runQueueLock.unlock();
    return picked;
  };
  // Puts the running task back at the tail.
  const auto yield = [&](unsigned task) {
    shared.runQueueLock.lock(paravirt);
    shared.tasks[task].state = TaskState::Runnable;
    shared.runQueue.push_back(task);
    shared.runQueueLock.unlock();
  };
  // At the end of a slice: the task goes back to the tail only if another is
  // waiting (then the vCPU switches); otherwise it simply runs on.
  const auto yieldToWaiting = [&](unsigned task) {
    shared.runQueueLock.lock(paravirt);
    const bool othersWaiting = !shared.runQueue.empty();
    if (othersWaiting) {
      shared.tasks[task].state = TaskState::Runnable;
      shared.runQueue.push_back(task);
    }
    shared.runQueueLock.unlock();
    return othersWaiting;
  };

  while (!stopping_.load(std::memory_order_relaxed)) {
    const std::uint32_t maskGeneration = shared.maskGeneration.load();
    const std::uint32_t generation = shared.generation.load();
    if (!isPreferred(index)) {
      if (current != kNone) {
        yield(current);
        current = kNone;
        shared.wakeOne();  // a preferred vCPU takes it over
      }
      shared.maskGeneration.wait(maskGeneration);  // halted until it is preferred again
      continue;
    }
    if (current == kNone) current = next();
    if (current == kNone) {
      shared.generation.wait(generation);  // nothing to run: the vCPU halts
      continue;
    }
    auto& task = shared.tasks[current];
    std::uint64_t value = task.value;
    bool blocked = false;
    const auto sliceEnd = std::chrono::steady_clock::now() + kSlice;
    while (!blocked && isPreferred(index) && !stopping_.load(std::memory_order_relaxed) &&
           current < tasks_.load(std::memory_order_relaxed) && std::chrono::steady_clock::now() < sliceEnd) {
      switch (task.kind) {
        case WorkloadKind::Compute:
          break;
        case WorkloadKind::Spinlock:
        case WorkloadKind::PvSpinlock: {
          shared.dataLock.lock(paravirt);
          // Pass a message: every other operation posts one, the rest consume one.
          auto& ring = shared.ring;
          if (shared.ringCount < ring.size() && (value & 1u)) {
            ring[(shared.ringHead + shared.ringCount) % ring.size()] = value;
            ++shared.ringCount;
          } else if (shared.ringCount > 0) {
            value ^= ring[shared.ringHead];
            shared.ringHead = (shared.ringHead + 1) % static_cast<std::uint32_t>(ring.size());
            --shared.ringCount;
          }
          value = mix(value, kCriticalIterations);
          shared.dataLock.unlock();
          break;
        }
        case WorkloadKind::Message: {
          const unsigned pair = current / 2;
          const bool producer = current % 2 == 0;
          const unsigned partner = producer ? current + 1 : current - 1;
          auto& pipe = shared.pipes[pair];
          bool wakePartner = false;
          task.value = value;
          pipe.lock.lock(paravirt);
          if (producer && pipe.count == kPipeCapacity) {
            pipe.producerBlocked = blocked = true;
          } else if (!producer && pipe.count == 0) {
            pipe.consumerBlocked = blocked = true;
          } else if (producer) {
            pipe.slots[(pipe.head + pipe.count) % kPipeCapacity] = value;
            ++pipe.count;
            wakePartner = std::exchange(pipe.consumerBlocked, false);
          } else {
            value ^= pipe.slots[pipe.head];
            pipe.head = (pipe.head + 1) % kPipeCapacity;
            --pipe.count;
            wakePartner = std::exchange(pipe.producerBlocked, false);
          }
          if (blocked) {
            // Off the run queue until the partner wakes it; from here on the
            // partner's vCPU may pick it up, so nothing of it is touched.
            shared.runQueueLock.lock(paravirt);
            task.state = TaskState::Blocked;
            shared.runQueueLock.unlock();
          }
          pipe.lock.unlock();
          if (wakePartner) shared.wake(partner);
          break;
        }
      }
      if (blocked) break;
      value = mix(value, kPrivateIterations);
      counter.checksum.store(value, std::memory_order_relaxed);
      counter.operations.fetch_add(1, std::memory_order_relaxed);
    }
    if (blocked) {
      // Blocking gives the vCPU to the next task: a switch like the end of a slice.
      current = kNone;
      shared.contextSwitches.fetch_add(1, std::memory_order_relaxed);
      counter.checksum.store(mix(value, kSwitchIterations), std::memory_order_relaxed);
      continue;
    }
    task.value = value;
    if (current >= tasks_.load(std::memory_order_relaxed) || !isPreferred(index) ||
        stopping_.load(std::memory_order_relaxed)) {
      yield(current);
      current = kNone;
      // A preferred vCPU may be halted with nothing to run: it takes this task
      // over (without the wake-up, a VM whose other tasks are all blocked on
      // this one stops for good).
      shared.wakeOne();
      continue;
    }
    // The slice is over: the next task waiting gets this vCPU; with none
    // waiting the same task goes on, without a switch.
    if (yieldToWaiting(current)) {
      current = kNone;
      shared.contextSwitches.fetch_add(1, std::memory_order_relaxed);
      counter.checksum.store(mix(value, kSwitchIterations), std::memory_order_relaxed);
    }
  }
}

std::vector<VcpuCounters> GuestWorkload::counters() const {
  std::vector<VcpuCounters> result;
  for (const auto& counter : shared_->counters) result.push_back({counter.tid.load(), counter.operations.load()});
  return result;
}

std::uint64_t GuestWorkload::contextSwitches() const { return shared_->contextSwitches.load(); }

}  // namespace vcpufold::bench
