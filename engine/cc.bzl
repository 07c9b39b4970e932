"""The C++ target shapes most BUILD files of the tree repeat, said once.

unit_library: one concept in one header and one source named after the
target (`x.h` + `x.cc` for target `x`).
header_library: one concept in one header (`x.h`), nothing to compile.
unit_test: one gtest file named after the target (`x_test.cc` for target
`x_test`), linked with gtest's main.
with_test = True on a unit_library or header_library `x`: also its
unit_test `x_test`, when that needs nothing but `x`.

Every other attribute (data, size, linkopts, testonly, visibility, ...) is
passed through unchanged, so a target reads as what is special about it.

cc_binary, cc_library and cc_test are rules_cc's, passed on, so that a BUILD
file loads its C++ rules from this one file, with two additions: each depends
on //engine:sanitizer_ignorelist, the file --config=san-clang names with
-fsanitize-ignorelist (a compile sees only its inputs in its sandbox), and
under that config and --config=fuzz each compiles with a precompiled header
of the system headers most files include (//third_party/pch: test.inc for
tests and testonly targets, library.inc for the rest).
"""

load(
    "@rules_cc//cc:defs.bzl",
    _cc_binary = "cc_binary",
    _cc_library = "cc_library",
    _cc_test = "cc_test",
)

_IGNORELIST = "//engine:sanitizer_ignorelist"

_PCH_ENABLED = "//third_party/pch:enabled"

def _with_common_deps(kwargs, test):
    pch = "test" if test or kwargs.get("testonly") else "library"
    kwargs["deps"] = kwargs.get("deps", []) + [_IGNORELIST] + select({
        _PCH_ENABLED: ["//third_party/pch:" + pch],
        "//conditions:default": [],
    })
    kwargs["copts"] = kwargs.get("copts", []) + select({
        _PCH_ENABLED: ["-include-pch", "$(GENDIR)/third_party/pch/%s.inc" % pch],
        "//conditions:default": [],
    })
    return kwargs

def cc_binary(**kwargs):
    _cc_binary(**_with_common_deps(kwargs, test = False))

def cc_library(**kwargs):
    _cc_library(**_with_common_deps(kwargs, test = False))

def cc_test(**kwargs):
    _cc_test(**_with_common_deps(kwargs, test = True))

def unit_library(name, with_test = False, **kwargs):
    cc_library(
        name = name,
        srcs = [name + ".cc"],
        hdrs = [name + ".h"],
        **kwargs
    )
    if with_test:
        unit_test(name = name + "_test", deps = [":" + name])

def header_library(name, with_test = False, **kwargs):
    cc_library(
        name = name,
        hdrs = [name + ".h"],
        **kwargs
    )
    if with_test:
        unit_test(name = name + "_test", deps = [":" + name])

def unit_test(name, deps = [], **kwargs):
    cc_test(
        name = name,
        srcs = [name + ".cc"],
        deps = deps + ["//third_party:gtest_main"],
        **kwargs
    )
