"""The two targets every module folder declares (docs/backends.md).

module_library: the module itself. alwayslink = 1 keeps its static
registration (REGISTER_MODULE in its .cc) through linking; it implements the
Module interface (//engine/module).
module_planner: the pure part, `:planner`: planning and checks from facts,
no host access; it speaks the model, plan changes and JSON.

The C++ rules and unit shapes of //engine:cc.bzl are passed on, so that a
module's BUILD file loads this one file.
"""

load(
    "//engine:cc.bzl",
    _cc_library = "cc_library",
    _unit_library = "unit_library",
    _unit_test = "unit_test",
)

cc_library = _cc_library
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
