"""The tests of test/integration (BUILD.bazel): one macro for their shape."""

load("@rules_cc//cc:defs.bzl", "cc_test")

# What every CLI test has: the binary, the host trees and the kernel
# simulator to run it on, the harness and the test support it exposes.
_CLI_DATA = [
    "//engine/cli:provisioner",
    "//test/hosts:trees",
    "//test/sim:kernel_sim",
]
_CLI_DEPS = [
    ":harness",
    "//test/support:files",
    "//test/support:host_presets",
    "//test/support:host_tree",
    "//test/support:host_yaml",
    "//test/support:ttar",
    "//third_party:gtest_main",
    "//third_party:nlohmann_json",
]

def integration_test(name, size = "medium", srcs = None, cli = True, data = [], deps = [], **kwargs):
    """A gtest of <name>.cc (or `srcs`).

    With `cli` (the default) it runs the real binary through :harness on
    the host trees, with the kernel simulator (_CLI_DATA, _CLI_DEPS); `cli =
    False` for the in-process
    tests (the session API, the fault matrix). `data` and `deps` are what the
    test needs beyond that.
    """
    base_data = _CLI_DATA if cli else []
    base_deps = _CLI_DEPS if cli else ["//third_party:gtest_main"]
    cc_test(
        name = name,
        size = size,
        srcs = srcs if srcs != None else [name + ".cc"],
        data = base_data + [d for d in data if d not in base_data],
        deps = base_deps + [d for d in deps if d not in base_deps],
        **kwargs
    )
