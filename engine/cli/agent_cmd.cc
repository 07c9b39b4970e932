// `provisioner agent FILE` (engine/agent) and `provisioner status`: the
// agent's status file as a table or as documented JSON/YAML.
#include <iostream>
#include <string>

#include "engine/agent/agent.h"
#include "engine/agent/agent_status.h"
#include "engine/cli/commands.h"
#include "engine/host/host_fs.h"

namespace provisioner::cli {

int RunAgentCommand(const AgentCommandOptions& a, const CommonOptions& opt) {
  agent::AgentOptions o;
  o.file = opt.file;
  o.root = opt.root;
  o.debounce = std::chrono::milliseconds(static_cast<int64_t>(a.debounce_s * 1000));
  o.resync = std::chrono::milliseconds(static_cast<int64_t>(a.resync_s * 1000));
  o.settle_timeout = std::chrono::milliseconds(static_cast<int64_t>(opt.settle_timeout_s * 1000));
  o.metrics_address = a.metrics_address;
  o.metrics_address_given = a.metrics_address_given;
  return agent::RunAgent(o);
}

int RunStatus(const CommonOptions& opt) {
  auto fs = NewLocalHostFs(opt.root);
  auto text = fs->ReadFile(agent::kAgentStatusPath);
  if (!text.ok()) {
    std::cerr << "provisioner: no agent status under root " << opt.root << ": "
              << text.status().message() << " (is provisioner agent running?)\n";
    return kExitError;
  }
  const nlohmann::json doc = nlohmann::json::parse(*text, nullptr, false);
  if (!doc.is_object() || doc.value("kind", "") != agent::kAgentStatusKind) {
    std::cerr << "provisioner: " << fs->FsPath(agent::kAgentStatusPath)
              << ": not an agent status document\n";
    return kExitError;
  }
  if (opt.output == "table") {
    std::cout << agent::RenderStatusTable(doc);
  } else {
    PrintDocument(doc, opt.output);
  }
  return kExitOk;
}

}  // namespace provisioner::cli
