"""The tests of test/integration (BUILD.bazel): one macro for their shape."""

load("@rules_cc//cc:defs.bzl", "cc_test")

_CLI_DATA = ["//engine/cli:provisioner"]
_CLI_DEPS = [":harness", "//third_party:gtest_main"]

def integration_test(name, size = "medium", srcs = None, cli = True, data = [], deps = [], **kwargs):
    """A gtest of <name>.cc (or `srcs`).

    With `cli` (the default) it runs the real binary through :harness, so
    //engine/cli:provisioner is in its data; `cli = False` for the in-process
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
