// The one place the agent tells a tree root from the live host.
#include "engine/agent/event_source.h"

namespace provisioner::agent {

StatusOr<std::unique_ptr<EventSource>> NewEventSource(HostFs& fs) {
  if (fs.IsLiveRoot()) return NewLiveEventSource();
  return NewTreeEventSource(fs);
}

}  // namespace provisioner::agent
