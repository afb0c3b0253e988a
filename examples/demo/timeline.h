// Timeline: what happened in the demo, in order, on the demo's clock. Each
// step is printed as it is added, one line a person can follow (elapsed
// time, who, what, token, result), and kept for the sequence diagram
// (sequence_svg.h).
//
// Thread safety: thread-safe (client events arrive on reader threads).
#ifndef FENCEGATE_EXAMPLES_DEMO_TIMELINE_H_
#define FENCEGATE_EXAMPLES_DEMO_TIMELINE_H_

#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"

namespace fencegate::demo {

// The diagram's lanes, left to right.
enum class Lane { kClient1, kLockService, kClient2, kGateway, kPlainStore, kSqlTable };
inline constexpr int kLaneCount = 6;
const char* LaneName(Lane lane);

enum class Outcome {
  kOk,       // the call succeeded
  kRefused,  // the call was refused, as safety requires
  kNote,     // something that happened (a pause, an expiry)
  kDamage,   // harm done: a stale write that got through
};

// Marks the start or end of a period drawn along a lane.
enum class Span { kNone, kFrozenBegin, kFrozenEnd, kCutOffBegin, kCutOffEnd };

struct Step {
  absl::Duration at;  // since the demo started; set by Add()
  Lane actor = Lane::kClient1;
  Lane target = Lane::kClient1;  // == actor: a note on the actor's lane
  std::string action;            // "write counter = 1"
  uint64_t token = 0;            // the token involved; 0: none
  std::string result;            // "REFUSED: stale token, gateway has seen 8"
  Outcome outcome = Outcome::kOk;
  std::string label;  // short text for the diagram
  Span span = Span::kNone;
};

struct Section {
  std::string title;     // "Act 1: GC pause, with fencing"
  std::string subtitle;  // one sentence on what is going to happen
  size_t first_step = 0;
};

class Timeline {
 public:
  // Prints to `out` (not owned); `color` adds ANSI colors.
  Timeline(std::ostream* out, bool color);

  absl::Duration Elapsed() const { return absl::Now() - start_; }

  void BeginSection(std::string title, std::string subtitle);
  // Stamps the step with Elapsed(), prints it and keeps it.
  void Add(Step step);
  // A note on `lane`.
  void Note(Lane lane, std::string text, std::string label,
            Outcome outcome = Outcome::kNote, Span span = Span::kNone);
  // A line of commentary: printed, not drawn.
  void Say(const std::string& text);

  std::vector<Step> steps() const;
  std::vector<Section> sections() const;

 private:
  void Print(const Step& step) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  std::string Paint(const std::string& text, Outcome outcome) const;

  std::ostream* const out_;
  const bool color_;
  const absl::Time start_;
  mutable absl::Mutex mu_;
  std::vector<Step> steps_ ABSL_GUARDED_BY(mu_);
  std::vector<Section> sections_ ABSL_GUARDED_BY(mu_);
};

}  // namespace fencegate::demo

#endif  // FENCEGATE_EXAMPLES_DEMO_TIMELINE_H_
