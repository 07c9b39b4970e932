"""One fuzz target and its corpus test (test/fuzz/BUILD.bazel)."""

load("//engine:cc.bzl", "cc_binary", "cc_test")

def fuzz_target(name, deps):
    """`<name>_fuzzer` (libFuzzer, clang only, manual) and `<name>_corpus_test`.

    The fuzzer is <name>_fuzz.cc; the test links the same file with
    corpus_main.cc and runs every input of corpus/<name>/ once (scripts/test.sh
    finds the fuzzers by their `_fuzzer` suffix and seeds each with
    corpus/<name>).
    """
    cc_binary(
        name = name + "_fuzzer",
        srcs = [name + "_fuzz.cc"],
        tags = ["manual"],
        deps = deps,
    )
    cc_test(
        name = name + "_corpus_test",
        srcs = [
            "corpus_main.cc",
            name + "_fuzz.cc",
        ],
        args = ["test/fuzz/corpus/" + name],
        data = native.glob(["corpus/" + name + "/*"]),
        deps = deps,
    )
