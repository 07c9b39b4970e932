// The portable build's spdlog and fmt implementation, compiled once.
//
// Debian ships neither as a static archive, and the portable binary cannot
// take their shared libraries (no stable soname across distributions:
// third_party/BUILD.bazel). Header-only mode would compile both whole
// implementations (their -inl.h headers) into every file that logs: 27 files,
// about 3 s more each at -O2. Instead every file sees the headers as the
// compiled libraries' users do (SPDLOG_COMPILED_LIB, no FMT_HEADER_ONLY) and
// this one file holds the implementation: what Debian's libspdlog.so.1 and
// libfmt.so.9 hold for the parts we use (checked against the upstream sources
// of the Debian versions: spdlog v1.10.0 src/spdlog.cpp, src/color_sinks.cpp,
// src/stdout_sinks.cpp, src/async.cpp; fmt 9.1.0 src/format.cc). Compiled only
// with --define=portable=1.
#ifndef SPDLOG_COMPILED_LIB
#error "third_party/spdlog_fmt_portable.cc needs SPDLOG_COMPILED_LIB"
#endif
#ifdef FMT_HEADER_ONLY
#error "third_party/spdlog_fmt_portable.cc is for the non-header-only fmt"
#endif

#include <mutex>
#include <string>

// fmt: the out-of-line functions and the instantiations format.h declares
// extern for char.
#include "fmt/format-inl.h"

FMT_BEGIN_NAMESPACE
namespace detail {
template FMT_API auto dragonbox::to_decimal(float x) noexcept -> dragonbox::decimal_fp<float>;
template FMT_API auto dragonbox::to_decimal(double x) noexcept -> dragonbox::decimal_fp<double>;
template FMT_API locale_ref::locale_ref(const std::locale& loc);
template FMT_API auto locale_ref::get<std::locale>() const -> std::locale;
template FMT_API auto thousands_sep_impl(locale_ref) -> thousands_sep_result<char>;
template FMT_API auto decimal_point_impl(locale_ref) -> char;
template FMT_API void buffer<char>::append(const char*, const char*);
template FMT_API void vformat_to(buffer<char>&, string_view,
                                 basic_format_args<FMT_BUFFER_CONTEXT(char)>, locale_ref);
}  // namespace detail
FMT_END_NAMESPACE

// spdlog: the logger, registry, formatter and the sinks engine/cli/main.cc
// makes (stderr, colored or not), plus the colored stdout sink the registry
// makes as its default logger, and the periodic flusher it owns.
#include "spdlog/spdlog-inl.h"
#include "spdlog/common-inl.h"
#include "spdlog/details/backtracer-inl.h"
#include "spdlog/details/registry-inl.h"
#include "spdlog/details/os-inl.h"
#include "spdlog/details/periodic_worker-inl.h"
#include "spdlog/pattern_formatter-inl.h"
#include "spdlog/details/log_msg-inl.h"
#include "spdlog/details/log_msg_buffer-inl.h"
#include "spdlog/logger-inl.h"
#include "spdlog/sinks/sink-inl.h"
#include "spdlog/sinks/base_sink-inl.h"
#include "spdlog/sinks/ansicolor_sink-inl.h"
#include "spdlog/sinks/stdout_sinks-inl.h"
#include "spdlog/details/null_mutex.h"

template class spdlog::sinks::base_sink<std::mutex>;
template class spdlog::sinks::base_sink<spdlog::details::null_mutex>;
template class spdlog::sinks::ansicolor_sink<spdlog::details::console_mutex>;
template class spdlog::sinks::ansicolor_stdout_sink<spdlog::details::console_mutex>;
template class spdlog::sinks::ansicolor_stderr_sink<spdlog::details::console_mutex>;
template class spdlog::sinks::stdout_sink_base<spdlog::details::console_mutex>;
template class spdlog::sinks::stderr_sink<spdlog::details::console_mutex>;
