// A sequence diagram of a Timeline as a standalone SVG: one lane per party
// (client 1, lock service, client 2, gateway, plain SQLite), one row per
// step in order, with the elapsed time at the left. Calls are arrows from
// the caller's lane to the callee's, labelled with what was asked and the
// answer; refused calls are red and end in a cross, damage is magenta;
// notes sit on their lane; a frozen or cut-off client gets a shaded bar
// along its lane. Sections (the acts) get a title band.
//
// Thread safety: free functions.
#ifndef FENCEGATE_EXAMPLES_DEMO_SEQUENCE_SVG_H_
#define FENCEGATE_EXAMPLES_DEMO_SEQUENCE_SVG_H_

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "examples/demo/timeline.h"

namespace fencegate::demo {

std::string RenderSequenceSvg(const std::string& title,
                              const std::vector<Section>& sections,
                              const std::vector<Step>& steps);

// Writes `svg` to `path` through a temporary file and a rename, so a reader
// never sees half a diagram. Creates the parent directory if needed.
absl::Status WriteFileAtomically(const std::string& path, const std::string& svg);

}  // namespace fencegate::demo

#endif  // FENCEGATE_EXAMPLES_DEMO_SEQUENCE_SVG_H_
