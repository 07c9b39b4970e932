"""The tests of test/fleet (BUILD.bazel): one macro for their shape."""

def fleet_test(name, size = "medium", **kwargs):
    """A shell test <name>.sh on :fleet_env (the real tools, the binary, the
    bundled trees); `data` is what it reads beyond that."""
    native.sh_test(
        name = name,
        size = size,
        srcs = [name + ".sh"],
        deps = [":fleet_env"],
        **kwargs
    )
