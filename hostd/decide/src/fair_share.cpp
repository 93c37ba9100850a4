// SPDX-License-Identifier: GPL-2.0-or-later
#include "vcpufold/hostd/fair_share.h"

#include <algorithm>
#include <limits>
#include <map>
#include <numeric>

namespace vcpufold::hostd {
namespace {

constexpr double kEpsilon = 1e-9;
constexpr double kFlowEpsilon = 1e-12;  // a residual capacity below this is none

double weightOf(const std::vector<double>& weights, std::size_t i) { return std::max(weights[i], kEpsilon); }

// Maximum flow by Dinic's algorithm on a small network of real capacities.
class FlowNetwork {
 public:
  explicit FlowNetwork(std::size_t nodes) : edges_(nodes), level_(nodes), next_(nodes) {}

  // Returns the edge's index among `from`'s, for flowOn().
  std::size_t addEdge(std::size_t from, std::size_t to, double capacity) {
    edges_[from].push_back(Edge{to, capacity, edges_[to].size(), capacity});
    edges_[to].push_back(Edge{from, 0.0, edges_[from].size() - 1, 0.0});
    return edges_[from].size() - 1;
  }
  [[nodiscard]] double flowOn(std::size_t from, std::size_t edge) const {
    return edges_[from][edge].initial - edges_[from][edge].capacity;
  }

  // After maxFlow: the nodes from which the sink can still be reached through
  // edges with capacity left (more flow could leave them).
  [[nodiscard]] std::vector<bool> reachingSink(std::size_t sink, double slack) const {
    std::vector<std::vector<std::size_t>> into(edges_.size());
    for (std::size_t from = 0; from < edges_.size(); ++from)
      for (const Edge& edge : edges_[from])
        if (edge.capacity > slack) into[edge.to].push_back(from);
    std::vector<bool> reaches(edges_.size(), false);
    std::vector<std::size_t> queue{sink};
    reaches[sink] = true;
    for (std::size_t head = 0; head < queue.size(); ++head)
      for (const std::size_t from : into[queue[head]])
        if (!reaches[from]) {
          reaches[from] = true;
          queue.push_back(from);
        }
    return reaches;
  }

  double maxFlow(std::size_t source, std::size_t sink) {
    double total = 0;
    while (buildLevels(source, sink)) {
      std::fill(next_.begin(), next_.end(), 0);
      for (double pushed = push(source, sink, std::numeric_limits<double>::infinity()); pushed > kFlowEpsilon;
           pushed = push(source, sink, std::numeric_limits<double>::infinity()))
        total += pushed;
    }
    return total;
  }

 private:
  struct Edge {
    std::size_t to;
    double capacity;  // what is left
    std::size_t reverse;
    double initial;
  };

  bool buildLevels(std::size_t source, std::size_t sink) {
    std::fill(level_.begin(), level_.end(), -1);
    std::vector<std::size_t> queue{source};
    level_[source] = 0;
    for (std::size_t head = 0; head < queue.size(); ++head)
      for (const Edge& edge : edges_[queue[head]])
        if (edge.capacity > kFlowEpsilon && level_[edge.to] < 0) {
          level_[edge.to] = level_[queue[head]] + 1;
          queue.push_back(edge.to);
        }
    return level_[sink] >= 0;
  }

  double push(std::size_t node, std::size_t sink, double limit) {
    if (node == sink) return limit;
    for (std::size_t& i = next_[node]; i < edges_[node].size(); ++i) {
      Edge& edge = edges_[node][i];
      if (edge.capacity <= kFlowEpsilon || level_[edge.to] != level_[node] + 1) continue;
      const double pushed = push(edge.to, sink, std::min(limit, edge.capacity));
      if (pushed > kFlowEpsilon) {
        edge.capacity -= pushed;
        edges_[edge.to][edge.reverse].capacity += pushed;
        return pushed;
      }
    }
    return 0;
  }

  std::vector<std::vector<Edge>> edges_;
  std::vector<int> level_;
  std::vector<std::size_t> next_;
};

// Claimants that may use the same places, as one node of the flow network.
struct PlaceGroups {
  std::vector<std::vector<std::size_t>> places;  // per group
  std::vector<std::size_t> groupOf;              // per claimant
};

PlaceGroups groupByPlaces(const SharingProblem& problem) {
  PlaceGroups groups;
  std::map<std::vector<std::size_t>, std::size_t> index;
  for (std::vector<std::size_t> places : problem.placesOf) {
    std::sort(places.begin(), places.end());
    places.erase(std::unique(places.begin(), places.end()), places.end());
    std::erase_if(places, [&](std::size_t p) { return p >= problem.placeCapacity.size(); });
    const auto [found, added] = index.emplace(places, groups.places.size());
    if (added) groups.places.push_back(places);
    groups.groupOf.push_back(found->second);
  }
  return groups;
}

// Amounts routed to places: how much of each group's total some assignment
// can place (a maximum flow), against what was asked.
struct Routing {
  std::vector<double> asked;   // per group
  std::vector<double> placed;  // per group
  double askedTotal = 0;
  double placedTotal = 0;
  std::vector<bool> canGrow;  // per group: some place it may use could take more (with rerouting)
  // Rounding only: the level is found by bisection on real numbers.
  [[nodiscard]] bool fits() const { return placedTotal >= askedTotal - 1e-10 * std::max(1.0, askedTotal); }
};

Routing route(const SharingProblem& problem, const PlaceGroups& groups, const std::vector<double>& amounts) {
  const std::size_t groupCount = groups.places.size();
  const std::size_t placeCount = problem.placeCapacity.size();
  const std::size_t source = 0;
  const std::size_t sink = 1 + groupCount + placeCount;
  Routing routing;
  routing.asked.assign(groupCount, 0.0);
  routing.placed.assign(groupCount, 0.0);
  for (std::size_t i = 0; i < amounts.size(); ++i) {
    const double amount = std::max(amounts[i], 0.0);
    routing.asked[groups.groupOf[i]] += amount;
    routing.askedTotal += amount;
  }
  if (routing.askedTotal <= kFlowEpsilon) {
    routing.canGrow.assign(groupCount, true);
    return routing;
  }
  double capacity = 0;
  for (double place : problem.placeCapacity) capacity += std::max(place, 0.0);
  const double unlimited = capacity + routing.askedTotal + 1.0;
  FlowNetwork network(sink + 1);
  std::vector<std::size_t> groupEdge(groupCount);
  for (std::size_t g = 0; g < groupCount; ++g) {
    groupEdge[g] = network.addEdge(source, 1 + g, routing.asked[g]);
    for (std::size_t p : groups.places[g]) network.addEdge(1 + g, 1 + groupCount + p, unlimited);
  }
  for (std::size_t p = 0; p < placeCount; ++p)
    network.addEdge(1 + groupCount + p, sink, std::max(problem.placeCapacity[p], 0.0));
  routing.placedTotal = network.maxFlow(source, sink);
  for (std::size_t g = 0; g < groupCount; ++g) routing.placed[g] = network.flowOn(source, groupEdge[g]);
  const std::vector<bool> reaches = network.reachingSink(sink, 1e-9 * std::max(1.0, capacity));
  routing.canGrow.assign(groupCount, false);
  for (std::size_t g = 0; g < groupCount; ++g) routing.canGrow[g] = reaches[1 + g];
  return routing;
}

}  // namespace

std::vector<double> waterFill(double capacity, const std::vector<double>& demands, const std::vector<double>& weights) {
  std::vector<double> shares(demands.size(), 0.0);
  std::vector<std::size_t> order(demands.size());
  std::iota(order.begin(), order.end(), 0);
  // Lowest demand per unit of weight first: those are satisfied before the level reaches them.
  std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    return demands[a] / weightOf(weights, a) < demands[b] / weightOf(weights, b);
  });
  double remaining = std::max(capacity, 0.0);
  double remainingWeight = 0.0;
  for (std::size_t i : order) remainingWeight += weightOf(weights, i);
  for (std::size_t k = 0; k < order.size(); ++k) {
    const std::size_t i = order[k];
    const double level = remaining / remainingWeight;
    if (demands[i] <= level * weightOf(weights, i)) {
      shares[i] = std::max(demands[i], 0.0);
      remaining -= shares[i];
      remainingWeight -= weightOf(weights, i);
      continue;
    }
    for (std::size_t rest = k; rest < order.size(); ++rest)
      shares[order[rest]] = level * weightOf(weights, order[rest]);
    break;
  }
  return shares;
}

bool fitsPlaces(const SharingProblem& problem, const std::vector<double>& amounts) {
  return route(problem, groupByPlaces(problem), amounts).fits();
}

std::vector<double> maxMinShares(const SharingProblem& problem) {
  const std::size_t count = problem.demands.size();
  const PlaceGroups groups = groupByPlaces(problem);
  std::vector<double> shares(count, 0.0);

  // One set of places for everyone (the common case: one shared pool) is water-filling.
  if (groups.places.size() == 1) {
    double capacity = 0;
    for (std::size_t p : groups.places[0]) capacity += std::max(problem.placeCapacity[p], 0.0);
    return groups.places[0].empty() ? shares : waterFill(capacity, problem.demands, problem.weights);
  }

  // Progressive filling: the active claimants' shares follow one level until
  // they reach their demand or their places are full.
  std::vector<bool> active(count, false);
  for (std::size_t i = 0; i < count; ++i)
    active[i] = problem.demands[i] > kEpsilon && !groups.places[groups.groupOf[i]].empty();
  const auto atLevel = [&](double level) {
    std::vector<double> amounts = shares;
    for (std::size_t i = 0; i < count; ++i)
      if (active[i]) amounts[i] = std::min(problem.demands[i], level * weightOf(problem.weights, i));
    return amounts;
  };

  double level = 0;
  while (std::any_of(active.begin(), active.end(), [](bool a) { return a; })) {
    double top = level;
    for (std::size_t i = 0; i < count; ++i)
      if (active[i]) top = std::max(top, problem.demands[i] / weightOf(problem.weights, i));
    if (route(problem, groups, atLevel(top)).fits()) {
      shares = atLevel(top);
      break;
    }
    double low = level;
    for (int step = 0; step < 48; ++step) {
      const double middle = (low + top) / 2;
      (route(problem, groups, atLevel(middle)).fits() ? low : top) = middle;
    }
    level = low;
    // What the places hold at this level: a claimant that stops here keeps
    // what can be placed, so that rounding at this level never carries into
    // the next (a full place stays exactly full).
    std::vector<double> reached = atLevel(level);
    const Routing routing = route(problem, groups, reached);
    for (std::size_t i = 0; i < count; ++i) {
      const std::size_t g = groups.groupOf[i];
      if (active[i] && routing.asked[g] > 0) reached[i] *= std::min(1.0, routing.placed[g] / routing.asked[g]);
    }
    std::vector<bool> stops(count, false);
    for (std::size_t i = 0; i < count; ++i)
      if (active[i] && problem.demands[i] <= level * weightOf(problem.weights, i) + kEpsilon) stops[i] = true;
    // A group that no place it may use can take more from, even by moving
    // others' amounts elsewhere, cannot grow: its claimants stop here.
    for (std::size_t i = 0; i < count; ++i)
      if (active[i] && !routing.canGrow[groups.groupOf[i]]) stops[i] = true;
    bool stopped = false;
    for (std::size_t i = 0; i < count; ++i)
      if (stops[i]) {
        shares[i] = reached[i];
        active[i] = false;
        stopped = true;
      }
    if (!stopped) {
      // Rounding left no claimant to stop: the level is as high as it goes.
      shares = reached;
      break;
    }
  }
  return shares;
}

}  // namespace vcpufold::hostd
