#pragma once
// Every exported function calls the core inside guarded(), which catches every
// C++ exception and returns {__attnError: {errorType, errorMessage, errorCode}}
// instead (errorCode: attn::Error::Code's name, "internal" for anything else).
// web/engine.js turns that record into a real JS error (RangeError / TypeError
// with the C++ message). The error is raised in JS, not thrown through the
// wasm frames, because a JS exception unwinding wasm frames skips their
// destructors: every argument string would leak.

#include "base/types.hpp"

#include <emscripten/val.h>

#include <exception>
#include <new>
#include <string>

namespace attn::js {

template <typename F>
emscripten::val guarded(F&& body) {
    // Every C++ object, the exception included, is destroyed before this
    // returns; the caller sees either the result or the error record.
    const char* type = "RangeError";
    Error::Code code = Error::Code::internal;
    std::string message;
    try {
        return body();
    } catch (const Error& e) {
        message = e.what();
        code = e.code();
        if (e.kind() == Error::Kind::type) type = "TypeError";
    } catch (const std::bad_alloc&) {
        message = "out of memory: the requested sizes are too large for this page";
        code = Error::Code::out_of_memory;
    } catch (const std::exception& e) {
        message = std::string("internal error: ") + e.what();
        type = "Error";
    }
    emscripten::val failure = emscripten::val::object();
    failure.set("errorType", std::string(type));
    failure.set("errorMessage", message);
    failure.set("errorCode", std::string(error_code_name(code)));
    emscripten::val out = emscripten::val::object();
    out.set("__attnError", failure);
    return out;
}

}  // namespace attn::js
