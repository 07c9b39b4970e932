"""precompiled_header: a clang precompiled header, built with exactly the
flags of the configuration's C++ compiles (the toolchain's features, --copt,
--cxxopt, PIC), so that `-include-pch` accepts it in every compile of that
configuration. engine/cc.bzl passes one to every C++ target under
--config=san-clang and --config=fuzz (//third_party/pch:enabled); BUILD.bazel
here says why and what they hold.

The output (NAME.inc) is a header of the compilation context the rule
provides, so it is a declared input of every dependent compile and is in its
sandbox. clang reads a PCH by its content, not its name.
"""

load("@bazel_tools//tools/cpp:toolchain_utils.bzl", "find_cpp_toolchain")

def _precompiled_header_impl(ctx):
    cc_toolchain = find_cpp_toolchain(ctx)
    if cc_toolchain.compiler != "clang":
        fail("--define=pch=clang (--config=san-clang, --config=fuzz) needs clang: " +
             "run Bazel with CC=clang-14 (Bazel's C++ toolchain here says its compiler is '%s')" % cc_toolchain.compiler)
    features = cc_common.configure_features(
        ctx = ctx,
        cc_toolchain = cc_toolchain,
        requested_features = ctx.features,
        unsupported_features = ctx.disabled_features,
    )
    out = ctx.actions.declare_file(ctx.label.name + ".inc")
    variables = cc_common.create_compile_variables(
        cc_toolchain = cc_toolchain,
        feature_configuration = features,
        # From stdin: clang records the path of each input in the PCH, to
        # check it when a compile loads it, and a compile's dependency file
        # then lists it. A path in this action's sandbox would exist in no
        # other, and Bazel takes any path outside the system's include
        # directories for an undeclared header. From stdin, the only inputs
        # recorded are system headers (so the headers include only those,
        # and one header builds on another by being read after it).
        source_file = "-",
        output_file = out.path,
        user_compile_flags = ctx.fragments.cpp.copts + ctx.fragments.cpp.cxxopts + [
            "-x",
            "c++-header",
            # Template instantiations the headers need (json.hpp's _json
            # literal instantiates the whole parser) done once, here.
            "-fpch-instantiate-templates",
            # Not -fpch-codegen (their code compiled once, into an object
            # every binary links): it saves ~0.4 s more per test file, but
            # the object then holds every inline function of the headers,
            # and some call what libstdc++.so does not export
            # (std::filesystem::path::_List::type): links fail.
            # No modification times in the PCH: a disk cache hit in another
            # clone, whose files are newer, must still load.
            "-Xclang",
            "-fno-pch-timestamp",
        ],
        use_pic = True,
    )
    action = "c++-compile"
    ctx.actions.run_shell(
        command = "set -o pipefail; cat %s | \"$@\"" % " ".join([h.path for h in ctx.files.hdrs]),
        arguments = [cc_common.get_tool_for_action(feature_configuration = features, action_name = action)] +
                    cc_common.get_memory_inefficient_command_line(
                        feature_configuration = features,
                        action_name = action,
                        variables = variables,
                    ),
        env = cc_common.get_environment_variables(
            feature_configuration = features,
            action_name = action,
            variables = variables,
        ),
        inputs = depset(ctx.files.hdrs + ctx.files.data, transitive = [cc_toolchain.all_files]),
        outputs = [out],
        mnemonic = "CppPrecompiledHeader",
        progress_message = "Precompiling %s" % ctx.files.hdrs[-1].short_path,
    )
    return [
        DefaultInfo(files = depset([out])),
        CcInfo(compilation_context = cc_common.create_compilation_context(headers = depset([out]))),
    ]

precompiled_header = rule(
    implementation = _precompiled_header_impl,
    attrs = {
        # Read one after the other, as one header.
        "hdrs": attr.label_list(allow_files = [".h"], mandatory = True),
        # Files the configuration's flags name (the sanitizers' ignore list).
        "data": attr.label_list(allow_files = True),
        "_cc_toolchain": attr.label(default = "@bazel_tools//tools/cpp:current_cc_toolchain"),
    },
    fragments = ["cpp"],
    toolchains = ["@bazel_tools//tools/cpp:toolchain_type"],
    incompatible_use_toolchain_transition = True,
)
