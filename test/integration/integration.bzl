"""The tests of test/integration (BUILD.bazel): one macro for their shape."""

load("//engine:cc.bzl", "cc_test")

# The test support a CLI test (and :harness, which runs the binary) builds
# on: host trees written and read, host.yaml texts, JSON output.
SUPPORT_DEPS = [
    "//test/support:files",
    "//test/support:host_presets",
    "//test/support:host_tree",
    "//test/support:host_yaml",
    "//test/support:ttar",
    "//third_party:nlohmann_json",
]

# An in-process apply of a host.yaml with every module over the simulated
# kernel (the in-process tests here, //bench:parallel_apply).
APPLY_ON_SIM_DEPS = [
    "//engine/config:loader",
    "//engine/core:engine",
    "//engine/module",
    "//modules:all",
    "//test/sim:sim_host_fs",
]

def integration_test(
        name,
        size = "medium",
        srcs = None,
        cli = True,
        sim = True,
        support = True,
        data = [],
        deps = [],
        **kwargs):
    """A gtest of <name>.cc (or `srcs`).

    With `cli` (the default) it runs the real binary through :harness on the
    host trees; with `sim` (the default) the kernel simulator's daemon is
    there too, and with `support` (the default) the test support of
    SUPPORT_DEPS. `cli = False` for the in-process tests (the session API,
    the fault matrix): gtest alone. `data` and `deps` are what the test needs
    beyond that.
    """
    base_data, base_deps = [], ["//third_party:gtest_main"]
    if cli:
        base_data = ["//engine/cli:provisioner", "//test/hosts:trees"]
        base_deps = [":harness", "//test/support:ttar"] + base_deps
        if sim:
            base_data = base_data + ["//test/sim:kernel_sim"]
        if support:
            base_deps = base_deps + [d for d in SUPPORT_DEPS if d not in base_deps]
    cc_test(
        name = name,
        size = size,
        srcs = srcs if srcs != None else [name + ".cc"],
        data = base_data + [d for d in data if d not in base_data],
        deps = base_deps + [d for d in deps if d not in base_deps],
        **kwargs
    )
