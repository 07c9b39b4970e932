// The JSON Schema of host.yaml (schemas/host.schema.json), compiled into the
// binary by a genrule so validation never reads it from disk at run time.
#ifndef PROVISIONER_SCHEMAS_HOST_SCHEMA_H_
#define PROVISIONER_SCHEMAS_HOST_SCHEMA_H_

#include <string_view>

namespace provisioner {

// The text of schemas/host.schema.json, byte for byte.
std::string_view HostSchemaJson();

}  // namespace provisioner

#endif  // PROVISIONER_SCHEMAS_HOST_SCHEMA_H_
