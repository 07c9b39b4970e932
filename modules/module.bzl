"""The two targets every module folder declares (docs/backends.md).

module_library: the module itself. alwayslink = 1 keeps its static
registration (REGISTER_MODULE in its .cc) through linking; it implements the
Module interface (//engine/module).
module_planner: the pure part, `:planner`: planning and checks from facts,
no host access; it speaks the model, plan changes and JSON.
ON_SIM_DEPS: what a module's end-to-end test on the kernel simulator links
(//test/sim:engine_on_sim's fixture on a preset host tree, pci to discover
its functions).
read_once_test: a test that a discovery with every module reads a file once
(issue 25 item 12) on the example trees, counting the reads.

The C++ rules and unit shapes of //engine:cc.bzl are passed on, so that a
module's BUILD file loads this one file.
"""

load(
    "//engine:cc.bzl",
    _cc_library = "cc_library",
    _header_library = "header_library",
    _unit_library = "unit_library",
    _unit_test = "unit_test",
)

cc_library = _cc_library
header_library = _header_library
unit_library = _unit_library
unit_test = _unit_test

def module_library(name, deps = [], **kwargs):
    _cc_library(
        name = name,
        alwayslink = 1,
        deps = deps + ["//engine/module"],
        **kwargs
    )

def module_planner(name = "planner", deps = [], **kwargs):
    _cc_library(
        name = name,
        deps = deps + [
            "//engine/model",
            "//engine/plan:change",
            "//third_party:nlohmann_json",
        ],
        **kwargs
    )

ON_SIM_DEPS = [
    "//engine/host:host_fs",
    "//modules/pci",
    "//test/sim:engine_on_sim",
    "//test/sim:sim_host_fs",
    "//test/support:host_presets",
    "//test/support:host_tree",
    "//test/support:ttar",
]

def read_once_test(name):
    _unit_test(
        name = name,
        data = ["//examples/hosts:trees"],
        deps = [
            "//engine/core:engine",
            "//engine/host:forwarding_host_fs",
            "//engine/host:host_fs",
            "//engine/module",
            "//modules:all",
            "//test/support:discover_every_module",
            "//test/support:files",
            "//test/support:read_counting_fs",
        ],
    )
