"""The two targets every module folder declares (docs/backends.md).

module_library: the module itself. alwayslink = 1 keeps its static
registration (REGISTER_MODULE in its .cc) through linking; it implements the
Module interface (//engine/module).
module_planner: the pure part, `:planner`: planning and checks from facts,
no host access; it speaks the model, plan changes and JSON.
"""

load("@rules_cc//cc:defs.bzl", "cc_library")

def module_library(name, deps = [], **kwargs):
    cc_library(
        name = name,
        alwayslink = 1,
        deps = deps + ["//engine/module"],
        **kwargs
    )

def module_planner(name = "planner", deps = [], **kwargs):
    cc_library(
        name = name,
        deps = deps + [
            "//engine/model",
            "//engine/plan:change",
            "//third_party:nlohmann_json",
        ],
        **kwargs
    )
