// InfiniBand P_Keys as host.yaml may spell them (multusConfigs[].pkey,
// nics[].ipoib.pkeys[]). P_Keys are hexadecimal in every tool that takes one
// (ib-kubernetes parses the digits after "0x" base 16, UFM and opensm's
// partitions.conf write them in hex, sysfs shows "0x8001"), and the
// Spiderpool AI guide writes `pkey: 1000` for partition 0x1000. So:
//   "0x1000", "0X1000", "0x01000", "1000" and the YAML integer 1000 (by its
//   source text) all mean 0x1000; the output always carries "0x1000".
// ib-kubernetes (pkg/utils ParsePKey) refuses a P_Key without "0x", and its
// UFM plugin one above 0x7fff (it adds the pod's GUID as a full member
// itself); the manifests therefore write the normalized form.
#ifndef PROVISIONER_ENGINE_CONFIG_PKEY_H_
#define PROVISIONER_ENGINE_CONFIG_PKEY_H_

#include <optional>
#include <string_view>

#include "engine/config/yaml_document.h"

namespace provisioner::config {

// Optional "0x"/"0X", then hex digits (leading zeros allowed), at most
// 0xffff; nullopt otherwise.
std::optional<int> ParsePkeySpelling(std::string_view text);

// The P_Key fields of `doc` that YAML typed as integers (`pkey: 1000`,
// `pkey: 0x1000` unquoted) become strings of their source text, so that they
// are read as hex like the quoted spellings; so does an unquoted
// spec.kubernetes.spiderpool.version (0.9, 1.10: releases, not numbers).
void PkeyScalarsAsText(YamlDocument* doc);

}  // namespace provisioner::config

#endif  // PROVISIONER_ENGINE_CONFIG_PKEY_H_
